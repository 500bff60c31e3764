// Package inspect holds the `dupctl inspect` commands: read-only looks at
// locks, lock TTLs and idempotency stores.
package inspect

import (
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewCmdInspect is `dupctl inspect`.
func NewCmdInspect(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect <command>",
		Short: "Read-only inspections of locks, lock TTLs and idempotency stores",
		RunE:  cmdutil.GroupRunE,
	}
	cmd.AddCommand(NewCmdTTL(f, nil))
	return cmd
}
