package inspect

import (
	"context"

	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/sim"
)

// simulator is the simulator's risk mode as inspect ttl asks for it
// (ttl.Simulator): the command wires the two capabilities together, so
// neither imports the other.
type simulator struct{}

func (simulator) Risk(ctx context.Context, q ttl.RiskQuery) (ttl.RiskEstimate, error) {
	dist, err := sim.Empirical(q.Durations)
	if err != nil {
		return ttl.RiskEstimate{}, err
	}
	rr, err := sim.Risk(ctx, sim.RiskOptions{Duration: dist, LockTTL: q.LockTTLMS, AckTimeout: q.AckTimeoutMS, Workers: q.Workers,
		Jobs: q.Jobs, DupRate: q.DupRate, CrashRate: q.CrashRate, Profiles: q.Profiles, Seed: q.Seed})
	if err != nil {
		return ttl.RiskEstimate{}, err
	}
	return ttl.RiskEstimate{PLongerThanTTL: rr.PLongerThanTTL, Rows: rr.Rows}, nil
}

func (simulator) DuplicatesRule() findings.Rule { return sim.RuleRiskDuplicates }
