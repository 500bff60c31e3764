package simulate

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

// ReplayOptions are one `dupctl simulate replay` run.
type ReplayOptions struct {
	Factory  *cmdutil.Factory
	Schedule sim.Schedule
	Token    string
}

// NewCmdReplay is `dupctl simulate replay TOKEN`.
func NewCmdReplay(f *cmdutil.Factory, runF func(*ReplayOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "replay TOKEN",
		Short: "Replay a failing schedule, bit for bit, from its token",
		Long: `Replay re-runs the schedule a replay token describes (simulator version,
scenario, profile, scope, seed and every scheduling choice) and prints its
timeline, then replays the same schedule under every profile.` + exitStatus,
		Example: `  dupctl simulate replay dsim1_ZHNpbTF8Y3Jhc2h8...`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := sim.ParseToken(args[0])
			if err != nil {
				return exitcode.InputError(err, "")
			}
			opts := &ReplayOptions{Factory: f, Schedule: r, Token: args[0]}
			if runF != nil {
				return runF(opts)
			}
			return runReplay(cmd.Context(), opts)
		},
	}
}

func runReplay(ctx context.Context, o *ReplayOptions) error {
	r, err := sim.Replay(ctx, sim.ReplayOptions{Schedule: o.Schedule})
	if err != nil {
		return exitcode.InputError(err, "use the dupctl version that printed it")
	}
	title := fmt.Sprintf("%s under %s: %s", r.Scenario.Name, r.Schedule.Config.Profile.Name, sim.OutcomeOf(r.Found))
	return o.Factory.Emit(ctx, report.Document{Report: r.Report(),
		Text: func(w io.Writer, th *report.Theme) error { return writeReplay(w, th, r) },
		Markdown: func(w io.Writer) error {
			writeScheduleMarkdown(w, title, &r.Timeline)
			return nil
		},
		HTML: func(w io.Writer) error {
			if err := writeTimelineHTML(w, &r.Timeline, "replay of "+title, r.Scenario.Cause); err != nil {
				return err
			}
			writeCounterfactualsHTML(w, r.Counterfactual)
			return nil
		},
	})
}
