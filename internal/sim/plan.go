package sim

import (
	"context"
	"fmt"
	"strings"

	"github.com/dupctl/dupctl/internal/worker"
)

// Fault kinds of a plan.
const (
	FaultCrash = "crash"
	FaultPause = "pause"
	FaultDrop  = "drop"
	FaultFail  = "fail"
)

// PlanFault fires a fault on the worker handling the Delivery-th delivery
// (1-based) of job Job (0-based; -1: every job) when it reaches Point.
type PlanFault struct {
	Kind     string
	Job      int
	Delivery int
	Point    worker.Point
}

// Plan is one concrete schedule of faults that both the simulator and the
// live runner can follow: faults by meaning (whose delivery, which point),
// and a publisher duplicate of the first job at a virtual time.
type Plan struct {
	Faults []PlanFault
	DupAt  int64 // virtual ms; 0: none
	// CacheLag, when set, replaces the scenario's: a plan moves timers
	// apart so that no two events race within a live run's jitter.
	CacheLag int64
}

// Apply adapts a scenario config to the plan: no backoff jitter (the live
// runner's backoff is exact, so both sides see the same retry times) and
// the plan's timer settings.
func (p Plan) Apply(c *Config) {
	c.JitterPercent = 0
	if p.CacheLag > 0 {
		c.CacheLag = p.CacheLag
	}
}

// Matches reports whether f applies to this delivery at these points.
func (f PlanFault) Matches(job, delivery int, at worker.Points) bool {
	return (f.Job < 0 || f.Job == job) && f.Delivery == delivery && (f.Kind == FaultFail || at.Has(f.Point))
}

// Plans are the live-checkable schedules of the scenarios: the headline
// schedule of each cause, with timing margins wide enough to hold on real
// servers.
func Plans() map[string]Plan {
	return map[string]Plan{
		"crash":           {Faults: []PlanFault{{Kind: FaultCrash, Job: -1, Delivery: 1, Point: worker.PointBeforeAck}}},
		"lock-expiry":     {Faults: []PlanFault{{Kind: FaultPause, Job: 0, Delivery: 1, Point: worker.PointAfterEffect}}, DupAt: 35_000},
		"redelivery":      {Faults: []PlanFault{{Kind: FaultDrop, Job: -1, Delivery: 1, Point: worker.PointBeforeAck}}},
		"race":            {CacheLag: 3_000}, // visible at 13s, before the retry at 15s
		"unlock-no-token": {DupAt: 2_000},
		"unstable-key":    {Faults: []PlanFault{{Kind: FaultCrash, Job: -1, Delivery: 1, Point: worker.PointBeforeAck}}},
		"stale-cache":     {DupAt: 12_000},
	}
}

// PlayOptions choose one plan to play in the simulator.
type PlayOptions struct {
	Scenario string // the scenario the config comes from, for the findings
	Config   Config
	Plan     Plan
}

// PlayResult is what one plan did in the simulator.
type PlayResult struct {
	Scenario string
	Config   Config // as played: the plan's timers and fault budget applied
	Plan     Plan
	Found    Violation
	Stats    Stats
	Timeline Timeline
}

// Play runs a config under a plan with the default scheduling policy (the
// first worker that can move moves; the clock jumps when all wait) and
// returns what happened, with its timeline: the simulator's side of what
// the live runner plays on real servers.
func Play(ctx context.Context, o PlayOptions) (*PlayResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := o.Plan.budget(o.Config)
	e := &engine{cfg: &cfg, rec: newRecorder()}
	e.reset(0)
	pl := &player{plan: o.Plan, e: e, deliveries: map[int32]int{}, current: make([][2]int, cfg.Workers), fired: map[[4]int]bool{}}
	found := pl.run()
	e.rec.finish(e)
	return &PlayResult{Scenario: o.Scenario, Config: cfg, Plan: o.Plan, Found: found, Stats: e.stats(), Timeline: e.rec.tl}, nil
}

// budget is cfg adapted to the plan, with a fault budget that lets each of
// the plan's faults fire (once per job for a fault on every job).
func (p Plan) budget(cfg Config) Config {
	p.Apply(&cfg)
	cfg.Faults = Faults{CrashAt: allPoints, PauseAt: allPoints}
	for _, f := range p.Faults {
		n := 1
		if f.Job < 0 {
			n = cfg.Jobs
		}
		switch f.Kind {
		case FaultCrash:
			cfg.Faults.Crash += n
		case FaultPause:
			cfg.Faults.Pause += n
		case FaultDrop:
			cfg.Faults.DropAck += n
		case FaultFail:
			cfg.Faults.EffectFail += n
		}
	}
	cfg.DupAt = p.DupAt
	return cfg
}

// player drives an engine through one plan.
type player struct {
	plan       Plan
	e          *engine
	deliveries map[int32]int   // job -> deliveries so far
	current    [][2]int        // worker -> its job and that job's delivery number
	fired      map[[4]int]bool // fault index, job, delivery, worker instance
}

// faultKinds names the plan fault each fault action is.
var faultKinds = map[int]string{aCrash: FaultCrash, aPause: FaultPause, aDrop: FaultDrop, aFail: FaultFail}

// run plays until nothing more happens, or the step limit: a livelock.
func (pl *player) run() Violation {
	e := pl.e
	var buf []Action
	for int(e.s.Steps) < e.cfg.MaxSteps {
		buf = e.enabled(buf[:0])
		next := pl.choose(buf)
		if next == 0 {
			return e.violations(true)
		}
		pl.apply(next)
	}
	return e.violations(false) | VLivelock
}

// choose is the next action: a planned fault takes precedence over its
// worker's next step.
func (pl *player) choose(buf []Action) Action {
	next := firstProgress(buf)
	for _, a := range buf {
		kind := faultKinds[a.Kind()]
		if kind == "" {
			continue
		}
		w := a.Arg()
		ws := &pl.e.s.W[w]
		job, n := pl.current[w][0], pl.current[w][1]
		for i, f := range pl.plan.Faults {
			id := [4]int{i, job, n, int(ws.Instance)}
			if f.Kind == kind && !pl.fired[id] && f.Matches(job, n, ws.At) {
				pl.fired[id] = true
				next = a
			}
		}
		if next == a {
			break
		}
	}
	return next
}

// apply makes the action happen and counts the delivery a receive starts.
func (pl *player) apply(a Action) {
	e := pl.e
	w := a.Arg()
	receive := a.Kind() == aStep && e.s.W[w].Msg < 0
	e.apply(a)
	if receive && e.s.W[w].Msg >= 0 {
		job := e.s.Msgs[e.s.W[w].Msg].Job
		pl.deliveries[job]++
		pl.current[w] = [2]int{int(job), pl.deliveries[job]}
	}
}

// CrashingAt is the plan with its crashes moved to point pt (--at on a
// live run): the same deliveries crash, at the point the user named.
func (p Plan) CrashingAt(pt worker.Point) Plan {
	out := p
	out.Faults = make([]PlanFault, len(p.Faults))
	for i, f := range p.Faults {
		if f.Kind == FaultCrash {
			f.Point = pt
		}
		out.Faults[i] = f
	}
	return out
}

// Crashes reports whether the plan crashes a worker.
func (p Plan) Crashes() bool {
	for _, f := range p.Faults {
		if f.Kind == FaultCrash {
			return true
		}
	}
	return false
}

// Describe says in words which one schedule the plan plays.
func (p Plan) Describe() string {
	var parts []string
	for _, f := range p.Faults {
		whose := "the first delivery of each job"
		if f.Job >= 0 {
			whose = fmt.Sprintf("delivery %d of job %d", f.Delivery, f.Job+1)
		} else if f.Delivery != 1 {
			whose = fmt.Sprintf("delivery %d of each job", f.Delivery)
		}
		switch f.Kind {
		case FaultFail:
			parts = append(parts, "the effect fails on "+whose)
		case FaultDrop:
			parts = append(parts, "the connection drops at "+f.Point.String()+" on "+whose)
		default:
			parts = append(parts, "a "+f.Kind+" at "+f.Point.String()+" on "+whose)
		}
	}
	if p.DupAt > 0 {
		parts = append(parts, "the publisher sends job 1 again at t="+FormatMillis(p.DupAt))
	}
	if len(parts) == 0 {
		return "no fault: the scenario's own timing"
	}
	return strings.Join(parts, "; ")
}
