// Package audit holds the `dupctl audit` commands.
package audit

import (
	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
)

// NewCmdAudit is `dupctl audit`: a group, one file per verb.
func NewCmdAudit(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit <command>",
		Short: "Find side effects that already ran twice, and why",
		RunE:  cmdutil.GroupRunE,
	}
	cmd.AddCommand(NewCmdLogs(f, nil), NewCmdCache(f, nil))
	return cmd
}
