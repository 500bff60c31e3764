package cmdutil

import (
	"errors"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// failure is what a run that did not end well says in every output it
// still writes: the one-line error (as stderr shows it), its exit code,
// and the checks that could not run. An error that joins several errors
// (errors.Join), each its check's name wrapped around its cause
// (fmt.Errorf("%s: %w", name, err)), is one check that could not run per
// branch: doctor's lines whose system was unreachable. Any other error is
// the command's own. Every text is redacted, as every message is.
func (f *Factory) failure(err error, code int, message string) *report.Failure {
	out := &report.Failure{Message: redact.String(message), ExitCode: code}
	if code == exitcode.Interrupted {
		return out
	}
	branches, name := joined(err, f.Namer.Or(Plain))
	var notRun []report.NotRun
	for _, b := range branches {
		cause := errors.Unwrap(b)
		if cause == nil {
			return out
		}
		check, ok := strings.CutSuffix(b.Error(), ": "+cause.Error())
		if !ok || strings.TrimSpace(check) == "" {
			return out // not a check's name around its cause: the error is the command's
		}
		notRun = append(notRun, report.NotRun{Check: failureText(check, name), Message: failureText(cause.Error(), name)})
	}
	out.NotRun = notRun
	return out
}

// joined finds the errors joined in err's chain, and the Namer that words
// them: the innermost WordError's around them, else name.
func joined(err error, name Namer) ([]error, Namer) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if w, ok := e.(*wordedError); ok {
			name = w.name
		}
		if m, ok := e.(interface{ Unwrap() []error }); ok {
			return m.Unwrap(), name
		}
	}
	return nil, name
}

// failureText is one line of an error, its options worded, redacted.
func failureText(s string, name Namer) string {
	return redact.String(strings.Join(strings.Fields(Expand(s, name)), " "))
}
