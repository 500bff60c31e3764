// Package inspect holds the `dupctl inspect` commands: read-only looks at
// the live systems that decide whether a job runs twice. One file per verb.
package inspect

import (
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewCmdInspect is `dupctl inspect`, the group of read-only inspections.
func NewCmdInspect(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect <target>",
		Short: "Inspect live locks, lock TTLs and idempotency stores, read-only",
		RunE:  cmdutil.GroupRunE,
	}
	cmd.AddCommand(NewCmdLock(f, nil), NewCmdTTL(f, nil), NewCmdStore(f, nil))
	return cmd
}

var exitStatus = cmdutil.ExitStatus(map[int]string{3: "a system could not be reached, refused a command, or failed"})
