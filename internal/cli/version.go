package cli

import (
	"encoding/json"
	"fmt"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/buildinfo"

	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// NewCmdVersion prints the build's identity.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit, build date and Go version",
		Example: `  dupctl version
  dupctl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := f.BuildInfo()
			if f.Global.Output == report.FormatJUnit {
				return exitcode.UsageErrorf("version writes -o table or -o json: it checks nothing, so it has no JUnit form")
			}
			if f.Global.Output == report.FormatJSON {
				enc := json.NewEncoder(f.IO.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			_, err := fmt.Fprintf(f.IO.Out, "dupctl %s\ncommit:  %s\nbuilt:   %s\ngo:      %s %s\n",
				info.Version, commitLine(info), info.Date, info.GoVersion, info.Platform)
			return err
		},
	}
}

// commitLine says what the commit is, whether the tree was modified, and
// why a build that does not know it does not.
func commitLine(info buildinfo.Info) string {
	switch {
	case !info.Recorded():
		return info.Commit + " (not recorded: built by go run, outside a git checkout, or with -buildvcs=false; " +
			"go build -buildvcs=true records it)"
	case info.Modified:
		return info.Commit + " (modified: built with uncommitted changes)"
	}
	return info.Commit
}
