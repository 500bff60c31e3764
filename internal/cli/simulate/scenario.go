package simulate

import (
	"context"
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/english"
	"io"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/spf13/cobra"
)

// ScenarioOptions are one `dupctl simulate <scenario>` run.
type ScenarioOptions struct {
	Factory  *cmdutil.Factory
	Scenario *sim.Scenario
	Sim      sim.Options
	Demo     bool // no profile chosen: the faulty and safe pair
	Live     LiveOptions
}

func newCmdScenario(f *cmdutil.Factory, sc *sim.Scenario, runF func(*ScenarioOptions) error) *cobra.Command {
	var sys systemFlags
	var seed uint64
	var runs, maxStates int
	var explore, shard string
	var lv LiveOptions
	var wk workerFlags
	cmd := &cobra.Command{
		Use:   sc.Name,
		Short: sc.Title,
		Long: fmt.Sprintf(`%s.

%s

Without flags: the %s profile shows the duplicate, the %s profile prevents
it; both are explored exhaustively in a small scope (every interleaving and
fault placement), and the shortest failing schedule is shown as a timeline.`, upperFirst(sc.Title), sc.Cause, sc.Faulty, sc.Safe) + exitStatus,
		Example: fmt.Sprintf(`  dupctl simulate %[1]s
  dupctl simulate %[1]s --profile all
  dupctl simulate %[1]s --explore random --runs 100000 --seed 7
  dupctl simulate %[1]s -o json`, sc.Name),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("worker") {
				return wk.runWorker(cmd, f, sc)
			}
			profiles, err := sys.profiles(sc)
			if err != nil {
				return err
			}
			tune, err := sys.tune(sc)
			if err != nil {
				return err
			}
			sh, err := parseShard(shard)
			if err != nil {
				return err
			}
			if explore != sim.ExploreExhaustive && explore != sim.ExploreRandom {
				return exitcode.UsageErrorf("--explore %q: want exhaustive or random", explore)
			}
			if runs < 1 || maxStates < 1 {
				return exitcode.UsageErrorf("--runs and --max-states must be positive")
			}
			if lv.Enabled && lv.Scale < time.Millisecond {
				return exitcode.UsageErrorf("--time-scale must be at least 1ms, got %s", lv.Scale)
			}
			opts := &ScenarioOptions{Factory: f, Scenario: sc, Demo: len(profiles) == 0, Live: lv, Sim: sim.Options{
				Scenario: sc, Profiles: profiles, Tune: tune, Explore: explore,
				Seed: seed, Runs: runs, MaxStates: maxStates, Shard: sh,
			}}
			if runF != nil {
				return runF(opts)
			}
			if lv.Enabled {
				return runLive(cmd.Context(), opts)
			}
			return runScenario(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	sys.register(fs, sc.Name == "crash")
	fs.StringVar(&explore, "explore", sim.ExploreExhaustive, "exhaustive (every schedule of the scope) or random (seeded schedules)")
	fs.Uint64Var(&seed, "seed", 1, "seed of random exploration")
	fs.IntVar(&runs, "runs", 100_000, "schedules to run with --explore random")
	fs.IntVar(&maxStates, "max-states", 5_000_000, "stop exhaustive exploration after this many states")
	fs.StringVar(&shard, "shard", "", "explore only part k of n (k/n), to split the work across CI jobs")
	fs.BoolVar(&lv.Enabled, "live", false, "play the scenario's fault plan on the real Redis, PostgreSQL and RabbitMQ (--redis-url, --database-url, --amqp-url) and compare with the simulator")
	fs.BoolVar(&lv.AllowRemote, "allow-remote", false, "with --live: allow servers that are not on loopback (a live run creates and removes queues, a schema and keys)")
	fs.DurationVar(&lv.Scale, "time-scale", 20*time.Millisecond, "with --live: real time one virtual second takes")
	wk.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("profile", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append(worker.ProfileNames(), "all"), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func runScenario(ctx context.Context, o *ScenarioOptions) error {
	o.Sim.Progress = o.Factory.IO.StartProgress("simulate "+o.Scenario.Name, "states")
	res, err := sim.Run(ctx, o.Sim)
	if err != nil {
		return err
	}
	rep := &findings.Report{Command: "simulate " + o.Scenario.Name, Data: scenarioData(res)}
	rep.Check(sim.RuleDuplicate.Code, sim.RuleLoss.Code, sim.RuleNonOwnerUnlock.Code, sim.RuleLivelock.Code, sim.RuleIncomplete.Code)
	if o.Demo {
		rep.Check(sim.RuleMatrixMismatch.Code)
	}
	for i := range res.Profiles {
		rep.Add(profileFindings(res.Scenario, &res.Profiles[i], o.Demo)...)
	}
	return o.Factory.Emit(ctx, report.Document{Report: rep, Text: func(w io.Writer, th *report.Theme) error {
		return writeScenario(w, th, res, o.Factory.Global.Verbose)
	}})
}

// profileFindings turns what one profile's exploration found into
// findings. In the demonstration, the faulty profile's duplicate is the
// expected result (info); anything that differs from the documented
// expectation is an error.
func profileFindings(sc *sim.Scenario, pr *sim.ProfileResult, demo bool) []findings.Finding {
	var out []findings.Finding
	subject := sc.Name + "/" + pr.Profile.Name
	var evidence []string
	if ex := pr.Example; ex != nil {
		evidence = keyEvents(&ex.Timeline)
		evidence = append(evidence, "replay: dupctl simulate replay "+ex.Token)
	}
	expectedHere := demo && pr.HasExpected && pr.Outcome() == pr.Expected
	add := func(rule findings.Rule, v sim.Violation, msg string) {
		if !pr.Found.Has(v) {
			return
		}
		f := rule.New(subject, msg, evidence...)
		if expectedHere {
			f.Severity = findings.Info
			f.Message += " (expected: the scenario's demonstration of the cause)"
		}
		out = append(out, f)
	}
	explored := exploredText(pr)
	add(sim.RuleDuplicate, sim.VDuplicate, fmt.Sprintf("profile %s runs a side effect twice (%s)", pr.Profile.Name, explored))
	add(sim.RuleLoss, sim.VLoss, fmt.Sprintf("profile %s loses a job (%s)", pr.Profile.Name, explored))
	add(sim.RuleNonOwnerUnlock, sim.VNonOwnerUnlock, fmt.Sprintf("profile %s releases a lock it does not hold (%s)", pr.Profile.Name, explored))
	add(sim.RuleLivelock, sim.VLivelock, fmt.Sprintf("profile %s has a schedule that never finishes (%s)", pr.Profile.Name, explored))
	if pr.Explore == sim.ExploreExhaustive && !pr.Complete {
		out = append(out, sim.RuleIncomplete.New(subject, fmt.Sprintf("stopped after %s states", count(pr.States))))
	}
	if demo && pr.HasExpected && pr.Complete && pr.Outcome() != pr.Expected {
		out = append(out, sim.RuleMatrixMismatch.New(subject, fmt.Sprintf("documented %s, observed %s", pr.Expected, pr.Outcome())))
	}
	return out
}

func exploredText(pr *sim.ProfileResult) string {
	if pr.Explore == sim.ExploreRandom {
		return fmt.Sprintf("%s of %s random schedules", count(pr.FailingRuns), count(pr.Runs))
	}
	return fmt.Sprintf("exhaustive, %s states", count(pr.States))
}

// keyEvents picks the lines of a timeline that explain it: the faults, the
// clock's effects and the side effects.
func keyEvents(tl *sim.Timeline) []string {
	var out []string
	for _, ev := range tl.Events {
		switch ev.Kind {
		case "crash", "pause", "drop", "duplicate", "expire", "ack-timeout", "effect", "duplicate-effect", "requeue":
			out = append(out, fmt.Sprintf("step %d t=%s %s: %s", ev.Step, sim.FormatMillis(ev.T), ev.Lane, ev.Text))
		case "unlock":
			if strings.Contains(ev.Text, "deleted the lock of") {
				out = append(out, fmt.Sprintf("step %d t=%s %s: %s", ev.Step, sim.FormatMillis(ev.T), ev.Lane, ev.Text))
			}
		}
	}
	return out
}

func writeScenario(w io.Writer, th *report.Theme, res *sim.Result, verbose bool) error {
	sc := res.Scenario
	fmt.Fprintf(w, "%s %s\n", th.Strong("simulate "+sc.Name+":"), sc.Title)
	fmt.Fprintf(w, "%s\n", th.Faint(sc.Cause))
	if len(res.Profiles) > 0 {
		fmt.Fprintf(w, "Scope: %s\n", scopeText(&res.Profiles[0].Config))
	}
	fmt.Fprintln(w)
	t := report.NewTable("PROFILE", "EXPECTED", "RESULT", "EXPLORED", "MITIGATIONS")
	for _, pr := range res.Profiles {
		exp := "-"
		if pr.HasExpected {
			exp = pr.Expected.String()
		}
		t.Row(pr.Profile.Name, exp, outcomeText(th, pr.Found), exploredText(&pr), pr.Profile.Summary)
	}
	if err := t.Render(w); err != nil {
		return err
	}
	for _, pr := range res.Profiles {
		ex := pr.Example
		if ex == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s %s in %d steps (shrunk from %d)\n", th.Strong(pr.Profile.Name+":"), violationText(ex.Violation), ex.Steps, ex.OriginalSteps)
		fmt.Fprintf(w, "replay: dupctl simulate replay %s\n\n", ex.Token)
		if err := writeTimeline(w, th, &ex.Timeline); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s\n", th.Strong("The same schedule under every profile:"))
		ct := report.NewTable("PROFILE", "OUTCOME", "EFFECTS", "CAUGHT", "FENCED", "LOCK EXPIRIES", "DLQ")
		for _, cf := range ex.Counterfactual {
			ct.Row(cf.Profile.Name, outcomeText(th, cf.Found), fmt.Sprint(cf.Stats.Effects), fmt.Sprint(cf.Stats.Caught),
				fmt.Sprint(cf.Stats.Fenced), fmt.Sprint(cf.Stats.LockExpiries), fmt.Sprint(cf.Stats.DeadLettered))
		}
		if err := ct.Render(w); err != nil {
			return err
		}
		for _, cf := range ex.Counterfactual {
			if cf.Timeline != nil && cf.Profile.Name != pr.Profile.Name {
				fmt.Fprintf(w, "\n%s\n", th.Strong(fmt.Sprintf("The same schedule under %s (%s):", cf.Profile.Name, outcomeText(th, cf.Found))))
				if err := writeTimeline(w, th, cf.Timeline); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func scopeText(c *sim.Config) string {
	parts := []string{
		fmt.Sprintf("%d %s, %d %s on %d business %s", c.Workers, english.Plural(c.Workers, "worker", "workers"), c.Jobs, english.Plural(c.Jobs, "job", "jobs"), c.Keys, english.Plural(c.Keys, "key", "keys")),
		"job " + c.Duration.String(),
		"lock TTL " + sim.FormatMillis(c.LockTTL),
	}
	if c.AckTimeout > 0 {
		parts = append(parts, "ack timeout "+sim.FormatMillis(c.AckTimeout))
	}
	parts = append(parts, "faults: "+faultsText(c))
	return strings.Join(parts, "; ")
}

// faultsText lists a config's fault budget.
func faultsText(c *sim.Config) string {
	f := c.Faults
	var faults []string
	if f.Crash > 0 {
		faults = append(faults, fmt.Sprintf("%d crash (%s)", f.Crash, pointsText(f.CrashAt)))
	}
	if f.Pause > 0 {
		faults = append(faults, fmt.Sprintf("%d pause of %s (%s)", f.Pause, sim.FormatMillis(c.PauseFor), pointsText(f.PauseAt)))
	}
	if f.DropAck > 0 {
		faults = append(faults, fmt.Sprintf("%d connection drop before the ack", f.DropAck))
	}
	if f.DupPublish > 0 {
		faults = append(faults, fmt.Sprintf("%d publisher duplicate", f.DupPublish))
	}
	if f.EffectFail > 0 {
		faults = append(faults, fmt.Sprintf("%d retryable effect failure", f.EffectFail))
	}
	if len(faults) == 0 {
		return "none"
	}
	return strings.Join(faults, ", ")
}

func pointsText(ps worker.Points) string {
	var names []string
	for p := worker.PointAfterReceive; p < worker.NumPoints; p++ {
		if ps.Has(p) {
			names = append(names, p.String())
		}
	}
	if len(names) == int(worker.NumPoints)-1 {
		return "at any point"
	}
	return "at " + strings.Join(names, " or ")
}

func violationText(v sim.Violation) string {
	switch v {
	case sim.VDuplicate:
		return "a side effect runs twice"
	case sim.VLoss:
		return "a job is lost"
	case sim.VNonOwnerUnlock:
		return "a lock is released by a non-owner"
	case sim.VLivelock:
		return "a schedule never finishes"
	}
	return v.String()
}

// outcomeText is the matrix word for what was found, styled.
func outcomeText(th *report.Theme, v sim.Violation) string {
	x := sim.OutcomeOf(v)
	s := x.String()
	if v.Has(sim.VNonOwnerUnlock) {
		s += " (non-owner unlock)"
	}
	if v.Has(sim.VLivelock) {
		s += " (livelock)"
	}
	if x == sim.ExpectSafe {
		return th.Pass(s)
	}
	return th.Severity(findings.Error, s)
}
