package simulate

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// workerFlags are the flags of `dupctl simulate <scenario> --worker CMD`:
// the scenario played on the user's own worker under real faults. The
// scenario command's --workers, --jobs (business keys), --seed, --runs,
// --at, --pause, --cache-lag and --allow-remote apply too.
type workerFlags struct {
	command    string
	env        []string
	publish    string
	body       string
	effectsSQL string
	effectsLog string
	log        cmdutil.LogFlags
	at         []string // --at, where only worker runs have it
	cacheKeys  string
	slow       []string
	workerLog  string
	settle     time.Duration
	ready      time.Duration
	runTimeout time.Duration
}

func (w *workerFlags) register(cmd *cobra.Command) {
	if _, err := chaos.SpecFor(cmd.Name()); err == nil {
		cmd.Example += fmt.Sprintf(`
  # your own worker under real faults (docs/worker-chaos.md)
  dupctl simulate %s --worker ./payments-worker --worker-env AMQP_URL={amqp} \
    --worker-env REDIS_URL={redis} --worker-env DATABASE_URL={postgres} \
    --publish payments:charge --effects-sql 'select order_id, count(*) from charges group by 1'`, cmd.Name())
	}
	fs := cmd.Flags()
	// crash has --at for the simulator too; the other scenarios with more
	// than one fault point on a worker get it for worker runs only.
	if spec, err := chaos.SpecFor(cmd.Name()); err == nil && len(spec.Points) > 1 && fs.Lookup("at") == nil {
		names := make([]string, len(spec.Points))
		for i, p := range spec.Points {
			names[i] = string(p)
		}
		fs.StringSliceVar(&w.at, "at", nil, "with --worker: fault only at these points: "+strings.Join(names, ", "))
	}
	fs.StringVar(&w.command, "worker", "", "run your own worker command (with /bin/sh -c) under the scenario's real faults, through dupctl's proxies (docs/worker-chaos.md)")
	fs.StringArrayVar(&w.env, "worker-env", nil, "with --worker: NAME=VALUE for the workers; {amqp}, {redis}, {postgres} (and _addr, _port, {postgres_jdbc}), {prefix} and {worker} are filled in (repeatable)")
	fs.StringVar(&w.publish, "publish", "", "with --worker: EXCHANGE:ROUTING_KEY the workload is published to (:QUEUE for the default exchange; {prefix} is filled in)")
	fs.StringVar(&w.body, "body", chaos.DefaultBody, "with --worker: message body; {{key}} is the business key")
	fs.StringVar(&w.effectsSQL, "effects-sql", "", "with --worker: read-only query counting side effects: business key, count[, distinct idempotency keys]")
	fs.StringVar(&w.effectsLog, "effects-log", "", "with --worker: count side effects in the workers' logs instead, read as audit logs reads them: - for their stdout and stderr, or the file they log to")
	w.log.RegisterMapping(cmd, "with --effects-log: ")
	fs.StringVar(&w.cacheKeys, "cache-keys", "", "with --worker: glob of the status cache's Redis keys (stale-cache makes their writes lag by --cache-lag)")
	fs.StringSliceVar(&w.slow, "slow", nil, "with --worker: add latency to a service's replies, e.g. redis=50ms,postgres=20ms")
	fs.StringVar(&w.workerLog, "worker-log", "", "with --worker: write the workers' output to this file (- for stderr)")
	fs.DurationVar(&w.settle, "settle", chaos.DefaultSettle, "with --worker: quiet period that ends a run")
	fs.DurationVar(&w.ready, "ready-timeout", time.Minute, "with --worker: how long a worker may take to start consuming")
	fs.DurationVar(&w.runTimeout, "run-timeout", 2*time.Minute, "with --worker: limit on one run")
}

// notWithWorker are the scenario's simulator flags that describe dupctl's
// own worker core: with --worker, the user's code decides those.
var notWithWorker = []string{"live", "explore", "max-states", "shard", "profile", "lock-ttl", "ack-timeout", "job-duration", "max-attempts", "time-scale"}

// runWorker is the --worker hook of a scenario command.
func (w *workerFlags) runWorker(cmd *cobra.Command, f *cmdutil.Factory, sc *sim.Scenario) error {
	cmdutil.FieldFlags(cmd, map[string]string{"Env": "worker-env", "Keys": "jobs"})
	fs := cmd.Flags()
	for _, name := range append(notWithWorker, switchNames()...) {
		if fs.Changed(name) {
			return problem.Inputf("", "--%s describes dupctl's simulated worker; with --worker your worker's own code decides it", name)
		}
	}
	spec, err := chaos.SpecFor(sc.Name)
	if err != nil {
		return err
	}
	at, _ := fs.GetStringSlice("at")
	points, err := chaos.ParsePoints(spec, at)
	if err != nil {
		return err
	}
	g := f.Global
	o := chaos.Options{
		Scenario: sc.Name, Worker: w.command, Env: w.env, Publish: w.publish, Body: w.body, EffectsSQL: w.effectsSQL, EffectsLog: w.effectsLog,
		CacheKeys: w.cacheKeys, At: points, Settle: w.settle, ReadyTimeout: w.ready, RunTimeout: w.runTimeout,
		AMQPURL: g.AMQPURL, RedisURL: g.RedisURL, DatabaseURL: g.DatabaseURL,
	}
	o.Workers, _ = fs.GetInt("workers")
	o.Keys, _ = fs.GetInt("jobs")
	o.Seed, _ = fs.GetUint64("seed")
	o.AllowRemote, _ = fs.GetBool("allow-remote")
	if fs.Changed("runs") {
		o.Runs, _ = fs.GetInt("runs")
	} else {
		o.Runs = len(spec.Points) // one run per fault point
		if len(points) > 0 {
			o.Runs = len(points)
		}
	}
	if fs.Changed("pause") {
		o.Pause, _ = fs.GetDuration("pause")
	}
	if fs.Changed("cache-lag") {
		o.CacheLag, _ = fs.GetDuration("cache-lag")
	}
	if o.Slow, err = parseSlow(w.slow); err != nil {
		return err
	}
	if w.effectsLog != "" {
		if o.LogMapping, err = w.log.Compile(f.Config); err != nil {
			return err
		}
	} else if fs.Changed("field") || fs.Changed("event") || fs.Changed("mapping") {
		return problem.Inputf("EffectsLog", "--field, --event and --mapping read the effects log: give {EffectsLog} too")
	}
	if err := chaos.Validate(o); err != nil {
		return err
	}
	switch w.workerLog {
	case "":
	case "-":
		o.WorkerLog = f.IO.ErrOut
	default:
		file, err := os.Create(w.workerLog)
		if err != nil {
			return problem.Inputf("WorkerLog", "%w", err)
		}
		defer file.Close()
		o.WorkerLog = file
	}
	o.Replay = func(seed uint64) string { return replayCommand(cmd, seed) }
	ctx := cmd.Context()
	deps, err := workerDeps(ctx, f, &o)
	if err != nil {
		return err
	}
	o.Progress = f.IO.StartProgress("simulate "+sc.Name+" --worker", "runs")
	res, err := chaos.Run(ctx, deps, o)
	if err != nil {
		return err
	}
	return f.Emit(ctx, report.Document{Report: res.Report(), Text: func(wr io.Writer, th *report.Theme) error {
		return writeWorkerRuns(wr, th, sc, res)
	}})
}

func switchNames() []string {
	var out []string
	for _, sw := range worker.Switches {
		out = append(out, sw.Name)
	}
	return out
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
