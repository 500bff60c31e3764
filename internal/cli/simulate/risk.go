package simulate

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

// RiskOptions are one `dupctl simulate risk` run.
type RiskOptions struct {
	Factory *cmdutil.Factory
	Risk    sim.RiskOptions
}

// NewCmdRisk is `dupctl simulate risk`.
func NewCmdRisk(f *cmdutil.Factory, runF func(*RiskOptions) error) *cobra.Command {
	var duration string
	var ttl, ack time.Duration
	var workers, jobs int
	var dupRate, crashRate float64
	var profiles []string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "risk",
		Short: "Estimate lock expiries and duplicate side effects per million jobs from a job-duration distribution",
		Long: `Risk turns "the TTL is too short" into numbers. Each job is simulated with
the worker core under every profile: its duration drawn from
--job-duration, a second delivery with probability --dup-rate at a random
moment of its run, a crash with probability --crash-rate at a random point
of the flow. The result is lock expiries, duplicate side effects, lost jobs
and dead-lettered messages per million jobs, with a 95% upper bound on
duplicates (0 in 100,000 jobs is not "never").

Jobs are independent (one business key each): contention between keys is
not modelled.` + exitStatus,
		Example: `  dupctl simulate risk --job-duration p50=30s,p99=5m --lock-ttl 2m
  dupctl simulate risk --job-duration p50=30s,p99=5m --lock-ttl 2m --profile lock-check,lock-renew,safe
  dupctl simulate risk --job-duration 45m --ack-timeout 30m --lock-ttl 10m -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := sim.RiskOptions{LockTTL: sim.Millis(ttl), AckTimeout: sim.Millis(ack), Workers: workers, Jobs: jobs,
				DupRate: dupRate, CrashRate: crashRate, Seed: seed}
			var err error
			if duration != "" {
				if o.Duration, err = sim.ParseJobDuration(duration); err != nil {
					return err
				}
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if o.Profiles, err = sim.ParseProfiles(profiles); err != nil {
				return err
			}
			opts := &RiskOptions{Factory: f, Risk: o}
			if runF != nil {
				return runF(opts)
			}
			return runRisk(cmd.Context(), opts)
		},
	}
	cmdutil.FieldFlags(cmd, fieldFlags)
	fs := cmd.Flags()
	fs.StringVar(&duration, "job-duration", "", "job durations: p50=30s,p99=5m (lognormal) or a fixed 45s")
	fs.DurationVar(&ttl, "lock-ttl", 2*time.Minute, "lock TTL")
	fs.DurationVar(&ack, "ack-timeout", 30*time.Minute, "broker consumer timeout (RabbitMQ's default is 30m; 0: none)")
	fs.IntVar(&workers, "workers", 4, "workers (at most 4 take part in one job's run)")
	fs.IntVar(&jobs, "jobs", 100_000, "jobs to simulate per profile")
	fs.Float64Var(&dupRate, "dup-rate", 0.01, "share of jobs delivered twice (publisher retries, redeliveries)")
	fs.Float64Var(&crashRate, "crash-rate", 0.001, "share of jobs whose worker dies mid-flow")
	fs.StringSliceVar(&profiles, "profile", nil, "profiles to estimate (default: all)")
	fs.Uint64Var(&seed, "seed", 1, "seed")
	return cmd
}

func runRisk(ctx context.Context, o *RiskOptions) error {
	o.Risk.Progress = o.Factory.IO.StartProgress("simulate risk", "jobs")
	res, err := sim.Risk(ctx, o.Risk)
	if err != nil {
		return err
	}
	return o.Factory.Emit(ctx, report.Document{Report: res.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeRisk(w, th, res)
	}})
}
