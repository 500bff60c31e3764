package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/buildinfo"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/redact"
)

// Formats accepted by -o/--output.
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatJUnit    = "junit"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
)

// Formats lists the output formats, for flag help and completion.
var Formats = []string{FormatTable, FormatJSON, FormatJUnit, FormatMarkdown, FormatHTML}

// Options are what every printer needs besides the report.
type Options struct {
	FailOn  findings.Threshold
	Color   bool
	Verbose bool
	Tool    buildinfo.Info
	Catalog *findings.Catalog
	// Elapsed is the command's wall time, for JUnit's time attributes
	// (0 in tests that pin the clock).
	Elapsed time.Duration
	// MarkdownLimit bounds Markdown output in bytes (a PR comment's 65,536
	// characters); 0 or more than MaxMarkdown means MaxMarkdown.
	MarkdownLimit int
	// Failure, when set, is why the run did not end well: every format
	// says so (nil for a run that ended with exit 0 or 1).
	Failure *Failure
	// Width is how many display columns a table line may take (the
	// terminal's, or $COLUMNS); 0 keeps whole rows (a file, a pipe).
	Width int
}

// Document is one command's output: its report, and the command's own
// human view (timeline, histogram, summary table) drawn before the findings
// in table output. Text may be nil.
type Document struct {
	Report *findings.Report
	Text   func(w io.Writer, th *Theme) error
	// Markdown, when set, writes the command's own summary for a CI step
	// summary (escaped with MarkdownText), after the findings table.
	Markdown func(w io.Writer) error
	// HTML, when set, writes the command's picture for -o html: an HTML
	// fragment with inline SVG, every outside value escaped (Escape, SVG).
	HTML func(w io.Writer) error
}

// Printer writes a document in one format.
type Printer interface {
	Print(w io.Writer, d Document) error
}

// NewPrinter returns the printer for a format name.
func NewPrinter(format string, o Options) (Printer, error) {
	switch format {
	case FormatTable, "":
		return tablePrinter{o}, nil
	case FormatJSON:
		return jsonPrinter{o}, nil
	case FormatJUnit:
		return junitPrinter{o}, nil
	case FormatMarkdown:
		return markdownPrinter{o}, nil
	case FormatHTML:
		return htmlPrinter{o}, nil
	}
	return nil, fmt.Errorf("unknown output format %q: want %s", format, strings.Join(Formats, ", "))
}

// checkList is every check the report ran: its declared checks, then any
// code that produced a finding without being declared.
func checkList(r *findings.Report) []string {
	out := slices.Clone(r.Checks)
	for _, f := range r.Findings {
		if !slices.Contains(out, f.Code) {
			out = append(out, f.Code)
		}
	}
	return out
}

// emit renders into a buffer and writes it redacted: the single place where
// output meets the redaction helper.
func emit(w io.Writer, render func(*bytes.Buffer) error) error {
	return emitClean(w, render, nil)
}

// emitClean is emit with a last pass over the text (a table's terminal
// sanitiser).
func emitClean(w io.Writer, render func(*bytes.Buffer) error, clean func(string) string) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	out := redact.String(buf.String())
	if clean != nil {
		out = clean(out)
	}
	_, err := io.WriteString(w, out)
	return err
}

// Prepare sorts a report's findings once, before any printer runs, and
// gives nil slices their empty value.
func Prepare(r *findings.Report) {
	r.Sort()
	for i := range r.Findings {
		if r.Findings[i].Evidence == nil {
			r.Findings[i].Evidence = []string{}
		}
	}
}
