package ttl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/worker"
)

// Simulator is the simulator's risk mode as inspect ttl asks for it: for
// durations drawn from a job type's measured runs, the lock expiries and
// duplicate side effects per million jobs each profile shows under a lock
// TTL. The caller gives it (internal/cli wires internal/sim), so inspect
// ttl does not compile the simulator.
type Simulator interface {
	Risk(ctx context.Context, q RiskQuery) (RiskEstimate, error)
	// DuplicatesRule is the rule an estimate of duplicates is reported
	// under (the simulator's own).
	DuplicatesRule() findings.Rule
}

// RiskQuery is one estimate: durations drawn from Durations, a lock of
// LockTTLMS, and the delivery faults.
type RiskQuery struct {
	Durations    []time.Duration
	LockTTLMS    int64
	AckTimeoutMS int64
	Workers      int
	Jobs         int
	DupRate      float64
	CrashRate    float64
	Profiles     []worker.Profile
	Seed         uint64
}

// RiskEstimate is the share of runs longer than the TTL (from the
// durations themselves) and each profile's expected damage.
type RiskEstimate struct {
	PLongerThanTTL float64
	Rows           []worker.RiskRow
}

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
// and the safe consumer flow under the measured TTL.
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
	TTLMS          float64          `json:"ttl_ms"`
	PLongerThanTTL float64          `json:"p_duration_above_ttl"`
	Profiles       []worker.RiskRow `json:"profiles"`
	TTL            time.Duration    `json:"-"`
}

// simSamples is how many points of a job type's distribution the
// simulator draws from.
const simSamples = 10_000

// Simulate estimates duplicates per million jobs for every job type with
// a TTL and enough runs, into res (Report turns the estimates under the
// current TTL into findings).
func Simulate(ctx context.Context, s Simulator, res *Result, o SimulateOptions) error {
	if s == nil {
		return errors.New("simulate: no simulator given")
	}
	res.simulated, res.riskRule = true, s.DuplicatesRule()
	meter := progress.Or(o.Progress)
	defer meter.Done()
	for i := range res.JobTypes {
		js := &res.JobTypes[i]
		if js.TTL <= 0 || js.Runs < int64(res.MinSamples) {
			continue
		}
		points := js.series.points(simSamples)
		if len(points) == 0 {
			return fmt.Errorf("simulate %s: no durations", js.JobType)
		}
		js.Simulation = &Simulation{Jobs: o.Jobs, DupRate: o.DupRate, CrashRate: o.CrashRate, AckTimeoutMS: int64(ms(o.AckTimeout)),
			Seed: o.Seed}
		var err error
		if js.Simulation.Current, err = o.risk(ctx, s, points, js.TTL); err != nil {
			return fmt.Errorf("simulate %s: %w", js.JobType, err)
		}
		if int64(ms(js.Recommended)) != int64(ms(js.TTL)) {
			rec, err := o.risk(ctx, s, points, js.Recommended)
			if err != nil {
				return fmt.Errorf("simulate %s: %w", js.JobType, err)
			}
			js.Simulation.Recommended = &rec
		}
		meter.Add(1)
	}
	return nil
}

// simFindings are one job type's estimates under its current TTL, under
// the simulator's rule.
func simFindings(rule findings.Rule, js *JobStats) []findings.Finding {
	if js.Simulation == nil {
		return nil
	}
	var out []findings.Finding
	for _, row := range js.Simulation.Current.Profiles {
		if row.DuplicatesPerM > 0 {
			out = append(out, rule.New(js.JobType+" / profile "+row.Profile,
				fmt.Sprintf("about %.0f duplicate side effects per million jobs under lock TTL %s", row.DuplicatesPerM, FormatDuration(js.TTL)),
				fmt.Sprintf("%s jobs simulated from the measured durations; lock expiries %.0f/M, duplicates 95%% upper bound %.0f/M",
					count(int64(row.Jobs)), row.LockExpiriesPerM, row.DuplicatesCI95High)))
		}
	}
	return out
}

func (o SimulateOptions) risk(ctx context.Context, s Simulator, points []time.Duration, ttl time.Duration) (SimTTL, error) {
	rr, err := s.Risk(ctx, RiskQuery{Durations: points, LockTTLMS: max(int64(ms(ttl)), 1), AckTimeoutMS: int64(ms(o.AckTimeout)),
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
