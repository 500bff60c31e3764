package simulate

import (
	"context"
	"time"

	"github.com/dupctl/dupctl/internal/sim/live"
)

// LiveOptions are the --live flags.
type LiveOptions struct {
	Enabled     bool
	AllowRemote bool
	Scale       time.Duration
}

// runLive plays the scenario's plan on the real servers under each profile
// and compares every verdict with the simulator's.
func runLive(ctx context.Context, o *ScenarioOptions) error {
	g := o.Factory.Global
	res, err := live.RunScenario(ctx, live.ScenarioOptions{
		Scenario: o.Scenario, Profiles: o.Sim.Profiles, Tune: o.Sim.Tune, MaxStates: o.Sim.MaxStates,
		RedisURL: g.RedisURL, PGURL: g.DatabaseURL, AMQPURL: g.AMQPURL, Scale: o.Live.Scale, AllowRemote: o.Live.AllowRemote,
		Progress: o.Factory.IO.StartProgress("simulate "+o.Scenario.Name+" --live", "profiles"),
	})
	if err != nil {
		return err
	}
	return o.Factory.Emit(ctx, liveDocument(res, g.Verbose))
}
