package logs

import (
	"fmt"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// The input checks every command that reads logs reports: nothing to read
// is never a green "no findings".
var (
	RuleMalformed = findings.Rule{
		Code: "LOG_MALFORMED_LINES", Severity: findings.Warn, Since: "v0.1.0",
		Title: "some log lines are not JSON objects and were skipped",
		Doc: `Lines that are not one JSON object (plain text, truncated lines, a
multi-line stack trace, binary data) were counted and skipped. Events on
those lines are missing from the timelines, which can hide a cause; when
most lines are skipped, the results rest on the few that were read.
--strict makes the first one an error.`,
		Fix: "Log one JSON object per line (JSON layout for the whole output, stack traces inside a field); filter non-JSON lines before dupctl, or fix the exporter.",
	}
	RuleEmpty = findings.Rule{
		Code: "LOG_INPUT_EMPTY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the input holds no log line to read",
		Doc: `The files (or stdin) hold no line at all, or no line that is a JSON
object: nothing was checked, so no finding means nothing here - not that
the logs are clean.`,
		Fix: "Point the command at the JSON-lines logs (a file, a directory, a glob or - for stdin); check the path, the time window of the export, and that the logs are JSON.",
	}
)

// Rules are the input checks.
func Rules() []findings.Rule { return []findings.Rule{RuleMalformed, RuleEmpty} }

// InputFindings are the findings a scan's statistics call for: an empty
// input, or malformed lines (saying so when they are most of it).
func InputFindings(st Stats) []findings.Finding {
	var ev []string
	for _, s := range st.Samples {
		ev = append(ev, fmt.Sprintf("%s: %s: %s", s.Where(), s.Reason, s.Text))
	}
	switch {
	case st.Events == 0 && st.Lines == 0:
		return []findings.Finding{RuleEmpty.New("input", fmt.Sprintf("the input holds no line (%s)", english.Count(st.Sources, "source", "sources")))}
	case st.Events == 0:
		return []findings.Finding{RuleEmpty.New("input", fmt.Sprintf("none of %s lines is a JSON object", english.Number(st.Lines)), ev...)}
	case st.Malformed > 0 && st.Malformed*2 > st.Lines:
		return []findings.Finding{RuleMalformed.New(english.Count(st.Malformed, "line", "lines"),
			fmt.Sprintf("most lines (%s of %s) are not JSON objects and were skipped: the results rest on the other %s",
				english.Number(st.Malformed), english.Number(st.Lines), english.Number(st.Events)), ev...)}
	case st.Malformed > 0:
		return []findings.Finding{RuleMalformed.New(english.Count(st.Malformed, "line", "lines"),
			fmt.Sprintf("%d of %s %s not JSON objects and were skipped", st.Malformed, english.Count(st.Lines, "line", "lines"), english.Plural(st.Malformed, "is", "are")), ev...)}
	}
	return nil
}
