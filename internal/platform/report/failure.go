package report

import (
	"fmt"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Failure is why a run did not end well (exit 2, 3 or 130). Every output
// the run still writes says so, so that a CI view of any of them is never
// green when the exit code is not 0: JUnit an <error> testcase, JSON its
// "error" object, Markdown and HTML a banner, a table file a last line.
type Failure struct {
	// Message is the one-line error, as stderr shows it ("interrupted"
	// for exit 130).
	Message  string
	ExitCode int
	// NotRun are the checks that could not run, each with why (doctor's
	// lines whose system was unreachable); empty when the error is the
	// command's own (it failed before any check, or as a whole).
	NotRun []NotRun
}

// NotRun is one check that could not run.
type NotRun struct {
	Check   string // the check's name, e.g. "inspect lock (every lock-shaped key)"
	Message string // why, in one line
}

// title is the verdict of a failed run: "error (exit 3)",
// "interrupted (exit 130)".
func (f *Failure) title() string {
	word := "error"
	if f.ExitCode == exitcode.Interrupted {
		word = "interrupted"
	}
	return fmt.Sprintf("%s (exit %d)", word, f.ExitCode)
}

// label introduces the banner: "Error (exit 3)".
func (f *Failure) label() string { return fmt.Sprintf("Error (exit %d)", f.ExitCode) }

// lead is the banner's sentence: how many checks could not run, or the
// error itself.
func (f *Failure) lead() string {
	if n := len(f.NotRun); n > 0 {
		return english.Count(n, "check", "checks") + " could not run:"
	}
	return f.Message
}

// nothingRan reports whether a failed run has nothing to show but its
// error: no check ran and nothing was found.
func nothingRan(r *findings.Report, f *Failure) bool {
	return f != nil && len(checkList(r)) == 0 && len(r.Allowed) == 0
}
