package ttl

import (
	"context"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
)

// SimulateOptions feed the measured durations into the simulator's risk
// mode.
type SimulateOptions struct {
	Jobs       int
	DupRate    float64
	CrashRate  float64
	AckTimeout time.Duration
	Profiles   []worker.Profile
	Seed       uint64
	Progress   progress.Meter
}

// DefaultSimProfiles compare no idempotency, the common check-then-act,
// and the seed's safe flow under the measured TTL.
var DefaultSimProfiles = []string{"lock-only", "lock-check", "safe"}

// Simulation is one job type's estimate under its current TTL and, for
// comparison, under the recommended one.
type Simulation struct {
	Jobs         int     `json:"jobs"`
	DupRate      float64 `json:"dup_rate"`
	CrashRate    float64 `json:"crash_rate"`
	AckTimeoutMS int64   `json:"ack_timeout_ms"`
	Seed         uint64  `json:"seed"`
	Current      SimTTL  `json:"current"`
	// Recommended is absent when it equals the current TTL.
	Recommended *SimTTL `json:"recommended,omitempty"`
}

// SimTTL is the estimate under one TTL.
type SimTTL struct {
	TTLMS          float64       `json:"ttl_ms"`
	PLongerThanTTL float64       `json:"p_duration_above_ttl"`
	Profiles       []sim.RiskRow `json:"profiles"`
	TTL            time.Duration `json:"-"`
}

// simSamples is how many points of a job type's distribution the
// simulator draws from.
const simSamples = 10_000

// Simulate estimates duplicates per million jobs for every job type with
// a TTL and enough runs, into res (Report turns the estimates under the
// current TTL into findings).
func Simulate(ctx context.Context, res *Result, o SimulateOptions) error {
	res.simulated = true
	meter := progress.Or(o.Progress)
	defer meter.Done()
	for i := range res.JobTypes {
		js := &res.JobTypes[i]
		if js.TTL <= 0 || js.Runs < int64(res.MinSamples) {
			continue
		}
		dist, err := sim.Empirical(js.series.points(simSamples))
		if err != nil {
			return fmt.Errorf("simulate %s: %w", js.JobType, err)
		}
		js.Simulation = &Simulation{Jobs: o.Jobs, DupRate: o.DupRate, CrashRate: o.CrashRate, AckTimeoutMS: int64(ms(o.AckTimeout)), Seed: o.Seed}
		if js.Simulation.Current, err = o.risk(ctx, dist, js.TTL); err != nil {
			return fmt.Errorf("simulate %s: %w", js.JobType, err)
		}
		if int64(ms(js.Recommended)) != int64(ms(js.TTL)) {
			rec, err := o.risk(ctx, dist, js.Recommended)
			if err != nil {
				return fmt.Errorf("simulate %s: %w", js.JobType, err)
			}
			js.Simulation.Recommended = &rec
		}
		meter.Add(1)
	}
	return nil
}

// simFindings are one job type's estimates under its current TTL.
func simFindings(js *JobStats) []findings.Finding {
	if js.Simulation == nil {
		return nil
	}
	var out []findings.Finding
	for _, row := range js.Simulation.Current.Profiles {
		if row.DuplicatesPerM > 0 {
			out = append(out, sim.RuleRiskDuplicates.New(js.JobType+" / profile "+row.Profile,
				fmt.Sprintf("about %.0f duplicate side effects per million jobs under lock TTL %s", row.DuplicatesPerM, FormatDuration(js.TTL)),
				fmt.Sprintf("%s jobs simulated from the measured durations; lock expiries %.0f/M, duplicates 95%% upper bound %.0f/M",
					count(int64(row.Jobs)), row.LockExpiriesPerM, row.DuplicatesCI95High)))
		}
	}
	return out
}

func (o SimulateOptions) risk(ctx context.Context, dist sim.Dist, ttl time.Duration) (SimTTL, error) {
	rr, err := sim.Risk(ctx, sim.RiskOptions{Duration: dist, LockTTL: max(int64(ms(ttl)), 1), AckTimeout: int64(ms(o.AckTimeout)),
		Workers: 4, Jobs: o.Jobs, DupRate: o.DupRate, CrashRate: o.CrashRate, Profiles: o.Profiles, Seed: o.Seed})
	if err != nil {
		return SimTTL{}, err
	}
	return SimTTL{TTLMS: msRound(ttl), PLongerThanTTL: rr.PLongerThanTTL, Profiles: rr.Rows, TTL: ttl}, nil
}

// points returns up to n durations that follow the series' distribution:
// every run when there are few, evenly spaced ranks of the sorted runs, or
// the sketch's quantiles at evenly spaced ranks.
func (s *series) points(n int) []time.Duration {
	if s.sketch == nil && len(s.exact) <= n {
		return s.exact
	}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = s.quantile((float64(i) + 0.5) / float64(n))
	}
	return out
}
