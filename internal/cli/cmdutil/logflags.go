package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/spf13/cobra"
)

// LogFlags are the flags of every command that reads structured logs:
// field and event mapping, strictness.
type LogFlags struct {
	Fields  []string
	Events  []string
	Mapping string
	Strict  bool
	// Format forces the log format; TZ is the zone of times written
	// without one.
	Format string
	TZ     string
	// MaxLine is the longest line read, in bytes (--max-line; 0:
	// logs.DefaultMaxLine).
	MaxLine int
	// Year and Date complete the times that leave them out (RFC 3164's
	// year, a time of day's date); zero: from the files.
	Year int
	Date string
	// NoLearn reads with the built-in names and phrases and the user's
	// mapping alone (--no-learn).
	NoLearn bool
}

// Register adds the flags to cmd, and names them for the mapping's errors
// ({Fields} is --field, {Events} --event).
func (l *LogFlags) Register(cmd *cobra.Command) {
	l.RegisterMapping(cmd, "")
	cmd.Flags().BoolVar(&l.Strict, "strict", false,
		"stop at the first line that cannot be read in its file's format (default: count, sample and skip)")
	l.RegisterFormat(cmd, "format")
	l.MaxLine = logs.DefaultMaxLine
	cmd.Flags().Var((*sizeFlag)(&l.MaxLine), "max-line", "the longest line read, e.g. 64MiB: a longer one is an input error "+
		"naming where it starts (a file without line ends, such as a device or a disk image, ends there)")
}

// sizeFlag is a size in bytes given as 16MiB, 500KiB or 1048576.
type sizeFlag int

func (s *sizeFlag) String() string { return logs.Size(int64(*s)) }
func (s *sizeFlag) Type() string   { return "size" }
func (s *sizeFlag) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("at most 2GiB, got %q", v)
	}
	*s = sizeFlag(n)
	return nil
}

// RegisterFormat adds the log format flag (named name: inspect ttl's
// --format also chooses CSV) and --tz.
func (l *LogFlags) RegisterFormat(cmd *cobra.Command, name string) {
	fs := cmd.Flags()
	if name != "" {
		fs.StringVar(&l.Format, name, "auto", "log format of every file, instead of detecting each file's from its first lines: "+
			strings.Join(logs.FormatNames(), ", "))
	}
	fs.StringVar(&l.TZ, "tz", "", "time zone of log times written without one, e.g. Europe/Berlin (default UTC)")
	fs.BoolVar(&l.NoLearn, "no-learn", false, "read with the built-in names and phrases and your mapping alone: learn nothing "+
		"from a sample of the input (its layout, worker, business key, steps)")
	fs.IntVar(&l.Year, "year", 0, "the year of log times written without one (syslog's RFC 3164; default: a neighbouring "+
		"line's, else the year that puts the line before the file's modification time)")
	fs.StringVar(&l.Date, "date", "", "the date (YYYY-MM-DD) of log times written as a time of day alone (zerolog's 3:04PM; "+
		"default: a date in the file's name or a neighbouring line's, else such times are not read)")
	names := map[string]string{"TZ": "tz"}
	if name != "" {
		names["Format"] = name
	}
	FieldFlags(cmd, names)
}

// Reading is how to read the files: the format forced (FormatAuto: each
// file's own) and the zone of zone-less times.
func (l *LogFlags) Reading() (logs.Format, *time.Location, error) {
	f := logs.FormatAuto
	if l.Format != "" {
		var err error
		if f, err = logs.ParseFormat(l.Format); err != nil {
			return 0, nil, problem.Inputf("Format", "%s", err.Error()).WithValue(l.Format)
		}
	}
	if l.TZ == "" {
		return f, nil, nil
	}
	loc, err := time.LoadLocation(l.TZ)
	if err != nil {
		return 0, nil, problem.Inputf("TZ", "unknown time zone: want an IANA name such as Europe/Berlin, or UTC").WithValue(l.TZ)
	}
	return f, loc, nil
}

// RegisterMapping adds only the mapping's flags, their help prefixed with
// when they apply ("with --effects-log: "), for a command that reads logs
// on the side.
func (l *LogFlags) RegisterMapping(cmd *cobra.Command, when string) {
	fs := cmd.Flags()
	fs.StringArrayVar(&l.Fields, "field", nil, when+"map a field to a JSON path, e.g. businessKey=payload.orderId "+
		"(repeatable; fields: "+strings.Join(logs.FieldNames()[2:12], ", ")+", ...)")
	fs.StringArrayVar(&l.Events, "event", nil, when+"KIND=PHRASE: lines whose event name or message holds these words record KIND, "+
		"e.g. side_effect='charged card' or side_effect='ledger * booked' "+
		"(a phrase, not a regular expression: words, * for up to four others, ^ and $ to anchor; repeatable)")
	fs.StringVar(&l.Mapping, "mapping", "", when+"JSON file with field paths, event phrases and event names (see docs/audit-logs.md)")
	FieldFlags(cmd, map[string]string{"Fields": "field", "Events": "event"})
}

// Compile builds the mapping: the --mapping file, then the phrases of
// dupctl.yaml's logs.events (cfg may be nil), then the flags.
func (l *LogFlags) Compile(cfg *config.Config) (*logs.Mapping, error) {
	var c logs.Config
	if l.Mapping != "" {
		f, err := os.Open(l.Mapping)
		if err != nil {
			return nil, &problem.Input{Field: "Mapping", Value: l.Mapping, Quote: true, Why: unwrapPath(err).Error(),
				Hint: "give a readable JSON mapping file", Err: err}
		}
		defer f.Close()
		if c, err = logs.LoadConfig(f); err != nil {
			return nil, &problem.Input{Field: "Mapping", Value: l.Mapping, Quote: true, Why: err.Error(), Hint: "fix the file", Err: err}
		}
	}
	if cfg != nil {
		for _, j := range cfg.Jobs {
			c.Merge(logs.Config{Events: j.Logs.Events})
		}
	}
	for _, v := range l.Fields {
		if err := c.AddFieldFlag(v); err != nil {
			return nil, err
		}
	}
	for _, v := range l.Events {
		if err := c.AddEventFlag(v); err != nil {
			return nil, err
		}
	}
	m, err := logs.Compile(c)
	if err != nil {
		return nil, err
	}
	lo, err := l.LearnOptions()
	if err != nil {
		return nil, err
	}
	if l.NoLearn {
		return m, nil
	}
	// What the flags and the files' mapping do not say - each file's
	// layout, the worker, the business key, which sentence is which step
	// - the first scan learns from a sample of the input (logs.Learn).
	return m.LearnFromInput(lo), nil
}

// LearnOptions are --year and --date, checked.
func (l *LogFlags) LearnOptions() (logs.LearnOptions, error) {
	lo := logs.LearnOptions{Year: l.Year}
	if l.Date != "" {
		var err error
		if lo.Date, err = time.Parse(time.DateOnly, l.Date); err != nil {
			return lo, exitcode.UsageErrorf("--date: want YYYY-MM-DD, got %q", l.Date)
		}
	}
	if l.Year < 0 || l.Year > 9999 {
		return lo, exitcode.UsageErrorf("--year: want a year such as 2026, got %d", l.Year)
	}
	return lo, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// LogSources expands file, glob and directory arguments ("-" is stdin,
// spooled to a temporary file so that it can be read twice, up to
// DefaultSpoolLimit or DUPCTL_SPOOL_LIMIT; the Factory removes it when the
// command ends).
func (f *Factory) LogSources(ctx context.Context, args []string) ([]logs.Source, error) {
	return f.SpooledLogSources(ctx, args, 0)
}

// SpooledLogSources is LogSources with the longest line the spool lets
// through (0: logs.DefaultMaxLine), the one the scan will read with.
func (f *Factory) SpooledLogSources(ctx context.Context, args []string, maxLine int) ([]logs.Source, error) {
	srcs, err := f.LogStreams(args)
	if err != nil {
		return nil, err
	}
	lim, err := f.spoolLimit()
	if err != nil {
		return nil, err
	}
	for i, s := range srcs {
		if s.Rewindable() {
			continue
		}
		sp, remove, err := logs.Spool(ctx, s, "", logs.SpoolLimit{Bytes: lim, MaxLine: maxLine})
		if err != nil {
			return nil, spoolError(err)
		}
		f.AddCleanup(remove)
		srcs[i] = sp
	}
	return srcs, nil
}

// LogStreams expands the arguments as LogSources does, for a command that
// reads its input once: "-" is stdin as it comes, never spooled.
func (f *Factory) LogStreams(args []string) ([]logs.Source, error) {
	srcs, err := logs.Expand(args, f.IO.In)
	if err != nil {
		return nil, exitcode.InputError(err, "give log files, directories, globs or - for stdin")
	}
	return srcs, nil
}

// DefaultSpoolLimit is the disk stdin may take to be read twice;
// DUPCTL_SPOOL_LIMIT (bytes, or with a KiB, MiB or GiB suffix) changes it.
const DefaultSpoolLimit = 8 << 30

func (f *Factory) spoolLimit() (int64, error) {
	v := strings.TrimSpace(f.Getenv("DUPCTL_SPOOL_LIMIT"))
	if v == "" {
		return DefaultSpoolLimit, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return 0, exitcode.UsageErrorf("DUPCTL_SPOOL_LIMIT: %w", err)
	}
	return n, nil
}

// ParseSize reads a size: bytes, or a number with a KiB, MiB or GiB
// suffix (K, M, G and KB, MB, GB mean the same, in powers of 1024).
func ParseSize(s string) (int64, error) {
	num := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToUpper(strings.TrimSpace(s[len(num):]))
	shift, ok := map[string]uint{"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20,
		"G": 30, "GB": 30, "GIB": 30}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("want a size such as 4GiB or 500MiB, got %q", s)
	}
	return n << shift, nil
}

// spoolError maps a spool's failure: a line too long is bad input as it
// is, an interruption stays one, a stream over the limit or a disk that
// refused is a runtime failure (exit 3) saying what was read.
func spoolError(err error) error {
	var full *logs.SpoolFullError
	var in *problem.Input
	switch {
	case errors.As(err, &in):
		return LogError(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &full):
		return exitcode.UnavailableError(err, "write the input to a file and give the file, "+
			"or raise DUPCTL_SPOOL_LIMIT and make room in TMPDIR")
	}
	return exitcode.UnavailableError(err, "set TMPDIR to a directory with room for the input")
}

// LogError maps a scan error: a malformed line under --strict or an
// unreadable file is bad input (exit 2), and a line too long says which
// flag reads longer ones.
func LogError(err error) error {
	var lt *logs.LineTooLongError
	var in *problem.Input
	if errors.As(err, &lt) && errors.As(err, &in) {
		c := *in
		c.Hint += "; for a log whose lines are that long, raise --max-line"
		return &c
	}
	var me *logs.MalformedError
	if errors.As(err, &me) {
		return exitcode.InputError(err, "fix or filter the line, or drop --strict to skip malformed lines")
	}
	var se *logs.SourceError
	if errors.As(err, &se) {
		return exitcode.InputError(err, "check the file")
	}
	return err
}
