package live

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
)

// ScenarioOptions are one `dupctl simulate <scenario> --live` run: the
// scenario's plan played on the real servers under each profile.
type ScenarioOptions struct {
	Scenario *sim.Scenario
	// Profiles to play; empty means the scenario's demonstration pair.
	Profiles []worker.Profile
	// Tune applies the user's flags to each profile's config, as in
	// virtual mode.
	Tune                     func(*sim.Config) error
	RedisURL, PGURL, AMQPURL string
	Scale                    time.Duration
	AllowRemote              bool
	Progress                 progress.Meter
	MaxStates                int // the full virtual search's bound
}

// Validate checks the options that need no server: real time moves at
// least a millisecond per virtual second.
func (o ScenarioOptions) Validate() error {
	if o.Scale < time.Millisecond {
		return problem.Inputf("Scale", "{Scale} must be at least 1ms, got %s", o.Scale)
	}
	return nil
}

// ScenarioResult is every profile's live verdict beside the simulator's.
type ScenarioResult struct {
	Scenario *sim.Scenario
	Demo     bool
	Scale    time.Duration
	// Plan is the one schedule the live runs played, in words.
	Plan  string
	Scope *sim.Config
	Rows  []Row
}

// Row is one profile played live. Plan is the simulator's verdict for the
// same plan (what the live run must match); Search is the full virtual
// search's verdict over every schedule of the scope, which the one plan
// may not reach: Why says so when they differ.
type Row struct {
	Profile  string        `json:"profile"`
	Search   string        `json:"search"`
	Virtual  string        `json:"virtual"` // the plan in the simulator
	Live     string        `json:"live"`
	Match    bool          `json:"match"`
	Why      string        `json:"why,omitempty"`
	Effects  int           `json:"effects"`
	DLQ      int           `json:"dead_lettered"`
	Crashes  int           `json:"crashes"`
	Elapsed  string        `json:"elapsed"`
	Timeline *sim.Timeline `json:"timeline,omitempty"`

	Found    sim.Violation `json:"-"`
	expected bool
}

// PlannedScenarios lists the scenarios that have a live plan.
func PlannedScenarios() string {
	var names []string
	for n := range sim.Plans() {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Scenario plays a scenario's plan on the real servers under each profile,
// and compares every verdict with the simulator's for the same plan and
// with the full virtual search.
func Scenario(ctx context.Context, o ScenarioOptions) (*ScenarioResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	sc := o.Scenario
	plan, ok := sim.Plans()[sc.Name]
	if !ok {
		return nil, problem.Inputf("", "simulate %s has no live plan (live plans: %s); run it without {Live}", sc.Name, PlannedScenarios())
	}
	res := &ScenarioResult{Scenario: sc, Scale: o.Scale, Demo: len(o.Profiles) == 0}
	profiles := o.Profiles
	if res.Demo {
		profiles = sc.DemoProfiles()
	}
	meter := progress.Or(o.Progress)
	defer meter.Done()
	meter.SetTotal(int64(len(profiles)))
	for i, p := range profiles {
		cfg := sc.Config(p)
		if o.Tune != nil {
			if err := o.Tune(&cfg); err != nil {
				return nil, err
			}
		}
		pl, err := planFor(plan, cfg, sc.Config(p).Faults.CrashAt)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			c := cfg
			res.Scope, res.Plan = &c, pl.Describe()
		}
		virtual, err := sim.Play(ctx, sim.PlayOptions{Scenario: sc.Name, Config: cfg, Plan: pl})
		if err != nil {
			return nil, err
		}
		search, err := sim.Run(ctx, sim.Options{Scenario: sc, Profiles: []worker.Profile{p}, Tune: o.Tune, MaxStates: o.MaxStates})
		if err != nil {
			return nil, err
		}
		out, err := Run(ctx, Options{Scenario: sc.Name, Config: cfg, Plan: pl,
			RedisURL: o.RedisURL, PGURL: o.PGURL, AMQPURL: o.AMQPURL, Scale: o.Scale, AllowRemote: o.AllowRemote})
		if err != nil {
			return nil, err
		}
		meter.Add(1)
		pr := &search.Profiles[0]
		row := Row{Profile: p.Name, Search: pr.Outcome().String(),
			Virtual: sim.OutcomeOf(virtual.Found).String(), Live: sim.OutcomeOf(out.Found).String(),
			Effects: out.Effects, DLQ: out.DeadLettered, Crashes: out.Crashes, Elapsed: out.Elapsed.Round(time.Millisecond).String(),
			Found: out.Found}
		row.Match = row.Virtual == row.Live
		row.Why = why(pr, row.Search, row.Virtual, pl, out)
		row.expected = res.Demo && p.Name == sc.Faulty
		tl := out.Timeline
		row.Timeline = &tl
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// planFor fits the scenario's plan to the user's scope: crash points
// narrowed from the scenario's own (--at) move the plan's crash to the one
// point named, since a live run plays one schedule.
func planFor(plan sim.Plan, cfg sim.Config, scenarioAt worker.Points) (sim.Plan, error) {
	at := cfg.Faults.CrashAt
	if !plan.Crashes() || at == scenarioAt {
		return plan, nil
	}
	var points []worker.Point
	for p := worker.PointAfterReceive; p < worker.NumPoints; p++ {
		if at.Has(p) {
			points = append(points, p)
		}
	}
	if len(points) != 1 {
		return plan, problem.Inputf("At", "a live run plays one schedule: give one crash point, not %d", len(points))
	}
	return plan.CrashingAt(points[0]), nil
}

// why explains a row whose verdicts differ: the plan is one schedule, the
// search every schedule of the scope; or the planned crash never fired.
func why(pr *sim.ProfileResult, search, virtual string, pl sim.Plan, out *Result) string {
	var parts []string
	if pl.Crashes() && out.Crashes == 0 {
		parts = append(parts, "the planned crash never fired: the profile never reaches its point")
	}
	if search != virtual {
		s := fmt.Sprintf("the live plan is one schedule (%s); the full search found %s", pl.Describe(), search)
		if ex := pr.Example; ex != nil {
			for _, ev := range ex.Timeline.Events {
				if ev.Kind == "crash" || ev.Kind == "pause" || ev.Kind == "drop" || ev.Kind == "duplicate" {
					s += " in a schedule where: " + ev.Text
					break
				}
			}
			s += " (dupctl simulate replay " + ex.Token + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// Report is the live run's findings: what the real servers showed, and
// any disagreement with the simulator's verdict for the same plan.
func (r *ScenarioResult) Report() *findings.Report {
	sc := r.Scenario
	rep := &findings.Report{Command: "simulate " + sc.Name + " {Live}"}
	rep.Check(sim.RuleDuplicate.Code, sim.RuleLoss.Code, sim.RuleNonOwnerUnlock.Code, sim.RuleLiveMismatch.Code)
	for _, row := range r.Rows {
		subject := sc.Name + "/" + row.Profile + " (live)"
		ev := sim.KeyEvents(row.Timeline)
		if !row.Match {
			rep.Add(sim.RuleLiveMismatch.New(subject, fmt.Sprintf("simulator %s, real servers %s", row.Virtual, row.Live), ev...))
		}
		for _, f := range violationFindings(subject, row.Profile, row.Found, row.Effects, row.DLQ, ev) {
			if row.expected && row.Match {
				f.Severity = findings.Info
				f.Message += " (expected: the scenario's demonstration of the cause)"
			}
			rep.Add(f)
		}
	}
	data := map[string]any{"scenario": sc.Name, "scale_per_virtual_second": r.Scale.String(), "plan": r.Plan, "profiles": r.Rows}
	if r.Scope != nil {
		data["scope"] = sim.ScopeOf(r.Scope)
	}
	rep.Data = data
	return rep
}

// violationFindings are the findings for the invariants a live run broke.
func violationFindings(subject, profile string, found sim.Violation, effects, dlq int, ev []string) []findings.Finding {
	var out []findings.Finding
	for _, x := range []struct {
		v    sim.Violation
		rule findings.Rule
	}{{sim.VDuplicate, sim.RuleDuplicate}, {sim.VLoss, sim.RuleLoss}, {sim.VNonOwnerUnlock, sim.RuleNonOwnerUnlock}} {
		if found.Has(x.v) {
			out = append(out, x.rule.New(subject,
				fmt.Sprintf("profile %s: %s on the real servers (%d effects, %d dead-lettered)", profile, sim.ViolationText(x.v), effects,
					dlq), ev...))
		}
	}
	return out
}

// Report is one live run's findings: the invariants the real servers
// showed broken under its plan.
func (r *Result) Report() *findings.Report {
	rep := &findings.Report{Command: "simulate " + r.Scenario + " {Live}"}
	rep.Check(sim.RuleDuplicate.Code, sim.RuleLoss.Code, sim.RuleNonOwnerUnlock.Code)
	subject := r.Scenario + "/" + r.Profile + " (live)"
	rep.Add(violationFindings(subject, r.Profile, r.Found, r.Effects, r.DeadLettered, sim.KeyEvents(&r.Timeline))...)
	rep.Data = map[string]any{
		"scenario": r.Scenario, "profile": r.Profile, "outcome": sim.OutcomeOf(r.Found).String(), "violations": r.Found.String(),
		"effects": r.Effects, "duplicates": r.Duplicates, "lost": r.Lost, "dead_lettered": r.DeadLettered, "crashes": r.Crashes,
		"elapsed": r.Elapsed.Round(time.Millisecond).String(), "slip": r.Slip.Round(time.Millisecond).String(), "timeline": r.Timeline,
	}
	return rep
}
