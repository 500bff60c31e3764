package ttl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
)

// Input formats.
const (
	FormatAuto = "auto" // logs when the input starts with '{' (or is gzip), else CSV
	FormatCSV  = "csv"
	FormatLogs = "logs"
)

// Options are one `inspect ttl` run: where the durations come from, how
// they are read and how they are judged.
type Options struct {
	// Files are CSV or log files ("-" is Deps.Stdin); Query is a SQL
	// query instead. One of the two.
	Files  []string
	Format string // FormatAuto, FormatCSV, FormatLogs or a log format (json, logfmt, text, ...)
	// TZ is the zone of log times written without one.
	TZ    *time.Location
	Query string
	// QueryTimeout is the statement timeout the query's session runs
	// with (the caller opens it); it is named in the hint when it fires.
	QueryTimeout time.Duration
	// Mapping maps log fields and events (nil: the built-in one).
	Mapping  *logs.Mapping
	Collect  CollectOptions
	Table    TableOptions
	Analyze  AnalyzeOptions
	Simulate bool
	Sim      SimulateOptions
}

// Deps are what a run reads besides files.
type Deps struct {
	// Stdin is read for "-".
	Stdin io.Reader
	// Postgres opens the read-only session the query runs in; called only
	// with a query.
	Postgres func(ctx context.Context) (Querier, error)
	// Progress starts a meter for one part of the work (nil: none).
	Progress func(label, unit string) progress.Meter
	// Simulator estimates duplicates with Options.Simulate.
	Simulator Simulator
}

// ErrNoRuns is the reason of the input error a run returns when no usable
// duration was read.
var ErrNoRuns = errors.New("no job durations")

// Run reads the durations, analyses them and, with Simulate, estimates
// duplicates under the current TTLs.
func Run(ctx context.Context, d Deps, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	c := NewCollector(o.Collect)
	var err error
	if o.Query != "" {
		err = readQuery(ctx, d, o, c)
	} else {
		err = readFiles(ctx, d, o, c)
	}
	if err != nil {
		return nil, err
	}
	res := c.Analyze(o.Analyze)
	if res.Runs == 0 {
		why := fmt.Sprintf("no job durations in %s", strings.Join(res.Sources, ", "))
		if res.Skipped.Rows > 0 {
			why += fmt.Sprintf(": all %d rows skipped, e.g. %s", res.Skipped.Rows, res.Skipped.Examples[0])
		}
		return nil, &problem.Input{Why: why, Hint: "the columns read are " + KnownColumns + "; log lines need lock events or a duration field",
			Err: ErrNoRuns}
	}
	if o.Simulate {
		o.Sim.Progress = meter(d, "simulate", "job types")
		if err := Simulate(ctx, d.Simulator, res, o.Sim); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// check rejects options no run can use.
func (o *Options) check() error {
	a := o.Analyze
	switch {
	case o.Query != "" && len(o.Files) > 0:
		return &problem.Input{Why: "give files or {Query}, not both"}
	case o.Query == "" && len(o.Files) == 0:
		return &problem.Input{Why: "no input: give CSV or log files, - for stdin, or {Query}"}
	case o.Format != "" && o.Format != FormatAuto && o.Format != FormatCSV && o.Format != FormatLogs && o.logFormat() == logs.FormatAuto:
		return problem.Inputf("Format", "want %s, %s, %s or a log format (%s)", FormatAuto, FormatCSV, FormatLogs,
			strings.Join(logs.FormatNames()[1:], ", ")).WithValue(o.Format)
	case a.Quantile != 0 && (a.Quantile <= 0 || a.Quantile >= 1):
		return problem.Inputf("Quantile", "must be between 0 and 1, e.g. 0.99").WithRawValue(fmt.Sprint(a.Quantile))
	case a.Buffer != 0 && a.Buffer < 1:
		return problem.Inputf("Buffer", "must be at least 1").WithRawValue(fmt.Sprint(a.Buffer))
	case a.MinSamples < 0:
		return problem.Inputf("MinSamples", "must be positive").WithRawValue(fmt.Sprint(a.MinSamples))
	case o.Query != "" && o.QueryTimeout < 0:
		return problem.Inputf("QueryTimeout", "must be positive").WithRawValue(o.QueryTimeout.String())
	case o.Simulate && (o.Sim.Jobs < 1 || o.Sim.Jobs > 10_000_000):
		return problem.Inputf("Jobs", "must be 1..10000000").WithRawValue(fmt.Sprint(o.Sim.Jobs))
	}
	return nil
}

func meter(d Deps, label, unit string) progress.Meter {
	if d.Progress == nil {
		return progress.Nop
	}
	return d.Progress(label, unit)
}

// readFiles reads the CSV files one by one as they come, and every log
// file in one scan, so a lock acquired in one file and released in the
// next still pairs up.
func readFiles(ctx context.Context, d Deps, o Options, c *Collector) error {
	var logSources []logs.Source
	for _, name := range o.Files {
		src, err := readFile(ctx, d, o, c, name)
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
	m := meter(d, "inspect ttl logs", "bytes")
	defer m.Done()
	_, err := ReadLogs(ctx, logSources, logs.Options{Mapping: o.Mapping, Progress: m, Format: o.logFormat(), TZ: o.TZ},
		o.Table.DefaultType, c)
	return inputError(ctx, err)
}

// logFormat is the log format Format names (json, logfmt, text, ...), or
// FormatAuto for auto, csv and logs.
func (o *Options) logFormat() logs.Format {
	f, err := logs.ParseFormat(o.Format)
	if err != nil {
		return logs.FormatAuto
	}
	return f
}

// readFile reads a CSV file (or stdin) now, or returns it as a log source
// for the scan.
func readFile(ctx context.Context, d Deps, o Options, c *Collector, name string) (logs.Source, error) {
	var r io.Reader
	size := int64(-1)
	if name == "-" {
		r = strings.NewReader("")
		if d.Stdin != nil {
			r = logs.Interruptible(ctx, d.Stdin)
		}
	} else {
		fh, err := logs.OpenFile(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, &problem.Input{Why: fmt.Sprintf("read %s: %v", name, unwrapPath(err)), Hint: "check the path", Err: err}
		}
		defer fh.Close()
		if st, err := fh.Stat(); err == nil {
			size = st.Size()
		}
		r = logs.FileReader(ctx, fh)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	format := o.Format
	switch {
	case format == "" || format == FormatAuto:
		format = sniff(br)
	case o.logFormat() != logs.FormatAuto:
		format = FormatLogs
	}
	if format == FormatLogs {
		if name == "-" {
			return logs.ReaderSource(name, br), nil
		}
		src, err := logs.File(name)
		return src, inputError(ctx, err)
	}
	m := meter(d, "inspect ttl "+name, "bytes")
	defer m.Done()
	m.SetTotal(size)
	return nil, inputError(ctx, ReadCSV(ctx, br, name, o.Table, c, m))
}

// inputError makes a reading error an input error (the file is what is
// wrong); an interruption stays what it is.
func inputError(ctx context.Context, err error) error {
	var in *problem.Input
	if err == nil || ctx.Err() != nil || errors.As(err, &in) {
		return err
	}
	return &problem.Input{Why: err.Error(), Err: err}
}

// sniff tells logs (in any format the log reader knows) from a table by
// the first lines.
func sniff(br *bufio.Reader) string {
	head, _ := br.Peek(64 << 10)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return FormatLogs // gzip: the log reader decompresses it
	}
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' || logs.LooksLikeLogs(head) {
		return FormatLogs
	}
	return FormatCSV
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readQuery runs the query in the caller's read-only session and says
// what a server error means.
func readQuery(ctx context.Context, d Deps, o Options, c *Collector) error {
	if d.Postgres == nil {
		return errors.New("inspect ttl: a query needs a PostgreSQL session")
	}
	db, err := d.Postgres(ctx)
	if err != nil {
		return err
	}
	m := meter(d, "inspect ttl query", "rows")
	defer m.Done()
	err = Query(ctx, db, o.Query, o.Table, c, m)
	if err == nil || ctx.Err() != nil {
		return err
	}
	switch connect.PGErrorKind(err) {
	case connect.PGStatementTimeout:
		return problem.System(err, fmt.Sprintf("the query ran longer than {QueryTimeout} %s: narrow it or raise the timeout",
			FormatDuration(o.QueryTimeout)))
	case connect.PGReadOnly:
		return &problem.Input{Why: err.Error(), Hint: "the query runs read-only: give a SELECT", Err: err}
	case connect.PGBadQuery:
		return &problem.Input{Why: err.Error(), Hint: "fix the query", Err: err}
	case connect.PGPermission:
		return problem.System(err, "the role needs SELECT on what the query reads")
	case connect.PGLockTimeout, connect.PGOther:
		return problem.System(err, "")
	}
	return inputError(ctx, err) // the result's columns: what the query asked for
}
