package inspect

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/spf13/cobra"
)

// TTLOptions are one `dupctl inspect ttl` run.
type TTLOptions struct {
	Factory *cmdutil.Factory
	ttl.Options
}

// NewCmdTTL is `dupctl inspect ttl`.
func NewCmdTTL(f *cmdutil.Factory, runF func(*TTLOptions) error) *cobra.Command {
	var raw ttlFlags
	o := &TTLOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "ttl [FILE...|-]",
		Short:   "Compare real job durations with lock TTLs and say what TTL to set",
		Long:    ttlLong + exitStatus,
		Example: ttlExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := ttlFromJob(f, cmd, o, &raw); err != nil {
				return err
			}
			if err := o.resolve(&raw); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runTTL(cmd.Context(), o)
		},
	}
	addTTLFlags(cmd, o, &raw)
	return cmd
}

// ttlFlags are the flags read as text, which resolve parses into options.
type ttlFlags struct {
	spec, file, unit, tz string
	exactMax             int
	simProfiles          []string
}

// ttlFromJob fills in the --job's durations and lock TTL from dupctl.yaml,
// for what the flags did not give.
func ttlFromJob(f *cmdutil.Factory, cmd *cobra.Command, o *TTLOptions, raw *ttlFlags) error {
	job, err := f.Job()
	if err != nil || job == nil {
		return err
	}
	if len(o.Files) == 0 && o.Query == "" {
		if job.Durations.CSV != "" {
			o.Files = []string{job.Durations.CSV}
		}
		cmdutil.FromJob(cmd, "query", &o.Query, job.Durations.Query)
	}
	cmdutil.FromJob(cmd, "job-type", &o.Table.DefaultType, job.Name)
	if job.LockTTL > 0 && !cmd.Flags().Changed("ttl-file") {
		cmdutil.FromJob(cmd, "ttl", &raw.spec, time.Duration(job.LockTTL).String())
	}
	return nil
}

// addTTLFlags registers inspect ttl's flags: those that need parsing into
// raw, the rest straight into o.
func addTTLFlags(cmd *cobra.Command, o *TTLOptions, raw *ttlFlags) {
	fs := cmd.Flags()
	fs.StringVar(&raw.spec, "ttl", "", "lock TTL: one for all (2m) or per job type (payment=2m,settlement=10m)")
	fs.StringVar(&raw.file, "ttl-file", "", "YAML or JSON file mapping job type to lock TTL (payment: 2m; default: 1m)")
	fs.StringVar(&raw.unit, "unit", "ms", "unit of durations written as bare numbers: ns, us, ms, s, m or h")
	fs.StringVar(&o.Table.DefaultType, "job-type", "all", "job type of rows that name none")
	fs.StringVar(&o.Format, "format", ttl.FormatAuto, "input format of the files: auto, csv, logs "+
		"(any log format, detected per file) or one log format: "+strings.Join(logs.FormatNames()[1:], ", "))
	fs.StringVar(&raw.tz, "tz", "", "time zone of log times written without one, e.g. Europe/Berlin (default UTC)")
	fs.StringVar(&o.Query, "query", "", "read job type and duration from this PostgreSQL query (read-only; see --database-url)")
	fs.DurationVar(&o.QueryTimeout, "query-timeout", time.Minute, "statement timeout of --query")
	fs.BoolVar(&o.Collect.IncludeWait, "include-wait", false, "add the queue wait to every run (the lock is taken at enqueue)")
	fs.Float64Var(&o.Analyze.Quantile, "quantile", 0.99, "quantile the recommended TTL is based on")
	fs.Float64Var(&o.Analyze.Buffer, "buffer", 1.5, "recommended TTL = --quantile x --buffer")
	fs.IntVar(&o.Analyze.MinSamples, "min-samples", 100, "fewest runs of a job type for a verdict")
	fs.IntVar(&raw.exactMax, "exact-max", ttl.DefaultExactMax,
		"runs per job type kept for exact quantiles before the sketch takes over (0: always the sketch)")
	fs.BoolVar(&o.Simulate, "simulate", false, "estimate duplicates per million jobs under the current TTL with the simulator")
	fs.IntVar(&o.Sim.Jobs, "sim-jobs", 20_000, "jobs simulated per job type and profile")
	fs.StringSliceVar(&raw.simProfiles, "sim-profile", ttl.DefaultSimProfiles, "profiles --simulate compares: "+
		strings.Join(worker.ProfileNames(), ", "))
	formats := append([]string{ttl.FormatAuto, ttl.FormatCSV, ttl.FormatLogs}, logs.FormatNames()[1:]...)
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	cmdutil.FieldFlags(cmd, map[string]string{"Jobs": "sim-jobs", "TTLs": "ttl", "Profiles": "sim-profile"})
}

const ttlLong = `Inspect ttl answers step 3 of debugging a job that ran twice: is the lock
TTL longer than the job? It reads job durations per job type from CSV files,
stdin ("-"), structured logs, or a SQL query against PostgreSQL, and shows per
job type the count, p50 to p99.9 and max, how many runs outlived their TTL
(each one a window for a duplicate), the margin of the TTL over p99, a
verdict (safe, at-risk, unsafe; too-few-samples below --min-samples), the
recommended TTL (--quantile x --buffer) and whether renewal is the better
answer (a heavy tail). A histogram per job type draws the TTL across the
durations, with the runs beyond it highlighted.

Input. A CSV (comma, tab or semicolon) with a header names its columns:
job_type, duration (duration_ms, duration_s...), wait (queue wait),
enqueued_at, started_at, finished_at, ttl. Without a header the columns are
job type, duration and optionally queue wait; a single column is durations
of one job type (--job-type). Bare numbers are in --unit; Go durations
(1m30s) and PostgreSQL interval text (00:01:30) work too. --query reads the
same columns from a query's result, in a read-only transaction with a
statement timeout. Logs in any format audit logs reads (JSON lines, logfmt,
console text, CLEF, GELF, OTLP, Docker, CRI, journald; detected from the
first lines, or --format logs or a log format) give a run per lock acquired
-> released (or acked), or a duration field of a job's line, and the lockTtl
each lock was taken with.

TTLs come from --ttl (one value, or per job type), --ttl-file (YAML or JSON:
"payment: 2m"), or the input itself (the logs' lockTtl, a ttl column);
--ttl wins over the file, which wins over the input. Where the lock is
taken at enqueue, --include-wait adds the queue wait to every run.

Quantiles are exact up to --exact-max runs per job type; above that a
DDSketch keeps memory bounded and every quantile within 0.5% of the exact
value (the output says which). --simulate feeds the measured distribution
into the simulator's risk mode and estimates duplicates per million jobs
under the current TTL, with and without idempotency.`

const ttlExample = `  # durations exported as CSV (job_type,duration_ms), one TTL for all
  dupctl inspect ttl runs.csv --ttl 2m

  # per job type TTLs, numbers in seconds, from stdin
  cut -d, -f3,5 export.csv | dupctl inspect ttl - --unit s --ttl payment=2m,settlement=10m

  # straight from the jobs table, queue wait included (lock taken at enqueue)
  dupctl inspect ttl --database-url "$DATABASE_URL" --include-wait --ttl-file ttls.yaml \
    --query "select job_type, enqueued_at, started_at, finished_at from jobs where finished_at > now() - interval '7 days'"

  # worker logs: runs and TTLs from lock acquired/released events
  dupctl inspect ttl --format logs /var/log/worker/*.log --simulate

  # CI: fail when any job type's TTL is below its p99
  dupctl inspect ttl runs.csv --ttl-file ttls.yaml --fail-on error -o junit > ttl.xml`

// resolve turns the flags that need parsing into options; ttl.Run checks
// the rest.
func (o *TTLOptions) resolve(raw *ttlFlags) error {
	if raw.tz != "" {
		loc, err := ttl.ParseTZ(raw.tz)
		if err != nil {
			return err
		}
		o.TZ = loc
	}
	if raw.exactMax < 0 {
		return exitcode.UsageErrorf("--exact-max must not be negative, got %d", raw.exactMax)
	}
	o.Collect.ExactMax = raw.exactMax
	if raw.exactMax == 0 {
		o.Collect.ExactMax = -1
	}
	u, err := ttl.ParseUnit(raw.unit)
	if err != nil {
		return err
	}
	o.Table.Unit = u
	if raw.file != "" {
		fh, err := os.Open(raw.file)
		if err != nil {
			return exitcode.InputError(fmt.Errorf("--ttl-file: %w", err), "check the path")
		}
		t, err := ttl.LoadTTLFile(fh)
		fh.Close()
		if err != nil {
			return exitcode.InputError(fmt.Errorf("--ttl-file %s: %w", raw.file, err), "")
		}
		o.Collect.TTLs = t
	}
	if raw.spec != "" {
		t, err := ttl.ParseTTLSpec(raw.spec)
		if err != nil {
			return err
		}
		o.Collect.TTLs.Override(t)
	}
	profiles, err := ttl.ParseProfiles(raw.simProfiles)
	if err != nil {
		return err
	}
	o.Sim.Profiles = append(o.Sim.Profiles, profiles...)
	o.Sim.DupRate, o.Sim.CrashRate, o.Sim.AckTimeout, o.Sim.Seed = 0.01, 0.001, 30*time.Minute, 1
	return nil
}

func runTTL(ctx context.Context, o *TTLOptions) error {
	f := o.Factory
	res, err := ttl.Run(ctx, ttl.Deps{
		Stdin: f.IO.In,
		Postgres: func(ctx context.Context) (ttl.Querier, error) {
			return f.Postgres(ctx, connect.PostgresOptions{
				ReadOnly: true, StatementTimeout: o.QueryTimeout, LockTimeout: 5 * time.Second, MaxConns: 1,
			})
		},
		Progress:  f.IO.StartProgress,
		Simulator: simulator{},
	}, o.Options)
	if err != nil {
		return err
	}
	return f.Emit(ctx, report.Document{Report: res.Report(),
		Text: func(w io.Writer, th *report.Theme) error { return writeTTL(w, th, res) },
		HTML: func(w io.Writer) error { return writeTTLHTML(w, res) },
	})
}
