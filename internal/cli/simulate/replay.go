package simulate

import (
	"context"
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/spf13/cobra"
)

// ReplayOptions are one `dupctl simulate replay` run.
type ReplayOptions struct {
	Factory *cmdutil.Factory
	Replay  sim.Replay
	Token   string
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
			opts := &ReplayOptions{Factory: f, Replay: r, Token: args[0]}
			if runF != nil {
				return runF(opts)
			}
			return runReplay(cmd.Context(), opts)
		},
	}
}

func runReplay(ctx context.Context, o *ReplayOptions) error {
	tl, stats, found, ok := sim.Record(o.Replay)
	if !ok {
		return exitcode.InputError(fmt.Errorf("replay token does not fit this simulator: its schedule diverged at step %d", len(tl.Events)), "use the dupctl version that printed it")
	}
	sc, _ := sim.ScenarioByName(o.Replay.Scenario)
	p := o.Replay.Config.Profile
	cfs := sim.Counterfactuals(o.Replay)
	rep := &findings.Report{Command: "simulate replay"}
	rep.Check(sim.RuleDuplicate.Code, sim.RuleLoss.Code, sim.RuleNonOwnerUnlock.Code, sim.RuleLivelock.Code)
	subject := sc.Name + "/" + p.Name
	ev := keyEvents(&tl)
	for _, x := range []struct {
		v    sim.Violation
		rule findings.Rule
	}{{sim.VDuplicate, sim.RuleDuplicate}, {sim.VLoss, sim.RuleLoss}, {sim.VNonOwnerUnlock, sim.RuleNonOwnerUnlock}, {sim.VLivelock, sim.RuleLivelock}} {
		if found.Has(x.v) {
			rep.Add(x.rule.New(subject, fmt.Sprintf("profile %s: %s in this schedule", p.Name, violationText(x.v)), ev...))
		}
	}
	var cfJSON []counterfactualJSON
	for _, cf := range cfs {
		cfJSON = append(cfJSON, counterfactualJSON{Profile: cf.Profile.Name, Outcome: sim.OutcomeOf(cf.Found).String(), Violations: cf.Found.String(), Stats: cf.Stats})
	}
	rep.Data = map[string]any{
		"scenario": sc.Name, "profile": p.Name, "switches": p.Describe(), "scope": scopeOf(&o.Replay.Config), "seed": o.Replay.Seed,
		"outcome": sim.OutcomeOf(found).String(), "violations": found.String(), "stats": stats, "timeline": tl, "counterfactual": cfJSON,
	}
	return o.Factory.Emit(ctx, report.Document{Report: rep, Text: func(w io.Writer, th *report.Theme) error {
		fmt.Fprintf(w, "%s %s under %s: %s\n", th.Strong("replay "+sc.Name+":"), sc.Title, p.Name, outcomeText(th, found))
		fmt.Fprintf(w, "Scope: %s\n\n", scopeText(&o.Replay.Config))
		if err := writeTimeline(w, th, &tl); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s\n", th.Strong("The same schedule under every profile:"))
		t := report.NewTable("PROFILE", "OUTCOME", "EFFECTS", "CAUGHT", "FENCED", "LOCK EXPIRIES", "DLQ")
		for _, cf := range cfs {
			t.Row(cf.Profile.Name, outcomeText(th, cf.Found), fmt.Sprint(cf.Stats.Effects), fmt.Sprint(cf.Stats.Caught),
				fmt.Sprint(cf.Stats.Fenced), fmt.Sprint(cf.Stats.LockExpiries), fmt.Sprint(cf.Stats.DeadLettered))
		}
		return t.Render(w)
	}})
}
