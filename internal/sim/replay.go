package sim

import (
	"context"
	"fmt"
)

// ReplayOptions choose what one `dupctl simulate replay` replays.
type ReplayOptions struct {
	// Schedule is the schedule to replay, as ParseToken read it.
	Schedule Schedule
}

// ReplayResult is one schedule replayed from its token, and the same
// schedule under every profile.
type ReplayResult struct {
	Schedule       Schedule
	Scenario       *Scenario
	Timeline       Timeline
	Stats          Stats
	Found          Violation
	Counterfactual []Counterfactual
}

// Replay replays a token's schedule exactly. An error means the token does
// not fit this simulator (a token from another build).
func Replay(ctx context.Context, o ReplayOptions) (*ReplayResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := o.Schedule
	tl, stats, found, ok := record(r)
	if !ok {
		return nil, fmt.Errorf("replay token does not fit this simulator: its schedule diverged at step %d", len(tl.Events))
	}
	sc, _ := ScenarioByName(r.Scenario)
	return &ReplayResult{Schedule: r, Scenario: sc, Timeline: tl, Stats: stats, Found: found, Counterfactual: counterfactuals(r, "")}, nil
}
