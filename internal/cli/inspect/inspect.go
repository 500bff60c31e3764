// Package inspect holds the `dupctl inspect` commands: read-only looks at
// the systems a duplicate goes through.
package inspect

import (
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewCmdInspect is `dupctl inspect`.
func NewCmdInspect(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect <target>",
		Short: "Look at locks, TTLs and idempotency tables, read-only",
		RunE:  cmdutil.GroupRunE,
	}
	cmd.AddCommand(NewCmdStore(f, nil))
	return cmd
}
