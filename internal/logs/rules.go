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
		Title: "some log lines could not be read in their file's format and were skipped",
		Doc: `Each file is read in the format its first lines show (JSON lines, CLEF,
GELF, OTLP/JSON, logfmt, a console layout, or Docker, CRI or journald
wrapping one). Lines that are not in that format (truncated lines, binary
data, another program's output mixed in) were counted and skipped; a stack
trace under a console line belongs to that line and is not counted. Events
on skipped lines are missing from the timelines, which can hide a cause.
When most lines cannot be read the command stops with an input error
instead. {Strict} makes the first one an error.`,
		Fix: "Keep one format per file (a stack trace inside a JSON field or under its console line); " +
			"filter other programs' lines before dupctl, or force the format with {Format}.",
	}
	RuleEmpty = findings.Rule{
		Code: "LOG_INPUT_EMPTY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the input holds no log line to read",
		Doc: `The files (or stdin) hold no line at all, or no line that could be read
in a format dupctl knows: nothing was checked. audit logs, keys unstable
and inspect ttl stop with an input error (exit 2) on such input; the
finding remains for {ExplainMapping}, which shows what it could read.`,
		Fix: "Point the command at the logs (a file, a directory, a glob or - for stdin); check the path and the time window of the export; " +
			"{Format} forces a format.",
	}

	RuleNoTimes = findings.Rule{
		Code: "LOG_TIMES_MISSING", Severity: findings.Warn, Since: "v0.3.0",
		Title: "log lines carry no time dupctl could read",
		Doc: `Some lines of the keys judged carry no timestamp, or one in a form dupctl
does not read (a time of day without a date, a custom layout). They are
never given a made-up time: each keeps its place in its file, after the
timed line before it. Order within one worker's file still decides; what
needs times - a lock held past its TTL, which of two workers went first -
is not claimed from those lines, so such duplicates may be undetermined.`,
		Fix: "Log a full timestamp with a zone (ISO 8601); map the field with {Fields} timestamp=PATH when it has another name, " +
			"and give {TZ} for times written without a zone.",
	}
)

// RuleMappingUnused: a field mapped to a path no line has.
var RuleMappingUnused = findings.Rule{
	Code: "LOG_MAPPING_UNUSED", Severity: findings.Warn, Since: "v0.3.0",
	Title: "a field was mapped to a path no line has",
	Doc: `A {Fields} name=path (or a {Mapping} file entry) names a path that no line
of the input carries, so the field is read from nowhere: a typo in the
path, a nested field written flat (or the other way round), or logs of
another service.`,
	Fix: "Check the path against a line (dupctl audit logs --explain-mapping FILE lists the paths each field was read from).",
}

// Rules are the input checks.
func Rules() []findings.Rule {
	return []findings.Rule{RuleMalformed, RuleEmpty, RuleNoTimes, RuleMappingUnused}
}

// InputFindings are the findings a scan's statistics call for: an empty
// input, or malformed lines (saying so when they are most of it).
func InputFindings(st Stats) []findings.Finding {
	var ev []string
	for _, s := range st.Samples {
		ev = append(ev, fmt.Sprintf("%s: %s: %s", s.Where(), s.Reason, s.Text))
	}
	switch {
	case st.Events == 0 && st.Lines == 0:
		return []findings.Finding{RuleEmpty.New("input", fmt.Sprintf("the input holds no line (%s)",
			english.Count(st.Sources, "source", "sources")))}
	case st.Events == 0:
		return []findings.Finding{RuleEmpty.New("input", fmt.Sprintf("none of %s lines could be read as %s", english.Number(st.Lines),
			formatsRead(st)), ev...)}
	case st.Malformed > 0 && st.Malformed*2 > st.Lines:
		return []findings.Finding{RuleMalformed.New(english.Count(st.Malformed, "line", "lines"),
			fmt.Sprintf("most lines (%s of %s) could not be read as %s and were skipped: the results rest on the other %s",
				english.Number(st.Malformed), english.Number(st.Lines), formatsRead(st), english.Number(st.Events)), ev...)}
	case st.Malformed > 0:
		return []findings.Finding{RuleMalformed.New(english.Count(st.Malformed, "line", "lines"),
			fmt.Sprintf("%d of %s could not be read as %s and %s skipped", st.Malformed, english.Count(st.Lines, "line", "lines"), formatsRead(st),
				english.Plural(st.Malformed, "was", "were")), ev...)}
	}
	return nil
}
