package sim

import (
	"context"
	"math"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/worker"
)

// RiskOptions describe a production system in numbers.
type RiskOptions struct {
	Duration   Dist
	LockTTL    int64
	AckTimeout int64
	Workers    int
	Jobs       int
	// DupRate is the share of jobs delivered a second time (publisher
	// retries, redeliveries after connection loss); CrashRate the share
	// whose worker dies at a random point of the flow.
	DupRate   float64
	CrashRate float64
	Profiles  []worker.Profile
	Seed      uint64
	Progress  progress.Meter
}

// Validate checks the options: a duration is given, the lock TTL is
// positive, rates are shares.
func (o RiskOptions) Validate() error {
	switch {
	case o.Duration.text == "": // no constructor leaves it empty
		return problem.Inputf("Duration", "{Duration} is required, e.g. p50=30s,p99=5m")
	case o.LockTTL <= 0:
		return problem.Inputf("LockTTL", "{LockTTL} must be positive")
	case o.AckTimeout < 0:
		return problem.Inputf("AckTimeout", "{AckTimeout} must not be negative")
	case o.Jobs < 1 || o.Jobs > 10_000_000:
		return problem.Inputf("Jobs", "{Jobs} must be 1..10000000, got %d", o.Jobs)
	case o.Workers < 1:
		return problem.Inputf("Workers", "{Workers} must be positive")
	case o.DupRate < 0 || o.DupRate > 1 || o.CrashRate < 0 || o.CrashRate > 1:
		return problem.Inputf("DupRate", "{DupRate} and {CrashRate} are shares between 0 and 1")
	}
	return nil
}

// RiskResult is the estimate for every profile.
type RiskResult struct {
	PLongerThanTTL float64          `json:"p_duration_above_ttl"` // from the distribution itself
	Rows           []worker.RiskRow `json:"profiles"`
	Options        RiskOptions      `json:"-"`
}

// Risk estimates lock expiries and duplicate side effects per million
// jobs by Monte Carlo: each job is one small simulation (its own business
// key, durations drawn from the distribution, a duplicate delivery with
// probability DupRate at a random moment of its run, a crash with
// probability CrashRate at a random point), run by the same engine and
// worker core as every scenario. Keys are independent, so one job per run
// is exact for per-key effects; contention between keys is not modelled.
func Risk(ctx context.Context, o RiskOptions) (*RiskResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	meter := progress.Or(o.Progress)
	defer meter.Done()
	meter.SetTotal(int64(o.Jobs * len(o.Profiles)))
	res := &RiskResult{Options: o}
	const samples = 100_000
	above := 0
	for i := 0; i < samples; i++ {
		if o.Duration.Sample((float64(i)+0.5)/samples) > o.LockTTL {
			above++
		}
	}
	res.PLongerThanTTL = float64(above) / samples
	points := []worker.Point{worker.PointAfterReceive, worker.PointAfterLock, worker.PointAfterReserve,
		worker.PointBeforeEffect, worker.PointAfterEffect, worker.PointAfterCommit, worker.PointBeforeAck}
	for _, p := range o.Profiles {
		cfg := DefaultConfig()
		cfg.Profile = p
		cfg.Workers = max(2, min(o.Workers, 4))
		cfg.Jobs, cfg.Keys = 1, 1
		cfg.Duration, cfg.LockTTL, cfg.AckTimeout = o.Duration, o.LockTTL, o.AckTimeout
		cfg.Faults = Faults{Crash: 1, CrashAt: allPoints}
		cfg.MaxSteps = 10_000
		e := &engine{cfg: &cfg}
		var expiries, dups, losses, dead int
		var buf []Action
		for j := 0; j < o.Jobs; j++ {
			if j&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				meter.Add(int64(min(1024, o.Jobs-j)))
			}
			seed := mix(o.Seed, uint64(j))
			r := newRNG(seed ^ 0x9e3779b97f4a7c15)
			cfg.DupAt = 0
			if r.float() < o.DupRate {
				// The copy arrives while the first run may still be going:
				// uniformly within its duration plus one TTL.
				d1 := cfg.Duration.draw(seed, 1)
				cfg.DupAt = 1 + int64(r.float()*float64(d1+cfg.LockTTL))
			}
			crashAt := worker.PointNone
			if r.float() < o.CrashRate {
				crashAt = points[r.intn(len(points))]
			}
			e.reset(seed)
			buf = e.runPolicy(crashAt, buf)
			st := &e.s
			expiries += int(st.LockExpiries)
			dups += int(st.Dups)
			losses += e.lost()
			for _, m := range st.Msgs {
				if m.State == msgDead {
					dead++
				}
			}
		}
		n := float64(o.Jobs)
		per := func(x int) float64 { return float64(x) / n * 1e6 }
		res.Rows = append(res.Rows, worker.RiskRow{
			Profile: p.Name, Jobs: o.Jobs,
			LockExpiriesPerM: per(expiries), DuplicatesPerM: per(dups), LossesPerM: per(losses), DeadLetteredPerM: per(dead),
			DuplicatesCI95High: upper95(dups, o.Jobs) * 1e6,
		})
	}
	return res, nil
}

// upper95 is the upper end of a 95% Wilson interval for k events in n
// trials, so "0 duplicates in 100,000 jobs" reads as "fewer than 38 per
// million", not as "never".
func upper95(k, n int) float64 {
	if n == 0 {
		return 0
	}
	const z = 1.959964
	nn := float64(n)
	if k > n {
		// More duplicates than jobs (a job redelivered again and again
		// past the ack timeout): not a proportion, a count. The score
		// interval of a Poisson rate.
		kk := float64(k)
		return (kk + z*z/2 + z*math.Sqrt(kk+z*z/4)) / nn
	}
	p := float64(k) / nn
	den := 1 + z*z/nn
	center := p + z*z/(2*nn)
	margin := z * math.Sqrt(p*(1-p)/nn+z*z/(4*nn*nn))
	return (center + margin) / den
}

// runPolicy runs one job with the default policy (the first possible
// step: workers in order, the clock when all wait), crashing worker 1 the
// first time it reaches crashAt.
func (e *engine) runPolicy(crashAt worker.Point, buf []Action) []Action {
	crashed := false
	for int(e.s.Steps) < e.cfg.MaxSteps {
		buf = e.enabled(buf[:0])
		next := Action(0)
		for _, a := range buf {
			k := a.Kind()
			if k == aCrash && !crashed && crashAt != worker.PointNone && e.s.W[a.Arg()].At.Has(crashAt) {
				next = a
				crashed = true
				break
			}
			if next == 0 && (k == aStep || k == aTick) {
				next = a
			}
		}
		if next == 0 {
			return buf
		}
		e.apply(next)
	}
	return buf
}
