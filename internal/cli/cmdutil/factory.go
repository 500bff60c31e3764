// Package cmdutil is what every dupctl command shares: the Factory of lazy
// dependencies, the global options and the one way to emit a report.
package cmdutil

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"fmt"
	"os"
	"time"

	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"

	"github.com/dupctl/dupctl/internal/platform/buildinfo"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/spf13/cobra"
)

// GlobalOptions are the flags every command shares.
type GlobalOptions struct {
	// Output is the format written to stdout; Files are the other outputs
	// of the same run, each to its own file (--output json=report.json,
	// --html incident.html).
	Output string
	Files  []OutputFile
	FailOn string
	// Threshold is FailOn, parsed once before the command runs.
	Threshold findings.Threshold
	NoColor   bool
	Verbose   bool
	// MarkdownLimit bounds -o markdown in bytes (--md-limit; 0: 1 MiB).
	MarkdownLimit int
	Timeout       time.Duration
	RedisURL      string
	DatabaseURL   string
	AMQPURL       string
	ConfigPath    string
	// Job names the dupctl.yaml job whose settings fill the flags a
	// command was not given (Factory.Job).
	Job string
}

// OutputFile is one output written to a file.
type OutputFile struct {
	Format, Path string
}

// ParseOutputs reads the -o/--output values (FORMAT, or FORMAT=PATH) and
// --html: the one without a path goes to stdout (table when every one has
// a path), the others to their files.
func ParseOutputs(values []string, html string) (stdout string, files []OutputFile, err error) {
	seen := map[string]bool{}
	for _, v := range values {
		format, path, toFile := strings.Cut(v, "=")
		if path == "-" {
			toFile = false // FORMAT=- is stdout
		}
		if !slices.Contains(report.Formats, format) {
			return "", nil, fmt.Errorf("unknown output format %q: want %s (FORMAT or FORMAT=PATH)", format, strings.Join(report.Formats, ", "))
		}
		switch {
		case toFile && path == "":
			return "", nil, fmt.Errorf("--output %s=: give a file path after the =", format)
		case toFile && seen[path]:
			return "", nil, fmt.Errorf("--output: %s is named twice", path)
		case toFile && isDir(path):
			return "", nil, fmt.Errorf("--output %s=%s: a directory: give a file path", format, path)
		case toFile:
			seen[path] = true
			files = append(files, OutputFile{Format: format, Path: path})
		case stdout != "" && stdout != format:
			return "", nil, fmt.Errorf("--output %s and --output %s both write to stdout: give one a file (%s=PATH)", stdout, format, format)
		default:
			stdout = format
		}
	}
	if html != "" {
		if seen[html] {
			return "", nil, fmt.Errorf("--html: %s is named twice", html)
		}
		if isDir(html) {
			return "", nil, fmt.Errorf("--html %s: a directory: give a file path", html)
		}
		files = append(files, OutputFile{Format: report.FormatHTML, Path: html})
	}
	if stdout == "" {
		stdout = report.FormatTable
	}
	return stdout, files, nil
}

// Factory holds what commands need, built lazily so that --help never dials
// anything and tests can swap any piece.
type Factory struct {
	IO     *iostreams.IOStreams
	Global *GlobalOptions
	// Catalog is every rule this build knows, its texts worded for the
	// command line; the root command assembles it (internal/cli/catalog),
	// so that a noun's package does not compile every capability. Nil in
	// a Factory a noun's own tests build.
	Catalog *findings.Catalog
	// Namer words the options a capability's text names ({KeyColumn})
	// for this run's reader: the running command's flags (set before it
	// runs), or dupctl.yaml's keys for doctor. RuleNamer words what is left
	// of a finding as its rule's documentation does.
	Namer     Namer
	RuleNamer func(code string) Namer
	// Config is dupctl.yaml, or nil when there is none.
	Config    *config.Config
	BuildInfo func() buildinfo.Info
	// Now is the wall clock; DUPCTL_NOW (RFC 3339) pins it for tests.
	Now func() time.Time

	// Connections, opened on first use from the global URLs and closed
	// when the command ends. Tests may replace them.
	Redis    func(ctx context.Context) (redis.UniversalClient, error)
	Postgres func(ctx context.Context, o connect.PostgresOptions) (*pgxpool.Pool, error)
	AMQP     func(ctx context.Context) (*amqp.Connection, error)

	cleanups []func()
	// pending is the rendered report, written to stdout only once the
	// command has ended well (Flush); a failed run writes instead what
	// Flush renders with its error.
	pending *spool
	files   map[string]*spool // path -> rendered output, written by Flush
	// docs are the documents emitted, rendered again by Flush, with the
	// error, when the run fails after rendering them.
	docs    []report.Document
	started time.Time
}

// AddCleanup registers a release (a timeout's cancel, a connection's
// Close) to run when the command ends.
func (f *Factory) AddCleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

// Cleanup runs deferred releases (timeouts, connections) in reverse order.
func (f *Factory) Cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.cleanups = nil
}

// NewFactory returns the production factory around the given streams.
func NewFactory(ios *iostreams.IOStreams) *Factory {
	f := &Factory{
		started:   time.Now(),
		IO:        ios,
		Global:    &GlobalOptions{FailOn: "error", Threshold: findings.FailError},
		BuildInfo: buildinfo.Get,
		Now:       clock(ios.Getenv),
	}
	f.Redis = func(ctx context.Context) (redis.UniversalClient, error) {
		c, err := connect.Redis(ctx, f.Global.RedisURL)
		if err == nil {
			f.AddCleanup(func() { c.Close() })
		}
		return c, err
	}
	f.Postgres = func(ctx context.Context, o connect.PostgresOptions) (*pgxpool.Pool, error) {
		p, err := connect.Postgres(ctx, f.Global.DatabaseURL, o)
		if err == nil {
			f.AddCleanup(p.Close)
		}
		return p, err
	}
	f.AMQP = func(ctx context.Context) (*amqp.Connection, error) {
		c, err := connect.AMQP(ctx, f.Global.AMQPURL)
		if err == nil {
			f.AddCleanup(func() { c.Close() })
		}
		return c, err
	}
	return f
}

func clock(getenv func(string) string) func() time.Time {
	if getenv != nil {
		if v := getenv("DUPCTL_NOW"); v != "" {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				return func() time.Time { return t }
			}
		}
	}
	return time.Now
}

// Getenv reads the environment through the streams (tests replace it).
func (f *Factory) Getenv(k string) string {
	if f.IO.Getenv != nil {
		return f.IO.Getenv(k)
	}
	return os.Getenv(k)
}

// ParseFailOn reads --fail-on into Global.Threshold: the one place it is
// parsed.
func (f *Factory) ParseFailOn() error {
	t, err := findings.ParseThreshold(f.Global.FailOn)
	if err != nil {
		return err
	}
	f.Global.Threshold = t
	return nil
}

// Emit renders a document in the chosen output format on stdout and returns
// the silent findings error when it fails --fail-on.
func (f *Factory) Emit(ctx context.Context, doc report.Document) error {
	t := f.Global.Threshold
	f.Config.ApplyAllow(doc.Report, f.Now())
	WordReport(doc.Report, f.Namer, f.RuleNamer)
	report.Prepare(doc.Report)
	f.docs = append(f.docs, doc)
	out, err := f.render(f.Global.Output, f.IO.ColorEnabled(), f.IO.TableWidth(), nil, doc)
	if err != nil {
		return err
	}
	if f.pending != nil {
		// A second document (a command that emits twice) follows the first.
		_, err := out.WriteTo(f.pending)
		out.Close()
		if err != nil {
			return err
		}
	} else {
		f.pending = out
		f.AddCleanup(out.Close)
	}
	for _, file := range f.Global.Files {
		b, err := f.render(file.Format, false, 0, nil, doc)
		if err != nil {
			return err
		}
		if f.files == nil {
			f.files = map[string]*spool{}
		}
		if old := f.files[file.Path]; old != nil {
			old.Close()
		}
		f.files[file.Path] = b
		f.AddCleanup(b.Close)
	}
	if findings.Summarize(doc.Report, t).Failed {
		return exitcode.FindingsFailed()
	}
	return nil
}

// render renders documents, one after the other, in a format; failure,
// when set, is why the run did not end well, which every format says.
func (f *Factory) render(format string, color bool, width int, failure *report.Failure, docs ...report.Document) (*spool, error) {
	p, err := report.NewPrinter(format, report.Options{
		FailOn:        f.Global.Threshold,
		Color:         color,
		Verbose:       f.Global.Verbose,
		Tool:          f.BuildInfo(),
		Catalog:       f.Catalog,
		Elapsed:       f.Elapsed(),
		MarkdownLimit: f.Global.MarkdownLimit,
		Failure:       failure,
		Width:         width,
	})
	if err != nil {
		return nil, exitcode.UsageErrorf("%w", err)
	}
	out := &spool{}
	for _, d := range docs {
		if err := p.Print(out, d); err != nil {
			out.Close()
			return nil, fmt.Errorf("render %s output: %w", format, err)
		}
	}
	return out, nil
}

// Flush writes the outputs once the command has ended. A run that ended
// well (err is nil, or the silent error of findings at --fail-on) writes
// each as it was rendered. A run that did not (exit 2, 3 or 130) still
// writes every output asked for, on stdout and in files, and each says
// what happened (report.Failure: JUnit an <error> testcase, JSON its
// "error", Markdown and HTML a banner), so that no CI view of it is green:
// the report with the error, when the report stands (the error keeps the
// output, as doctor's unreachable systems do, or the run was interrupted
// after rendering), else a document of the error alone. A table on stdout
// is written only when the report stands, the error following on stderr.
func (f *Factory) Flush(command string, err error, code int, message string) error {
	pending, files, docs := f.pending, f.files, f.docs
	f.pending, f.files, f.docs = nil, nil, nil
	var errs []error
	if err == nil || exitcode.IsSilent(err) {
		for _, file := range f.Global.Files {
			if b := files[file.Path]; b != nil {
				errs = append(errs, writeFile(file.Path, b))
			}
		}
		if pending != nil {
			_, werr := pending.WriteTo(f.IO.Out)
			errs = append(errs, werr)
		}
		return errors.Join(errs...)
	}
	stands := (exitcode.KeepsOutput(err) || code == exitcode.Interrupted) && len(docs) > 0
	if !stands {
		docs = []report.Document{{Report: &findings.Report{Command: command}}}
	}
	failure := f.failure(err, code, message)
	write := func(format string, color bool, width int, to func(*spool) error, docs ...report.Document) {
		b, rerr := f.render(format, color, width, failure, docs...)
		if rerr != nil {
			errs = append(errs, rerr)
			return
		}
		errs = append(errs, to(b))
		b.Close()
	}
	for _, file := range f.Global.Files {
		// A file holds the last document, as when the run ends well.
		write(file.Format, false, 0, func(b *spool) error { return writeFile(file.Path, b) }, docs[len(docs)-1])
	}
	switch {
	case f.Global.Output != report.FormatTable:
		toOut := func(b *spool) error { _, werr := b.WriteTo(f.IO.Out); return werr }
		write(f.Global.Output, f.IO.ColorEnabled(), f.IO.TableWidth(), toOut, docs...)
	case stands && pending != nil:
		_, werr := pending.WriteTo(f.IO.Out)
		errs = append(errs, werr)
	}
	return errors.Join(errs...)
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// writeFile writes an output file. A regular file (or a new one) is
// written whole: to a temporary file beside it, then renamed over it, so
// a reader never sees half a report. Anything else is written in place,
// never replaced (issue 27: renaming over the path made /dev/null a
// regular file for the whole machine): a device, a FIFO, /dev/stdout, and
// a symlink's target (a regular target is replaced atomically, the link
// kept).
func writeFile(path string, b io.WriterTo) error {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	st, err := os.Stat(target)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("write %s: a directory", path)
	case err == nil && !st.Mode().IsRegular(), err == nil && strings.HasPrefix(target, "/proc/"):
		return writeInPlace(path, b)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write %s: %w", path, err)
	}
	mode := os.FileMode(0o644)
	if err == nil {
		mode = st.Mode().Perm()
	}
	return replaceFile(target, b, mode)
}

// writeInPlace writes to what path is (a device, a FIFO, a terminal),
// appending: /dev/stdout redirected to a file keeps what was written
// before.
func writeInPlace(path string, b io.WriterTo) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := b.WriteTo(fh); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// replaceFile writes a regular file whole, by rename.
func replaceFile(path string, b io.WriterTo, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := b.WriteTo(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Elapsed is the command's wall time so far; 0 when DUPCTL_NOW pins the
// clock, so tests stay deterministic.
func (f *Factory) Elapsed() time.Duration {
	if f.Getenv("DUPCTL_NOW") != "" {
		return 0
	}
	return time.Since(f.started)
}

// GroupRunE makes a command that only groups subcommands print its help
// when called alone and fail with a usage error on an unknown subcommand
// (cobra would print help and exit 0).
func GroupRunE(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return exitcode.UsageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return cmd.Help()
}

// LoadConfig reads --config (or DUPCTL_CONFIG), or dupctl.yaml in the
// working directory when it exists. A named file that cannot be read is a
// usage error; no file at all is fine.
func (f *Factory) LoadConfig() error {
	p := f.Global.ConfigPath
	if p == "" {
		p = f.Getenv("DUPCTL_CONFIG")
	}
	if p == "" {
		if _, err := os.Stat(config.DefaultPath); err != nil {
			return nil
		}
		p = config.DefaultPath
	}
	c, err := config.Load(p)
	if err != nil {
		return exitcode.InputError(err, "fix the file or pass --config")
	}
	// An allow-list entry for a code no rule has would accept nothing and
	// say nothing (a typo, a code from another version).
	for i, a := range c.Allow {
		if _, ok := f.Catalog.Lookup(a.Code); !ok && f.Catalog != nil {
			return exitcode.InputError(fmt.Errorf("%s: allow[%d]: unknown finding code %q", p, i, a.Code), "run 'dupctl explain' for the codes")
		}
	}
	f.Config = c
	return nil
}

// WantsHTML reports whether this run writes an HTML report (to stdout or
// a file), for commands that gather more for the picture.
func (f *Factory) WantsHTML() bool {
	if f.Global.Output == report.FormatHTML {
		return true
	}
	for _, file := range f.Global.Files {
		if file.Format == report.FormatHTML {
			return true
		}
	}
	return false
}
