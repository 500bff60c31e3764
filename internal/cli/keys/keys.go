// Package keys holds the `dupctl keys` commands.
package keys

import (
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewCmdKeys is `dupctl keys`: a group, one file per verb.
func NewCmdKeys(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys <command>",
		Short: "Check idempotency keys: stable across retries, unique per operation",
		RunE:  cmdutil.GroupRunE,
	}
	cmd.AddCommand(NewCmdUnstable(f, nil))
	return cmd
}
