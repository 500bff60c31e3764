package simulate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/sim/live"
	"github.com/dupctl/dupctl/internal/worker"
)

// ScenarioOptions are one `dupctl simulate <scenario>` run.
type ScenarioOptions struct {
	Factory  *cmdutil.Factory
	Scenario *sim.Scenario
	Sim      sim.Options
	Demo     bool // no profile chosen: the faulty and safe pair
	Live     LiveOptions
	// LockTTLGiven: --lock-ttl was given, so a job's lock_ttl does not
	// replace it.
	LockTTLGiven bool
}

func newCmdScenario(f *cmdutil.Factory, sc *sim.Scenario, runF func(*ScenarioOptions) error) *cobra.Command {
	var fl scenarioFlags
	cmd := &cobra.Command{
		Use:     sc.Name,
		Short:   sc.Title,
		Long:    fmt.Sprintf(scenarioLong, upperFirst(sc.Title), sc.Cause, sc.Faulty, sc.Safe) + exitStatus,
		Example: fmt.Sprintf(scenarioExample, sc.Name),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := fl.options(f, sc, cmd.Flags().Changed("lock-ttl"))
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.Live.Enabled {
				return runLive(cmd.Context(), opts)
			}
			return runScenario(cmd.Context(), opts)
		},
	}
	fl.register(cmd.Flags(), sc)
	cmdutil.FieldFlags(cmd, fieldFlags)
	cmdutil.FieldFlags(cmd, map[string]string{"Scale": "time-scale"})
	if _, err := chaos.SpecFor(sc.Name); err != nil {
		noWorker(cmd, err.(*problem.Input).Why)
	} else {
		withWorker(cmd, sc)
	}
	_ = cmd.RegisterFlagCompletionFunc("profile", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append(worker.ProfileNames(), "all"), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// scenarioLong is a scenario's help: its title, its cause, and its faulty
// and safe profiles.
const scenarioLong = `%s.

%s

Without flags: the %s profile shows the duplicate, the %s profile prevents
it; both are explored exhaustively in a small scope (every interleaving and
fault placement), and the shortest failing schedule is shown as a timeline.`

// scenarioExample is a scenario's examples, for its name.
const scenarioExample = `  dupctl simulate %[1]s
  dupctl simulate %[1]s --profile all
  dupctl simulate %[1]s --explore random --runs 100000 --seed 7
  dupctl simulate %[1]s -o json`

// scenarioFlags are a scenario's flags as given, which options checks and
// turns into ScenarioOptions.
type scenarioFlags struct {
	sys             systemFlags
	seed            uint64
	runs, maxStates int
	explore, shard  string
	live            LiveOptions
}

func (fl *scenarioFlags) register(fs *pflag.FlagSet, sc *sim.Scenario) {
	fl.sys.register(fs, sc.Name == "crash")
	fs.StringVar(&fl.explore, "explore", sim.ExploreExhaustive, "exhaustive (every schedule of the scope) or random (seeded schedules)")
	fs.Uint64Var(&fl.seed, "seed", 1, "seed of random exploration")
	fs.IntVar(&fl.runs, "runs", 100_000, "schedules to run with --explore random")
	fs.IntVar(&fl.maxStates, "max-states", 5_000_000, "stop exhaustive exploration after this many states")
	fs.StringVar(&fl.shard, "shard", "", "explore only part k of n (k/n), to split the work across CI jobs")
	fs.BoolVar(&fl.live.Enabled, "live", false, "play the scenario's fault plan on the real Redis, PostgreSQL and RabbitMQ "+
		"(--redis-url, --database-url, --amqp-url) and compare with the simulator")
	fs.BoolVar(&fl.live.AllowRemote, "allow-remote", false, "with --live: allow servers that are not on loopback "+
		"(a live run creates and removes queues, a schema and keys)")
	fs.DurationVar(&fl.live.Scale, "time-scale", 20*time.Millisecond, "with --live: real time one virtual second takes")
}

// options checks the flags and builds the run's options; lockTTLGiven
// says --lock-ttl was given.
func (fl *scenarioFlags) options(f *cmdutil.Factory, sc *sim.Scenario, lockTTLGiven bool) (*ScenarioOptions, error) {
	profiles, err := fl.sys.profiles(sc)
	if err != nil {
		return nil, err
	}
	tuning := fl.sys.tuning()
	if err := tuning.Validate(); err != nil {
		return nil, err
	}
	sh, err := sim.ParseShard(fl.shard)
	if err != nil {
		return nil, err
	}
	o := sim.Options{Scenario: sc, Profiles: profiles, Tune: tuning.Apply, Explore: fl.explore,
		Seed: fl.seed, Runs: fl.runs, MaxStates: fl.maxStates, Shard: sh}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if fl.live.Enabled {
		if err := (live.ScenarioOptions{Scale: fl.live.Scale}).Validate(); err != nil {
			return nil, err
		}
	}
	return &ScenarioOptions{Factory: f, Scenario: sc, Demo: len(profiles) == 0, Live: fl.live, LockTTLGiven: lockTTLGiven, Sim: o}, nil
}

// noWorker words an unknown flag for a scenario that has no --worker run:
// --worker says why.
func noWorker(cmd *cobra.Command, why string) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if unknownFlag(err) == "worker" {
			return exitcode.UsageErrorf("--worker: %s", why)
		}
		return &exitcode.Error{Code: exitcode.Usage, Err: err, Hint: "see '" + c.CommandPath() + " --help'"}
	})
}

// withWorker points a scenario that has a --worker run at it: in the
// help, and from a flag only that run knows.
func withWorker(cmd *cobra.Command, sc *sim.Scenario) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		switch unknownFlag(err) {
		case "at":
			return exitcode.UsageErrorf("--at picks a fault point of a --worker run; the simulator's %s explores every placement", sc.Name)
		case "":
			return &exitcode.Error{Code: exitcode.Usage, Err: err, Hint: "see '" + c.CommandPath() + " --help'"}
		}
		return &exitcode.Error{Code: exitcode.Usage, Err: err,
			Hint: "a flag of a --worker run? see 'dupctl simulate " + sc.Name + " --worker CMD --help'"}
	})
	cmd.Long += fmt.Sprintf(`

Your own worker under this scenario's real faults: dupctl simulate %[1]s
--worker CMD ... (its flags: dupctl simulate %[1]s --worker CMD --help).`, sc.Name)
	cmd.Example += fmt.Sprintf(`
  # your own worker under real faults (docs/worker-chaos.md)
  dupctl simulate %s --worker ./payments-worker --worker-env AMQP_URL={amqp} `+
		`--publish payments:charge --effects-sql '...'`, sc.Name)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func runScenario(ctx context.Context, o *ScenarioOptions) error {
	o.Sim.Progress = o.Factory.IO.StartProgress("simulate "+o.Scenario.Name, "states")
	res, err := sim.Run(ctx, o.Sim)
	if err != nil {
		return err
	}
	return o.Factory.Emit(ctx, scenarioDocument(res, o.Factory.Global.Verbose))
}
