// Package audit holds the `dupctl audit` commands: compare what the
// systems say against each other to find where duplicates come from.
package audit

import (
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewCmdAudit is `dupctl audit`.
func NewCmdAudit(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit <source>",
		Short: "Audit logs and caches for the causes of duplicate side effects",
		RunE:  cmdutil.GroupRunE,
	}
	cmd.AddCommand(NewCmdCache(f, nil))
	return cmd
}
