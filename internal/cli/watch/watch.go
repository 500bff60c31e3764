// Package watch is `dupctl watch`: the read-only checks on an interval
// and followed logs, as Prometheus metrics (internal/watch runs them; the
// checks are wired here to each capability's own entry point).
package watch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/deploy"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/watch"
)

// Options are one `dupctl watch` run.
type Options struct {
	Factory *cmdutil.Factory
	Watch   watch.Options
	// Interval is every check's interval unless CheckIntervals names it;
	// CheckTimeouts bound one run of a check (default: its interval).
	Interval       time.Duration
	IntervalGiven  bool // --interval given: it overrides SlowChecks
	CheckIntervals map[string]time.Duration
	CheckTimeouts  map[string]time.Duration
	// Checks are the checks to run (empty: every check whose connection
	// is given); DLQs the dead-letter queues besides dupctl.yaml's jobs'.
	Checks []string
	DLQs   []string
	// Follow are the logs to follow (- for stdin), Window how long a key's
	// lines are kept to find its duplicate.
	Follow     []string
	Window     time.Duration
	Log        cmdutil.LogFlags
	PrintRules bool
}

// CheckNames are the checks watch can run, by their metric label.
var CheckNames = []string{"lock", "dlq", "store", "cache"}

// NewCmdWatch is `dupctl watch`.
func NewCmdWatch(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Factory: f}
	var intervals, timeouts []string
	cmd := &cobra.Command{
		Use:     "watch",
		Short:   "Run the read-only checks on an interval and follow worker logs, as Prometheus metrics",
		Long:    watchLong + exitStatus,
		Example: watchExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.PrintRules {
				_, err := f.IO.Out.Write(deploy.PrometheusRules)
				return err
			}
			o.IntervalGiven = cmd.Flags().Changed("interval")
			if err := o.parse(intervals, timeouts); err != nil {
				return err
			}
			if f.Config != nil {
				if err := o.schedule(f.Config.Watch); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(o)
			}
			return run(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Watch.Listen, "listen", "127.0.0.1:9464", "address to serve /metrics, /healthz and /readyz on")
	fs.DurationVar(&o.Interval, "interval", 30*time.Second,
		"time between two runs of each check (not given: store, dlq and cache run every 5m, what a run costs)")
	fs.StringArrayVar(&intervals, "check-interval", nil, "one check's interval, NAME=DURATION (e.g. dlq=5m; repeat for several)")
	fs.StringArrayVar(&timeouts, "check-timeout", nil, "one check's timeout per run, NAME=DURATION (default: its interval)")
	fs.StringSliceVar(&o.Checks, "checks", nil, "checks to run: "+strings.Join(CheckNames, ", ")+
		" (default: each one whose connection is given)")
	fs.StringArrayVar(&o.DLQs, "dlq", nil, "a dead-letter queue to count (besides dupctl.yaml's jobs' dlq; repeat for several)")
	fs.StringArrayVar(&o.Follow, "follow", nil, "a log file, glob or - (stdin) to follow and count (repeat for several)")
	fs.DurationVar(&o.Window, "window", time.Hour, "how long a key's log lines are kept to find its duplicate (with --follow)")
	fs.DurationVar(&o.Watch.ShutdownTimeout, "shutdown-timeout", 10*time.Second,
		"on SIGTERM or SIGINT: how long running checks and scrapes get to finish before they are cancelled")
	fs.IntVar(&o.Watch.MaxLabelValues, "max-label-values", watch.DefaultMaxLabelValues,
		"distinct values of one label (family templates, queues, job types) before the rest count as \"other\"")
	fs.BoolVar(&o.PrintRules, "print-rules", false, "print the Prometheus alert rules for these metrics and exit")
	o.Log.RegisterMapping(cmd, "with --follow: ")
	cmdutil.FieldFlags(cmd, map[string]string{"Interval": "interval", "Timeout": "check-timeout", "Follow": "follow"})
	return cmd
}

var exitStatus = cmdutil.ExitStatus(map[int]string{
	0: "stopped by SIGTERM, SIGINT or --timeout after a graceful shutdown",
	2: "usage or input error (a bad flag, an address that cannot be listened on)",
})

// parse reads NAME=DURATION flags and checks the names and ranges.
func (o *Options) parse(intervals, timeouts []string) error {
	var err error
	if o.CheckIntervals, err = durations("check-interval", intervals); err != nil {
		return err
	}
	if o.CheckTimeouts, err = durations("check-timeout", timeouts); err != nil {
		return err
	}
	for _, c := range o.Checks {
		if !slices.Contains(CheckNames, c) {
			return exitcode.UsageErrorf("--checks: unknown check %q: want %s", c, strings.Join(CheckNames, ", "))
		}
	}
	switch {
	case o.Interval < time.Second:
		return exitcode.UsageErrorf("--interval must be at least 1s, got %s", o.Interval)
	case o.Window <= 0:
		return exitcode.UsageErrorf("--window must be positive, got %s", o.Window)
	case o.Watch.MaxLabelValues < 1:
		return exitcode.UsageErrorf("--max-label-values must be at least 1, got %d", o.Watch.MaxLabelValues)
	case o.Watch.ShutdownTimeout < 0:
		return exitcode.UsageErrorf("--shutdown-timeout must not be negative, got %s", o.Watch.ShutdownTimeout)
	}
	return nil
}

// schedule fills from dupctl.yaml's watch section what the flags did not
// say: the interval, and each check's interval and timeout.
func (o *Options) schedule(w config.Watch) error {
	if every := time.Duration(w.Interval); !o.IntervalGiven && every > 0 {
		if every < time.Second {
			return exitcode.UsageErrorf("watch.interval in dupctl.yaml must be at least 1s, got %s", every)
		}
		o.Interval, o.IntervalGiven = every, true
	}
	for _, name := range slices.Sorted(maps.Keys(w.Checks)) {
		c := w.Checks[name]
		if !slices.Contains(CheckNames, name) {
			return exitcode.UsageErrorf("watch.checks.%s in dupctl.yaml: no such check (want %s)", name, strings.Join(CheckNames, ", "))
		}
		for _, d := range []struct {
			key string
			v   time.Duration
			to  map[string]time.Duration
		}{{"interval", time.Duration(c.Interval), o.CheckIntervals}, {"timeout", time.Duration(c.Timeout), o.CheckTimeouts}} {
			if _, given := d.to[name]; given || d.v == 0 {
				continue
			}
			if d.v < time.Second {
				return exitcode.UsageErrorf("watch.checks.%s.%s in dupctl.yaml must be at least 1s, got %s", name, d.key, d.v)
			}
			d.to[name] = d.v
		}
	}
	return nil
}

func durations(flag string, values []string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, v := range values {
		name, d, ok := strings.Cut(v, "=")
		if !ok || !slices.Contains(CheckNames, name) {
			return nil, exitcode.UsageErrorf("--%s %q: want NAME=DURATION with NAME one of %s", flag, v, strings.Join(CheckNames, ", "))
		}
		dur, err := time.ParseDuration(d)
		if err != nil || dur < time.Second {
			return nil, exitcode.UsageErrorf("--%s %q: the duration must be at least 1s", flag, v)
		}
		out[name] = dur
	}
	return out, nil
}

func run(ctx context.Context, o *Options) error {
	f := o.Factory
	checks, err := o.checks()
	if err != nil {
		return err
	}
	deps := watch.Deps{Checks: checks}
	if len(o.Follow) > 0 {
		if deps.Follow, err = o.follower(); err != nil {
			return err
		}
	}
	w := o.Watch
	w.Now = f.Now
	w.Listening = func(addr string) {
		names := make([]string, 0, len(checks))
		for _, c := range checks {
			names = append(names, fmt.Sprintf("%s every %s", c.Name, c.Interval))
		}
		if len(o.Follow) > 0 {
			names = append(names, "following "+strings.Join(o.Follow, ", "))
		}
		fmt.Fprintf(f.IO.ErrOut, "dupctl watch: serving http://%s/metrics (%s)\n", addr, strings.Join(names, "; "))
	}
	w.Failed = func(check string, err error) {
		fmt.Fprintf(f.IO.ErrOut, "dupctl watch: check %s failed (counted; retried on its interval): %s\n", check,
			redact.String(cmdutil.WordError(err, f.Namer.Or(cmdutil.Plain)).Error()))
	}
	res, err := watch.Run(ctx, deps, w)
	if err != nil {
		return cmdutil.WordError(err, f.Namer.Or(cmdutil.Plain))
	}
	fmt.Fprintf(f.IO.ErrOut, "dupctl watch: stopped after %s\n", runsLine(res))
	return nil
}

// runsLine says how many runs each check made and how many failed.
func runsLine(res *watch.Result) string {
	var parts []string
	for _, name := range CheckNames {
		if n, ok := res.Runs[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %d runs (%d failed)", name, n, res.Failed[name]))
		}
	}
	if len(parts) == 0 {
		return "no check run"
	}
	return strings.Join(parts, ", ")
}

const watchLong = `Watch is dupctl's read-only checks as a running check: each one on an
interval of its own, with a timeout of its own, never two runs of one check
at once, and followed worker logs counted as they are written - all served
as Prometheus metrics on --listen (/metrics), with /healthz (the process
answers) and /readyz (every check has run once).

The checks, each the command's own code configured as that command is by
dupctl.yaml and --job:

  lock   inspect lock: lock families, keys without a TTL and TTL outliers
         per family template (needs --redis-url)
  dlq    dlq stats: messages per dead-letter queue by the queue they died
         in and their death reason (needs --amqp-url, and --dlq or jobs'
         dlq in dupctl.yaml; reads and requeues every message of the DLQ)
  store  inspect store: stuck PROCESSING rows and duplicated keys per
         idempotency table (needs --database-url)
  cache  audit cache: cache entries that disagree with the database
         (needs both, and a job's cache_pattern and idempotency.table)

Every finding of a check's last run is counted in dupctl_findings by code
and severity. A run that fails or times out is counted
(dupctl_check_runs_total{result="error"|"timeout"}, dupctl_check_up 0), never
fatal. With --follow, the logs are read as 'audit logs --follow' reads
them, and jobs received, lock steps, side effects, retries, crashes, job
durations and duplicates by cause are counted.

SIGTERM or SIGINT ends it: running checks and scrapes get --shutdown-timeout,
then are cancelled. The global --timeout ends it the same way after that
long (a one-shot look, a test).

Label values are family templates, queue and table names, job types and
finding or cause codes - never a business key or a lock key - and each
label keeps at most --max-label-values values (the rest add up under
"other"). 'dupctl watch --print-rules' prints alert rules for these metrics
(deploy/prometheus/dupctl-rules.yml); docs/watch.md lists every metric.`

const watchExample = `  # every check the connections allow, on 30s, metrics on :9464
  dupctl watch --redis-url redis://127.0.0.1:6379/0 --database-url postgres://app@db/app

  # a slower DLQ read, and the worker's logs followed from stdin
  kubectl logs -f deploy/worker | dupctl watch --config dupctl.yaml --check-interval dlq=5m --follow -

  # the alert rules, for Prometheus's rule_files
  dupctl watch --print-rules > dupctl-rules.yml`
