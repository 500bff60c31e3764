package simulate

import (
	"context"
	"time"

	"github.com/dupctl/dupctl/internal/sim"
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
	tune := o.Sim.Tune
	job, err := o.Factory.Job()
	if err != nil {
		return err
	}
	if job != nil && job.LockTTL > 0 && !o.LockTTLGiven {
		// The job's own lock TTL from dupctl.yaml, as its workers run.
		ttl := sim.Millis(time.Duration(job.LockTTL))
		tune = func(c *sim.Config) error {
			c.LockTTL = ttl
			if o.Sim.Tune != nil {
				return o.Sim.Tune(c)
			}
			return nil
		}
	}
	res, err := live.Scenario(ctx, live.ScenarioOptions{
		Scenario: o.Scenario, Profiles: o.Sim.Profiles, Tune: tune, MaxStates: o.Sim.MaxStates,
		RedisURL: g.RedisURL, PGURL: g.DatabaseURL, AMQPURL: g.AMQPURL, Scale: o.Live.Scale, AllowRemote: o.Live.AllowRemote,
		Progress: o.Factory.IO.StartProgress("simulate "+o.Scenario.Name+" --live", "profiles"),
	})
	if err != nil {
		return err
	}
	return o.Factory.Emit(ctx, liveDocument(res, g.Verbose))
}
