package sim

import (
	"context"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"reflect"

	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/worker"
)

// Explore modes.
const (
	ExploreExhaustive = "exhaustive"
	ExploreRandom     = "random"
)

// Options choose what one `dupctl simulate <scenario>` explores.
type Options struct {
	Scenario *Scenario
	// Profiles to explore; empty means the scenario's faulty and safe
	// profiles (the demonstration).
	Profiles []worker.Profile
	// Tune applies the user's flags to each profile's config.
	Tune      func(*Config) error
	Explore   string
	Seed      uint64
	Runs      int // random mode
	MaxStates int // exhaustive mode
	Shard     Shard
	Progress  progress.Meter
}

// Shard splits exploration across CI jobs: this is part K of N (0-based K).
type Shard struct{ K, N int }

func (s Shard) mine(i int) bool { return s.N <= 1 || i%s.N == s.K }

// Result is one scenario explored under one or more profiles.
type Result struct {
	Scenario *Scenario
	Profiles []ProfileResult
	// Demo is set when no profile was chosen: the scenario's faulty and
	// safe pair, whose documented outcomes are part of the result.
	Demo bool
}

// ProfileResult is what exploring one profile found.
type ProfileResult struct {
	Profile     worker.Profile
	Config      Config
	Expected    Expect
	HasExpected bool
	Explore     string
	States      int // exhaustive: distinct states
	Transitions int
	Runs        int // random: schedules run
	FailingRuns int // random: schedules that broke an invariant
	Complete    bool
	// ScopeChanged says flags changed the scenario's scope, so no
	// documented outcome applies (HasExpected is false).
	ScopeChanged bool
	Found        Violation
	Coverage     Coverage
	Example      *Counterexample // the shortest failing schedule, shrunk
}

// Outcome is the matrix reading of what was found.
func (r *ProfileResult) Outcome() Expect { return expectOf(r.Found) }

// demonstrates reports whether what the profile found is the scenario's
// demonstration of its cause, expected and so reported as info: in the
// demonstration pair, the documented outcome; or, where flags changed the
// scope, whatever the faulty profile shows.
func (r *ProfileResult) demonstrates(sc *Scenario, demo bool) bool {
	if !demo || r.Found == 0 {
		return false
	}
	if r.HasExpected {
		return r.Outcome() == r.Expected
	}
	return r.ScopeChanged && r.Profile.Name == sc.Faulty
}

// Counterexample is one failing schedule, reduced and rendered.
type Counterexample struct {
	Violation      Violation
	Schedule       Schedule
	Token          string
	OriginalSteps  int
	Steps          int
	Timeline       Timeline
	Stats          Stats
	Counterfactual []Counterfactual
}

// Counterfactual is the same schedule replayed under another profile.
type Counterfactual struct {
	Profile  worker.Profile
	Found    Violation
	Stats    Stats
	Timeline *Timeline // only for the scenario's safe profile
}

// Validate checks the options as given: a zero Runs or MaxStates is
// refused here, though Run takes it for the default.
func (o Options) Validate() error {
	if o.Explore != "" && o.Explore != ExploreExhaustive && o.Explore != ExploreRandom {
		return problem.Inputf("Explore", "{Explore} %q: want exhaustive or random", o.Explore)
	}
	if o.Runs < 1 || o.MaxStates < 1 {
		return problem.Inputf("Runs", "{Runs} and {MaxStates} must be positive")
	}
	return o.Shard.validate()
}

// Run explores a scenario. An empty Explore is exhaustive, a zero Runs
// one schedule and a zero MaxStates 5,000,000.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Scenario == nil {
		return nil, problem.Inputf("Scenario", "no scenario given")
	}
	if o.Explore == "" {
		o.Explore = ExploreExhaustive
	}
	if o.MaxStates == 0 {
		o.MaxStates = 5_000_000
	}
	if o.Runs == 0 {
		o.Runs = 1
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	sc := o.Scenario
	profiles := o.Profiles
	demo := len(profiles) == 0
	if demo {
		profiles = sc.DemoProfiles()
	}
	meter := progress.Or(o.Progress)
	defer meter.Done()
	res := &Result{Scenario: sc, Demo: demo}
	for _, p := range profiles {
		pr, err := exploreProfile(ctx, &o, p, demo, meter)
		if err != nil {
			return nil, err
		}
		res.Profiles = append(res.Profiles, *pr)
	}
	return res, nil
}

// discovered is the schedule an exploration keeps: the first that shows
// the most serious violation it found (example nil: none).
type discovered struct {
	violation Violation
	seed      uint64
	example   []Action
}

// exploreProfile explores the scenario under one profile and explains the
// schedule it found.
func exploreProfile(ctx context.Context, o *Options, p worker.Profile, demo bool, meter progress.Meter) (*ProfileResult, error) {
	sc := o.Scenario
	cfg := sc.Config(p)
	if o.Tune != nil {
		if err := o.Tune(&cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pr := &ProfileResult{Profile: p, Config: cfg, Explore: o.Explore}
	// The documented outcome is about the scenario's own scope: once a
	// flag changes it (--at, --lock-ttl, ...) there is none to compare.
	pr.ScopeChanged = !reflect.DeepEqual(cfg, sc.Config(p))
	if p.Name != "custom" && !pr.ScopeChanged {
		pr.Expected, pr.HasExpected = sc.Expected(p.Name), true
	}
	var f discovered
	switch o.Explore {
	case ExploreExhaustive:
		e := &engine{cfg: &cfg}
		r := e.exhaustiveShard(ctx, o.MaxStates, o.Shard)
		pr.States, pr.Transitions, pr.Complete, pr.Found, pr.Coverage = r.States, r.Transitions, r.Complete, r.Found, r.Reached
		f.violation, f.example = pick(r.Found, r.Examples)
		meter.Add(int64(r.States))
	case ExploreRandom:
		var err error
		if f, err = exploreRandom(ctx, o, &cfg, pr, meter); err != nil {
			return nil, err
		}
	default:
		return nil, problem.Inputf("", "unknown {Explore} %q: want exhaustive or random", o.Explore)
	}
	if f.example != nil {
		pr.Example = explain(sc, cfg, f.seed, f.example, f.violation)
		if pr.demonstrates(sc, demo) {
			pr.Example.Schedule.Expected = true
			pr.Example.Token = pr.Example.Schedule.Token()
		}
	}
	return pr, nil
}

// exploreRandom runs o.Runs seeded schedules (this shard's), counting them
// in pr, and keeps the first schedule of the most serious violation.
func exploreRandom(ctx context.Context, o *Options, cfg *Config, pr *ProfileResult, meter progress.Meter) (discovered, error) {
	runs := max(o.Runs, 1)
	meter.SetTotal(int64(runs))
	e := &engine{cfg: cfg}
	var buf []Action
	var f discovered
	pr.Complete = true
	for i := 0; i < runs; i++ {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return discovered{}, err
			}
			meter.Add(int64(min(4096, runs-i)))
		}
		if !o.Shard.mine(i) {
			continue
		}
		s := mix(o.Seed, uint64(i))
		var v Violation
		v, buf = e.runRandom(s, true, nil, buf)
		pr.Runs++
		if v == 0 {
			continue
		}
		pr.FailingRuns++
		pr.Found |= v
		if f.example == nil || rank(v) > rank(f.violation) {
			var trace []Action
			e.runRandom(s, true, &trace, buf)
			f = discovered{violation: mostSerious(v), seed: s, example: trace}
		}
	}
	return f, nil
}

// rank orders violations by how much they matter to the reader.
func rank(v Violation) int {
	switch {
	case v.Has(VDuplicate):
		return 4
	case v.Has(VLoss):
		return 3
	case v.Has(VNonOwnerUnlock):
		return 2
	case v.Has(VLivelock):
		return 1
	}
	return 0
}

func mostSerious(v Violation) Violation {
	for _, one := range []Violation{VDuplicate, VLoss, VNonOwnerUnlock, VLivelock} {
		if v.Has(one) {
			return one
		}
	}
	return 0
}

func pick(found Violation, examples map[Violation][]Action) (Violation, []Action) {
	v := mostSerious(found)
	if v == 0 {
		return 0, nil
	}
	return v, examples[v]
}

// explain shrinks a failing schedule, replays it with a recorder and
// replays it under every other profile.
func explain(sc *Scenario, cfg Config, seed uint64, actions []Action, v Violation) *Counterexample {
	scfg, short := shrink(cfg, seed, actions, v)
	ce := &Counterexample{Violation: v, OriginalSteps: len(actions), Steps: len(short)}
	ce.Schedule = Schedule{Scenario: sc.Name, Config: scfg, Seed: seed, Actions: short}
	ce.Token = ce.Schedule.Token()
	tl, stats, _, _ := record(ce.Schedule)
	ce.Timeline, ce.Stats = tl, stats
	ce.Counterfactual = counterfactuals(ce.Schedule, sc.Safe)
	return ce
}

// counterfactuals replays the schedule under every profile; the one named
// withTimeline also gets its timeline recorded.
func counterfactuals(r Schedule, withTimeline string) []Counterfactual {
	var out []Counterfactual
	for _, p := range worker.Profiles() {
		c := r.Config
		c.Profile = p
		e := &engine{cfg: &c}
		if p.Name == withTimeline {
			e.rec = newRecorder()
		}
		found, _, _ := e.replay(r.Seed, r.Actions, false, false)
		cf := Counterfactual{Profile: p, Found: found, Stats: e.stats()}
		if e.rec != nil {
			e.rec.finish(e)
			t := e.rec.tl
			cf.Timeline = &t
		}
		out = append(out, cf)
	}
	return out
}

// record replays a schedule exactly and returns its timeline. ok is false
// when the schedule does not fit this engine (a token from another build).
func record(r Schedule) (tl Timeline, st Stats, found Violation, ok bool) {
	cfg := r.Config
	e := &engine{cfg: &cfg, rec: newRecorder()}
	found, _, ok = e.replay(r.Seed, r.Actions, true, false)
	e.rec.finish(e)
	return e.rec.tl, e.stats(), found, ok
}
