package inspect

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
)

// TTLOptions are one `dupctl inspect ttl` run.
type TTLOptions struct {
	Factory      *cmdutil.Factory
	Files        []string
	Format       string
	Query        string
	QueryTimeout time.Duration
	Collect      ttl.CollectOptions
	Table        ttl.TableOptions
	Analyze      ttl.AnalyzeOptions
	Simulate     bool
	Sim          ttl.SimulateOptions
}

// Input formats of --format.
const (
	formatAuto = "auto"
	formatCSV  = "csv"
	formatLogs = "logs"
)

// NewCmdTTL is `dupctl inspect ttl`.
func NewCmdTTL(f *cmdutil.Factory, runF func(*TTLOptions) error) *cobra.Command {
	var ttlSpec, ttlFile, unit string
	var exactMax int
	var simProfiles []string
	o := &TTLOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "ttl [FILE...|-]",
		Short: "Compare real job durations with lock TTLs and say what TTL to set",
		Long: `Inspect ttl answers step 3 of debugging a job that ran twice: is the lock
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
statement timeout. Structured logs (JSON lines, --format logs, detected
from a leading '{') give a run per lock acquired -> released (or acked), or
a duration field, and the lockTtl each lock was taken with.

TTLs come from --ttl (one value, or per job type), --ttl-file (YAML or JSON:
"payment: 2m"), or the input itself (the logs' lockTtl, a ttl column);
--ttl wins over the file, which wins over the input. Where the lock is
taken at enqueue, --include-wait adds the queue wait to every run.

Quantiles are exact up to --exact-max runs per job type; above that a
DDSketch keeps memory bounded and every quantile within 0.5% of the exact
value (the output says which). --simulate feeds the measured distribution
into the simulator's risk mode and estimates duplicates per million jobs
under the current TTL, with and without idempotency.` + exitStatus,
		Example: `  # durations exported as CSV (job_type,duration_ms), one TTL for all
  dupctl inspect ttl runs.csv --ttl 2m

  # per job type TTLs, numbers in seconds, from stdin
  cut -d, -f3,5 export.csv | dupctl inspect ttl - --unit s --ttl payment=2m,settlement=10m

  # straight from the jobs table, queue wait included (lock taken at enqueue)
  dupctl inspect ttl --database-url "$DATABASE_URL" --include-wait --ttl-file ttls.yaml \
    --query "select job_type, enqueued_at, started_at, finished_at from jobs where finished_at > now() - interval '7 days'"

  # worker logs: runs and TTLs from lock acquired/released events
  dupctl inspect ttl --format logs /var/log/worker/*.log --simulate

  # CI: fail when any job type's TTL is below its p99
  dupctl inspect ttl runs.csv --ttl-file ttls.yaml --fail-on error -o junit > ttl.xml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := o.resolve(ttlSpec, ttlFile, unit, exactMax, simProfiles); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runTTL(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&ttlSpec, "ttl", "", "lock TTL: one for all (2m) or per job type (payment=2m,settlement=10m)")
	fs.StringVar(&ttlFile, "ttl-file", "", "YAML or JSON file mapping job type to lock TTL (payment: 2m; default: 1m)")
	fs.StringVar(&unit, "unit", "ms", "unit of durations written as bare numbers: ns, us, ms, s, m or h")
	fs.StringVar(&o.Table.DefaultType, "job-type", "all", "job type of rows that name none")
	fs.StringVar(&o.Format, "format", formatAuto, "input format of the files: auto, csv or logs")
	fs.StringVar(&o.Query, "query", "", "read job type and duration from this PostgreSQL query (read-only; see --database-url)")
	fs.DurationVar(&o.QueryTimeout, "query-timeout", time.Minute, "statement timeout of --query")
	fs.BoolVar(&o.Collect.IncludeWait, "include-wait", false, "add the queue wait to every run (the lock is taken at enqueue)")
	fs.Float64Var(&o.Analyze.Quantile, "quantile", 0.99, "quantile the recommended TTL is based on")
	fs.Float64Var(&o.Analyze.Buffer, "buffer", 1.5, "recommended TTL = --quantile x --buffer")
	fs.IntVar(&o.Analyze.MinSamples, "min-samples", 100, "fewest runs of a job type for a verdict")
	fs.IntVar(&exactMax, "exact-max", ttl.DefaultExactMax, "runs per job type kept for exact quantiles before the sketch takes over (0: always the sketch)")
	fs.BoolVar(&o.Simulate, "simulate", false, "estimate duplicates per million jobs under the current TTL with the simulator")
	fs.IntVar(&o.Sim.Jobs, "sim-jobs", 20_000, "jobs simulated per job type and profile")
	fs.StringSliceVar(&simProfiles, "sim-profile", ttl.DefaultSimProfiles, "profiles --simulate compares: "+strings.Join(worker.ProfileNames(), ", "))
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{formatAuto, formatCSV, formatLogs}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// resolve checks the flags and turns them into options.
func (o *TTLOptions) resolve(ttlSpec, ttlFile, unit string, exactMax int, simProfiles []string) error {
	switch {
	case o.Query != "" && len(o.Files) > 0:
		return exitcode.UsageErrorf("give files or --query, not both")
	case o.Query == "" && len(o.Files) == 0:
		return exitcode.UsageErrorf("no input: give CSV or log files, - for stdin, or --query")
	case o.Format != formatAuto && o.Format != formatCSV && o.Format != formatLogs:
		return exitcode.UsageErrorf("unknown --format %q: want auto, csv or logs", o.Format)
	case o.Analyze.Quantile <= 0 || o.Analyze.Quantile >= 1:
		return exitcode.UsageErrorf("--quantile must be between 0 and 1, e.g. 0.99, got %g", o.Analyze.Quantile)
	case o.Analyze.Buffer < 1:
		return exitcode.UsageErrorf("--buffer must be at least 1, got %g", o.Analyze.Buffer)
	case o.Analyze.MinSamples < 1:
		return exitcode.UsageErrorf("--min-samples must be positive, got %d", o.Analyze.MinSamples)
	case exactMax < 0:
		return exitcode.UsageErrorf("--exact-max must not be negative, got %d", exactMax)
	case o.QueryTimeout <= 0:
		return exitcode.UsageErrorf("--query-timeout must be positive, got %s", o.QueryTimeout)
	case o.Sim.Jobs < 1 || o.Sim.Jobs > 10_000_000:
		return exitcode.UsageErrorf("--sim-jobs must be 1..10000000, got %d", o.Sim.Jobs)
	}
	o.Collect.ExactMax = exactMax
	if exactMax == 0 {
		o.Collect.ExactMax = -1
	}
	u, err := ttl.ParseUnit(unit)
	if err != nil {
		return exitcode.UsageErrorf("--unit: %w", err)
	}
	o.Table.Unit = u
	if ttlFile != "" {
		fh, err := os.Open(ttlFile)
		if err != nil {
			return exitcode.InputError(fmt.Errorf("--ttl-file: %w", err), "check the path")
		}
		t, err := ttl.LoadTTLFile(fh)
		fh.Close()
		if err != nil {
			return exitcode.InputError(fmt.Errorf("--ttl-file %s: %w", ttlFile, err), "")
		}
		o.Collect.TTLs = t
	}
	if ttlSpec != "" {
		t, err := ttl.ParseTTLSpec(ttlSpec)
		if err != nil {
			return exitcode.UsageErrorf("%w", err)
		}
		o.Collect.TTLs.Override(t)
	}
	for _, name := range simProfiles {
		p, err := worker.ProfileByName(name)
		if err != nil {
			return exitcode.UsageErrorf("--sim-profile: %w", err)
		}
		o.Sim.Profiles = append(o.Sim.Profiles, p)
	}
	o.Sim.DupRate, o.Sim.CrashRate, o.Sim.AckTimeout, o.Sim.Seed = 0.01, 0.001, 30*time.Minute, 1
	return nil
}

func runTTL(ctx context.Context, o *TTLOptions) error {
	c := ttl.NewCollector(o.Collect)
	if o.Query != "" {
		if err := o.readQuery(ctx, c); err != nil {
			return err
		}
	} else if err := o.readFiles(ctx, c); err != nil {
		return err
	}
	res, rep := c.Analyze(o.Analyze)
	if res.Runs == 0 {
		msg := fmt.Errorf("no job durations in %s", strings.Join(res.Sources, ", "))
		if res.Skipped.Rows > 0 {
			msg = fmt.Errorf("%w: all %d rows skipped, e.g. %s", msg, res.Skipped.Rows, res.Skipped.Examples[0])
		}
		return exitcode.InputError(msg, "see 'dupctl inspect ttl --help' for the columns it reads")
	}
	if o.Simulate {
		o.Sim.Progress = o.Factory.IO.StartProgress("simulate", "job types")
		if err := ttl.Simulate(ctx, res, rep, o.Sim); err != nil {
			return err
		}
	}
	return o.Factory.Emit(ctx, report.Document{Report: rep, Text: res.WriteText})
}

// readFiles reads the CSV files one by one as they come, and every log
// file in one scan, so a lock acquired in one file and released in the
// next still pairs up.
func (o *TTLOptions) readFiles(ctx context.Context, c *ttl.Collector) error {
	var logSources []logs.Source
	for _, name := range o.Files {
		src, err := o.readFile(ctx, c, name)
		if err != nil {
			return err
		}
		if src != nil {
			logSources = append(logSources, src)
		}
	}
	if len(logSources) == 0 {
		return nil
	}
	meter := o.Factory.IO.StartProgress("inspect ttl logs", "bytes")
	defer meter.Done()
	_, err := ttl.ReadLogs(ctx, logSources, logs.Options{Progress: meter}, o.Table.DefaultType, c)
	return inputError(ctx, err)
}

// readFile reads a CSV file (or stdin) now, or returns it as a log source
// for the scan.
func (o *TTLOptions) readFile(ctx context.Context, c *ttl.Collector, name string) (logs.Source, error) {
	var r io.Reader
	size := int64(-1)
	if name == "-" {
		r = o.Factory.IO.In
	} else {
		fh, err := os.Open(name)
		if err != nil {
			return nil, exitcode.InputError(fmt.Errorf("read %s: %w", name, unwrapPath(err)), "check the path")
		}
		defer fh.Close()
		if st, err := fh.Stat(); err == nil {
			size = st.Size()
		}
		r = fh
	}
	br := bufio.NewReaderSize(r, 64<<10)
	format := o.Format
	if format == formatAuto {
		format = sniff(br)
	}
	if format == formatLogs {
		if name == "-" {
			return logs.ReaderSource(name, br), nil
		}
		src, err := logs.File(name)
		return src, inputError(ctx, err)
	}
	meter := o.Factory.IO.StartProgress("inspect ttl "+name, "bytes")
	defer meter.Done()
	meter.SetTotal(size)
	return nil, inputError(ctx, ttl.ReadCSV(ctx, br, name, o.Table, c, meter))
}

// inputError makes an error without an exit code of its own an input
// error (exit 2); an interruption stays what it is.
func inputError(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && exitcode.Of(err, 0) == 0 {
		return exitcode.InputError(err, "")
	}
	return err
}

// sniff tells logs (a JSON object per line) from a table by the first
// non-blank byte.
func sniff(br *bufio.Reader) string {
	head, _ := br.Peek(512)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return formatLogs // gzip: the log reader decompresses it
	}
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return formatLogs
	}
	return formatCSV
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readQuery runs --query in a read-only session with a statement timeout.
func (o *TTLOptions) readQuery(ctx context.Context, c *ttl.Collector) error {
	pool, err := o.Factory.Postgres(ctx, connect.PostgresOptions{ReadOnly: true, StatementTimeout: o.QueryTimeout, LockTimeout: 5 * time.Second, MaxConns: 1})
	if err != nil {
		return err
	}
	meter := o.Factory.IO.StartProgress("inspect ttl query", "rows")
	defer meter.Done()
	err = ttl.Query(ctx, pool, o.Query, o.Table, c, meter)
	var pe *pgconn.PgError
	switch {
	case err == nil || ctx.Err() != nil:
		return err
	case errors.As(err, &pe) && pe.Code == "57014":
		return exitcode.UnavailableError(err, fmt.Sprintf("the query ran longer than --query-timeout %s: narrow it or raise the timeout", o.QueryTimeout))
	case errors.As(err, &pe) && pe.Code == "25006":
		return exitcode.InputError(err, "inspect ttl runs queries read-only: give a SELECT")
	case errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "42") || strings.HasPrefix(pe.Code, "22")):
		return exitcode.InputError(err, "fix the query")
	case errors.As(err, &pe):
		return exitcode.UnavailableError(err, "")
	}
	return exitcode.InputError(err, "")
}
