package simulate

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// WorkerOptions are one `dupctl simulate <scenario> --worker CMD` run: the
// scenario played on the user's own worker under real faults, through
// dupctl's proxies. It is its own command (NewCmdScenarioWorker) with the
// same command line as the simulator's scenario: a command line with
// --worker is parsed by it (IsWorkerRun), so its help, flags and defaults
// are the worker run's, not the model's.
type WorkerOptions struct {
	Factory  *cmdutil.Factory
	Scenario *sim.Scenario
	Chaos    chaos.Options
	// RunsGiven: --runs was given (else one run per fault point).
	RunsGiven bool
	At        []string
	Slow      []string
	WorkerLog string
	Log       cmdutil.LogFlags
	// mapping is set when a --field, --event or --mapping flag was given.
	mapping bool
	cmd     *cobra.Command
}

// IsWorkerRun reports whether a command line runs a scenario on the
// user's own worker (simulate <scenario> ... --worker CMD).
func IsWorkerRun(args []string) bool {
	sim, worker := false, false
	for _, a := range args {
		switch {
		case a == "--":
			return sim && worker
		case a == "simulate":
			sim = true
		case a == "--worker" || strings.HasPrefix(a, "--worker="):
			worker = true
		}
	}
	return sim && worker
}

// NewCmdScenarioWorker is `dupctl simulate <scenario> --worker CMD`.
func NewCmdScenarioWorker(f *cmdutil.Factory, sc *sim.Scenario, runF func(*WorkerOptions) error) *cobra.Command {
	spec, _ := chaos.SpecFor(sc.Name)
	o := &WorkerOptions{Factory: f, Scenario: sc}
	points := make([]string, len(spec.Points))
	for i, p := range spec.Points {
		points[i] = string(p)
	}
	cmd := &cobra.Command{
		Use:   sc.Name + " --worker CMD",
		Short: "Play " + sc.Name + " on your own worker under real faults",
		Long: fmt.Sprintf(`Simulate %[1]s --worker plays the %[1]s scenario on your own worker command, not
on dupctl's model: %[2]d copies of it (--workers) consume a workload of --jobs
business keys published to --publish, through dupctl's AMQP, Redis and
PostgreSQL proxies, which inject the scenario's fault for real at one point
of the flow per run (--at: %[3]s). The side effects are counted by
--effects-sql or --effects-log, and each business key is judged from what
the proxies saw: ok, a duplicate with its cause, a loss, or a run whose fault
condition never happened. docs/worker-chaos.md has recipes for Go, shell,
Python and Spring Boot workers.`, sc.Name, chaos.DefaultWorkers, strings.Join(points, ", ")) +
			replicaHelp(sc.Name) + failoverHelp(sc.Name) + workerExitStatus,
		Example: fmt.Sprintf(`  dupctl simulate %s --worker ./payments-worker --worker-env AMQP_URL={amqp} \
    --worker-env REDIS_URL={redis} --worker-env DATABASE_URL={postgres} \
    --publish payments:charge --effects-sql 'select order_id, count(*) from charges group by 1'`, sc.Name),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd = cmd
			fs := cmd.Flags()
			o.RunsGiven = fs.Changed("runs")
			o.mapping = fs.Changed("field") || fs.Changed("event") || fs.Changed("mapping")
			if !cmd.Flags().Changed("fail-on") {
				// A chaos run is a test: a warning (a lock lost unnoticed, a
				// key the log cannot decide) fails it unless told otherwise.
				f.Global.FailOn = "warn"
				if err := f.ParseFailOn(); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(o)
			}
			return runScenarioWorker(cmd.Context(), o)
		},
	}
	o.register(cmd, points)
	cmdutil.FieldFlags(cmd, map[string]string{"Env": "worker-env", "Keys": "jobs", "ReplicaURL": "replica-url", "ReplicaLag": "replica-lag"})
	model := newCmdScenario(f, sc, nil).Flags()
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// A flag of the simulator's model worker says what it is.
		if name := unknownFlag(err); name != "" && model.Lookup(name) != nil {
			return exitcode.UsageErrorf("--%s describes dupctl's simulated worker; with --worker your worker's own code decides it", name)
		}
		return &exitcode.Error{Code: exitcode.Usage, Err: err, Hint: "see 'dupctl simulate " + sc.Name + " --worker CMD --help'"}
	})
	return cmd
}

// replicaHelp is what replica-lag changes, and where.
func replicaHelp(scenario string) string {
	if scenario != "replica-lag" {
		return ""
	}
	return `

The workers read "already done?" through {replica} (e.g. --worker-env
READ_DATABASE_URL={replica}), dupctl's proxy in front of --replica-url, a
streaming standby of --database-url. As the victim's first write goes to the
primary, dupctl pauses the standby's WAL replay (pg_wal_replay_pause: the one
change it makes there, and only in this scenario); when the write commits it
publishes a second message. Replay resumes once that message was handled,
after --replica-lag at the latest, and when the run ends. The standby must be
on loopback unless --allow-remote.`
}

// failoverHelp is what failover changes on a Sentinel setup.
func failoverHelp(scenario string) string {
	if scenario != "failover" {
		return ""
	}
	return `

With --redis-url redis+sentinel://... the failover is real: before the
victim's lock command is forwarded, dupctl cuts every replica off the master
(CONFIG SET masterauth to a wrong one, CLIENT KILL TYPE master); right after
the lock answered OK it sends SENTINEL FAILOVER, gives the replicas their
masterauth back once one was promoted, and looks for the lock on the new
master: missing, the lock was lost and a second message is published; found,
the run proves nothing. The replicas must be on loopback unless
--allow-remote. With a plain redis:// URL the failover is played at dupctl's
proxy (the lock key deleted, the workers' connections dropped).`
}

// unknownFlag is the flag name pflag's "unknown flag: --NAME" error names.
func unknownFlag(err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	return name
}

var workerExitStatus = cmdutil.ExitStatus(map[int]string{
	1: "findings at or above --fail-on, which is warn for a worker run unless given (a duplicate, a loss,\n" +
		"a run whose fault never happened, a key the effects log cannot decide)",
	3: "a system or the worker could not be reached, or a runtime failure"})

func (o *WorkerOptions) register(cmd *cobra.Command, points []string) {
	c := &o.Chaos
	fs := cmd.Flags()
	fs.StringVar(&c.Worker, "worker", "", "your worker command (run with /bin/sh -c), one copy per --workers")
	_ = cmd.MarkFlagRequired("worker")
	fs.StringArrayVar(&c.Env, "worker-env", nil, "NAME=VALUE for the workers; {amqp}, {redis}, {postgres}, {replica} (and _addr, _port, "+
		"{postgres_jdbc}), {prefix} and {worker} are filled in (repeatable)")
	fs.StringVar(&c.ReplicaURL, "replica-url", "", "a streaming standby of --database-url the workers read through {replica} "+
		"(env DUPCTL_REPLICA_URL); replica-lag pauses its WAL replay during a run")
	fs.StringVar(&c.Publish, "publish", "",
		"EXCHANGE:ROUTING_KEY the workload is published to (:QUEUE for the default exchange; {prefix} is filled in)")
	fs.StringVar(&c.Body, "body", chaos.DefaultBody, "message body; {{key}} is the business key")
	fs.StringVar(&c.EffectsSQL, "effects-sql", "", "read-only query counting side effects: business key, count[, distinct idempotency keys]")
	fs.StringVar(&c.EffectsLog, "effects-log", "", "count side effects in the workers' logs instead, read as audit logs reads them: "+
		"- for their stdout and stderr, or the file they log to")
	o.Log.RegisterMapping(cmd, "with --effects-log: ")
	fs.StringVar(&c.CacheKeys, "cache-keys", "", "glob of the status cache's Redis keys (stale-cache makes their writes lag by --cache-lag)")
	fs.StringSliceVar(&o.Slow, "slow", nil, "add latency to a service's replies, e.g. redis=50ms,postgres=20ms")
	fs.StringVar(&o.WorkerLog, "worker-log", "", "show the workers' output on stderr, each line prefixed with its copy (-), "+
		"and with a PATH also write each copy's own output, unprefixed, to PATH.SEED.ATTEMPT.COPY.log")
	fs.DurationVar(&c.Settle, "settle", chaos.DefaultSettle, "quiet period that ends a run")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", time.Minute, "how long a worker may take to start consuming")
	fs.DurationVar(&c.RunTimeout, "run-timeout", 2*time.Minute, "limit on one run")
	if len(points) > 1 {
		fs.StringSliceVar(&o.At, "at", nil, "fault only at these points of the flow: "+strings.Join(points, ", "))
	}
	fs.IntVar(&c.Workers, "workers", chaos.DefaultWorkers, "copies of the worker")
	fs.IntVar(&c.Keys, "jobs", chaos.DefaultKeys, "business keys in the workload")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the fault's victim and the workload's order")
	fs.IntVar(&c.Runs, "runs", 0, "runs (default: one per fault point)")
	if o.Scenario.Name == "lock-expiry" {
		fs.DurationVar(&c.Pause, "pause", 0, "how long the lock holder is stopped (default: the lock's TTL plus a margin)")
	}
	if o.Scenario.Name == "replica-lag" {
		fs.DurationVar(&c.ReplicaLag, "replica-lag", chaos.DefaultReplicaLag,
			"how long WAL replay on --replica-url stays paused at most (it resumes once the second message was handled)")
	}
	if o.Scenario.Name == "stale-cache" {
		fs.DurationVar(&c.CacheLag, "cache-lag", chaos.DefaultCacheLag, "how long writes to --cache-keys are held back")
	}
	fs.BoolVar(&c.AllowRemote, "allow-remote", false,
		"allow servers that are not on loopback (a run creates and removes queues, tables' rows and keys)")
}

// runScenarioWorker runs the scenario on the user's worker.
func runScenarioWorker(ctx context.Context, o *WorkerOptions) error {
	f, sc := o.Factory, o.Scenario
	spec, err := chaos.SpecFor(sc.Name)
	if err != nil {
		return err
	}
	c := o.Chaos
	c.Scenario = sc.Name
	if c.At, err = chaos.ParsePoints(spec, o.At); err != nil {
		return err
	}
	if !o.RunsGiven {
		c.Runs = max(len(spec.Points), len(c.At)) // one run per fault point
		if len(c.At) > 0 {
			c.Runs = len(c.At)
		}
	}
	g := f.Global
	c.AMQPURL, c.RedisURL, c.DatabaseURL = g.AMQPURL, g.RedisURL, g.DatabaseURL
	if c.ReplicaURL == "" {
		c.ReplicaURL = f.Getenv("DUPCTL_REPLICA_URL")
	}
	if c.Slow, err = parseSlow(o.Slow); err != nil {
		return err
	}
	switch {
	case c.EffectsLog != "":
		if c.LogMapping, err = o.Log.Compile(f.Config); err != nil {
			return err
		}
	case o.mapping:
		return problem.Inputf("EffectsLog", "{Fields}, {Events} and {Mapping} read the effects log: give {EffectsLog} too")
	}
	if err := chaos.Validate(c); err != nil {
		return err
	}
	switch o.WorkerLog {
	case "":
	case "-":
		c.WorkerLog = f.IO.ErrOut
	default:
		// Each copy's output, unprefixed, in a file of its own beside
		// PATH (PATH.<seed>.<attempt>.W1.log), so that one copy can be
		// read as a log (audit logs --explain-mapping); the prefixed view
		// of all copies goes to stderr.
		c.WorkerLog = f.IO.ErrOut
		c.WorkerFile = workerFiles(o.WorkerLog)
	}
	if o.cmd != nil {
		c.Replay = func(seed uint64) string { return replayCommand(o.cmd, seed) }
	}
	deps, err := workerDeps(ctx, f, &c)
	if err != nil {
		return err
	}
	c.Progress = f.IO.StartProgress("simulate "+sc.Name+" --worker", "runs")
	res, err := chaos.Run(ctx, deps, c)
	if err != nil {
		return err
	}
	return f.Emit(ctx, report.Document{Report: res.Report(), Text: func(wr io.Writer, th *report.Theme) error {
		return writeWorkerRuns(wr, th, sc, res)
	}, HTML: func(w io.Writer) error { return writeWorkerHTML(w, sc, res) }})
}

// workerDeps opens dupctl's own connections for the run.
func workerDeps(ctx context.Context, f *cmdutil.Factory, o *chaos.Options) (chaos.Deps, error) {
	var d chaos.Deps
	var err error
	if d.AMQP, err = f.AMQP(ctx); err != nil {
		return d, err
	}
	if d.Postgres, err = f.Postgres(ctx, connect.PostgresOptions{MaxConns: 4}); err != nil {
		return d, err
	}
	if o.RedisURL != "" {
		if d.Redis, err = f.Redis(ctx); err != nil {
			return d, err
		}
	}
	if o.ReplicaURL != "" {
		if d.Replica, err = connect.Postgres(ctx, o.ReplicaURL, connect.PostgresOptions{MaxConns: 2}); err != nil {
			return d, fmt.Errorf("replica (--replica-url): %w", err)
		}
		f.AddCleanup(d.Replica.Close)
	}
	return d, nil
}

func parseSlow(specs []string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, s := range specs {
		name, v, ok := strings.Cut(s, "=")
		d, err := time.ParseDuration(v)
		if !ok || err != nil || d < 0 {
			return nil, problem.Inputf("Slow", "%q: want SERVICE=DURATION, e.g. redis=50ms", s)
		}
		out[name] = d
	}
	return out, nil
}

// replayCommand is the command line that replays one run: the flags the
// user gave, with --seed set to the run's and --runs 1.
func replayCommand(cmd *cobra.Command, seed uint64) string {
	args := []string{cmd.CommandPath()}
	add := func(fl *pflag.Flag) {
		switch fl.Name {
		case "seed", "runs", "output", "worker-log":
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+fl.Name, shellQuote(v))
			}
			return
		}
		if fl.Value.Type() == "bool" {
			args = append(args, "--"+fl.Name)
			return
		}
		args = append(args, "--"+fl.Name, shellQuote(fl.Value.String()))
	}
	cmd.Flags().Visit(add) // the command's own and its parents' persistent flags
	args = append(args, "--seed", strconv.FormatUint(seed, 10), "--runs", "1")
	return strings.Join(args, " ")
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// workerFiles names each worker copy's output file after base: base
// "out.log" gives out.7.1.W1.log for seed 7, attempt 1, copy W1.
func workerFiles(base string) func(seed uint64, attempt int, lane string) (io.WriteCloser, error) {
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if ext == "" {
		ext = ".log"
	}
	return func(seed uint64, attempt int, lane string) (io.WriteCloser, error) {
		name := fmt.Sprintf("%s.%d.%d.%s%s", stem, seed, max(attempt, 1), strings.ReplaceAll(lane, "#", "-"), ext)
		return os.Create(name)
	}
}
