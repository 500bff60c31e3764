package simulate

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/live"
	"github.com/dupctl/dupctl/internal/worker"
)

// LiveOptions are the --live flags.
type LiveOptions struct {
	Enabled     bool
	AllowRemote bool
	Scale       time.Duration
}

type liveRow struct {
	Profile  string        `json:"profile"`
	Virtual  string        `json:"virtual"`
	Live     string        `json:"live"`
	Match    bool          `json:"match"`
	Effects  int           `json:"effects"`
	DLQ      int           `json:"dead_lettered"`
	Crashes  int           `json:"crashes"`
	Elapsed  string        `json:"elapsed"`
	Timeline *sim.Timeline `json:"timeline,omitempty"`
	found    sim.Violation
	expected bool
}

func livePlanned() string {
	var names []string
	for n := range sim.Plans() {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// runLive plays the scenario's plan on the real servers under each profile
// and compares every verdict with the simulator's for the same plan.
func runLive(ctx context.Context, o *ScenarioOptions) error {
	sc := o.Scenario
	plan, ok := sim.Plans()[sc.Name]
	if !ok {
		return exitcode.UsageErrorf("simulate %s has no live plan (live plans: %s); run it without --live", sc.Name, livePlanned())
	}
	profiles := o.Sim.Profiles
	if len(profiles) == 0 {
		for _, n := range []string{sc.Faulty, sc.Safe} {
			p, _ := worker.ProfileByName(n)
			profiles = append(profiles, p)
		}
	}
	g := o.Factory.Global
	rep := &findings.Report{Command: "simulate " + sc.Name + " --live"}
	rep.Check(sim.RuleDuplicate.Code, sim.RuleLoss.Code, sim.RuleNonOwnerUnlock.Code, sim.RuleLiveMismatch.Code)
	meter := o.Factory.IO.StartProgress("simulate "+sc.Name+" --live", "profiles")
	meter.SetTotal(int64(len(profiles)))
	var rows []liveRow
	var first *sim.Config
	for _, p := range profiles {
		cfg := sc.Config(p)
		if o.Sim.Tune != nil {
			if err := o.Sim.Tune(&cfg); err != nil {
				return err
			}
		}
		if first == nil {
			c := cfg
			first = &c
		}
		virtual, _, _ := sim.RunPlan(cfg, plan)
		out, err := live.Run(ctx, live.Options{Scenario: sc.Name, Config: cfg, Plan: plan,
			RedisURL: g.RedisURL, PGURL: g.DatabaseURL, AMQPURL: g.AMQPURL, Scale: o.Live.Scale, AllowRemote: o.Live.AllowRemote})
		if err != nil {
			meter.Done()
			return err
		}
		meter.Add(1)
		row := liveRow{Profile: p.Name, Virtual: sim.OutcomeOf(virtual).String(), Live: sim.OutcomeOf(out.Found).String(),
			Effects: out.Effects, DLQ: out.DeadLettered, Crashes: out.Crashes, Elapsed: out.Elapsed.Round(time.Millisecond).String(), found: out.Found}
		row.Match = row.Virtual == row.Live
		row.expected = o.Demo && p.Name == sc.Faulty
		tl := out.Timeline
		row.Timeline = &tl
		rows = append(rows, row)
		subject := sc.Name + "/" + p.Name + " (live)"
		if !row.Match {
			rep.Add(sim.RuleLiveMismatch.New(subject, fmt.Sprintf("simulator %s, real servers %s", row.Virtual, row.Live), sim.KeyEvents(&tl)...))
		}
		for _, x := range []struct {
			v    sim.Violation
			rule findings.Rule
		}{{sim.VDuplicate, sim.RuleDuplicate}, {sim.VLoss, sim.RuleLoss}, {sim.VNonOwnerUnlock, sim.RuleNonOwnerUnlock}} {
			if !out.Found.Has(x.v) {
				continue
			}
			f := x.rule.New(subject, fmt.Sprintf("profile %s: %s on the real servers (%d effects, %d dead-lettered)", p.Name, sim.ViolationText(x.v), out.Effects, out.DeadLettered), sim.KeyEvents(&tl)...)
			if row.expected && row.Match {
				f.Severity = findings.Info
				f.Message += " (expected: the scenario's demonstration of the cause)"
			}
			rep.Add(f)
		}
	}
	meter.Done()
	data := map[string]any{"scenario": sc.Name, "scale_per_virtual_second": o.Live.Scale.String(), "profiles": rows}
	if first != nil {
		data["scope"] = sim.ScopeOf(first)
	}
	rep.Data = data
	return o.Factory.Emit(ctx, report.Document{Report: rep, Text: func(w io.Writer, th *report.Theme) error {
		fmt.Fprintf(w, "%s %s, on the real servers\n", th.Strong("simulate "+sc.Name+" --live:"), sc.Title)
		if first != nil {
			fmt.Fprintf(w, "Scope: %s; one virtual second = %s\n\n", scopeText(first), o.Live.Scale)
		}
		t := report.NewTable("PROFILE", "SIMULATOR", "REAL SERVERS", "EFFECTS", "DLQ", "CRASHES", "TIME")
		for _, r := range rows {
			lv := outcomeText(th, r.found)
			if !r.Match {
				lv = th.Mark(r.Live + " ≠ simulator")
			}
			t.Row(r.Profile, r.Virtual, lv, fmt.Sprint(r.Effects), fmt.Sprint(r.DLQ), fmt.Sprint(r.Crashes), r.Elapsed)
		}
		if err := t.Render(w); err != nil {
			return err
		}
		for _, r := range rows {
			if r.found != 0 || !r.Match {
				fmt.Fprintf(w, "\n%s\n", th.Strong(r.Profile+" on the real servers:"))
				if err := writeTimeline(w, th, r.Timeline); err != nil {
					return err
				}
				if !o.Factory.Global.Verbose {
					break
				}
			}
		}
		return nil
	}})
}
