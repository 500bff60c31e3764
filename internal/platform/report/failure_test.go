package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// failed renders a report in format as a run that did not end well (as
// one that ended well with a nil f).
func failed(t *testing.T, format string, r *findings.Report, f *Failure) string {
	t.Helper()
	o := options(findings.FailError)
	o.Elapsed, o.Failure = 1500*time.Millisecond, f
	p, err := NewPrinter(format, o)
	if err != nil {
		t.Fatal(err)
	}
	Prepare(r)
	var buf bytes.Buffer
	if err := p.Print(&buf, Document{Report: r}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func parseJUnit(t *testing.T, out string) JUnitTestSuites {
	t.Helper()
	var doc JUnitTestSuites
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("does not parse: %v\n%s", err, out)
	}
	return doc
}

// TestJUnitError: a command that failed before any check writes a
// document with one testcase, named after the command, whose <error>
// says why, with its exit code and the command's time.
func TestJUnitError(t *testing.T) {
	out := failed(t, FormatJUnit, &findings.Report{Command: "inspect lock"},
		&Failure{Message: "cannot reach Redis at redis://:hunter2@127.0.0.1:1 <&>", ExitCode: 3})
	doc := parseJUnit(t, out)
	if doc.Tests != 1 || doc.Errors != 1 || doc.Failures != 0 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 ||
		doc.Suites[0].Errors != 1 {
		t.Fatalf("counts: %+v", doc)
	}
	c := doc.Suites[0].Cases[0]
	if c.Name != "dupctl inspect lock" || c.Error == nil || c.Error.Type != "exit 3" ||
		!strings.Contains(c.Error.Message, "cannot reach Redis") || doc.Time != "1.500" || c.Time != "1.500" {
		t.Fatalf("error testcase: %+v, time %s", c, doc.Time)
	}
	if strings.Contains(out, "hunter2") {
		t.Fatal("password in the JUnit error document")
	}
}

// TestJUnitErrorPerCheckNotRun: a report whose checks all passed, from a
// run where two checks could not run, is not green: its passing testcases
// stay, and each check that could not run is a testcase with an <error>,
// counted in "errors" on the suite and the document.
func TestJUnitErrorPerCheckNotRun(t *testing.T) {
	r := &findings.Report{Command: "doctor", Checks: []string{"LOCK_NO_TTL", "LOCK_CLEAN"}}
	f := &Failure{Message: "two checks failed", ExitCode: 3, NotRun: []NotRun{
		{Check: "inspect lock (every lock-shaped key)", Message: "cannot reach Redis at redis://:hunter2@127.0.0.1:1/0"},
		{Check: "inspect store", Message: "cannot reach PostgreSQL"},
	}}
	out := failed(t, FormatJUnit, r, f)
	doc := parseJUnit(t, out)
	s := doc.Suites[0]
	if doc.Tests != 4 || s.Tests != 4 || doc.Errors != 2 || s.Errors != 2 || doc.Failures != 0 || strings.Count(out, "<error ") != 2 {
		t.Fatalf("counts: tests %d/%d, errors %d/%d, failures %d:\n%s", doc.Tests, s.Tests, doc.Errors, s.Errors, doc.Failures, out)
	}
	var names []string
	for _, c := range s.Cases {
		if c.Error != nil {
			names = append(names, c.Name)
			if c.Error.Type != "exit 3" || c.ClassName != "dupctl.doctor" {
				t.Errorf("error testcase %+v", c)
			}
		}
	}
	if want := []string{"inspect lock (every lock-shaped key)", "inspect store"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("error testcases %v, want %v", names, want)
	}
	if s.Cases[2].Error.Message != "cannot reach Redis at redis://:xxxxx@127.0.0.1:1/0" {
		t.Fatalf("message %q: want the check's own error, redacted", s.Cases[2].Error.Message)
	}
	// The same report from a run that ended well is green: the errors
	// come from the failure alone.
	if ok := parseJUnit(t, failed(t, FormatJUnit, r, nil)); ok.Errors != 0 || ok.Tests != 2 {
		t.Fatalf("without a failure: %+v", ok)
	}
}

// TestJUnitFindingsAndError: findings at --fail-on stay failures next to
// the error testcase of a run that then failed.
func TestJUnitFindingsAndError(t *testing.T) {
	doc := parseJUnit(t, failed(t, FormatJUnit, fixture(), &Failure{Message: "interrupted", ExitCode: 130}))
	if doc.Failures != 1 || doc.Errors != 1 || doc.Tests != 5 {
		t.Fatalf("counts: %+v", doc)
	}
	last := doc.Suites[0].Cases[4]
	if last.Name != "dupctl inspect lock" || last.Error == nil || last.Error.Message != "interrupted" || last.Error.Type != "exit 130" {
		t.Fatalf("interrupted testcase: %+v", last)
	}
}

// TestJSONError: a failed run's JSON keeps every field of schema 1 and
// adds "error": its message, exit code and the checks not run; a run that
// ended well has no "error" at all.
func TestJSONError(t *testing.T) {
	f := &Failure{Message: "inspect lock: cannot reach Redis at redis://:hunter2@127.0.0.1:1/0", ExitCode: 3,
		NotRun: []NotRun{{Check: "inspect lock", Message: "cannot reach Redis at redis://:hunter2@127.0.0.1:1/0"}}}
	out := failed(t, FormatJSON, fixture(), f)
	if strings.Contains(out, "hunter2") {
		t.Fatalf("password in the JSON error:\n%s", out)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"allowed", "checks", "command", "data", "error", "fail_on", "findings", "schema_version", "summary", "tool"}
	if got := keys(doc); !reflect.DeepEqual(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	e := doc["error"].(map[string]any)
	if got := keys(e); !reflect.DeepEqual(got, []string{"exit_code", "message", "not_run"}) {
		t.Fatalf("error fields %v", got)
	}
	notRun := e["not_run"].([]any)
	if e["exit_code"] != float64(3) || len(notRun) != 1 || keys(notRun[0].(map[string]any))[0] != "check" ||
		notRun[0].(map[string]any)["check"] != "inspect lock" {
		t.Fatalf("error %v", e)
	}
	if len(doc["checks"].([]any)) != 4 || doc["schema_version"] != float64(SchemaVersion) {
		t.Fatalf("the report's own fields changed: %v", doc["checks"])
	}
	// A command's own error has no checks not run: [] (never null).
	out = failed(t, FormatJSON, &findings.Report{Command: "inspect lock"}, &Failure{Message: "bad flag", ExitCode: 2})
	if !strings.Contains(out, "\"not_run\": []") || !strings.Contains(out, "\"exit_code\": 2") {
		t.Fatalf("command error:\n%s", out)
	}
}

// TestFailureBanner: Markdown, HTML and a table file say the run failed,
// never "passes"; the error is escaped and redacted like any outside text.
func TestFailureBanner(t *testing.T) {
	f := &Failure{Message: "cannot reach Redis at redis://:hunter2@127.0.0.1:1/0 <script>", ExitCode: 3}
	for format, want := range map[string][]string{
		FormatMarkdown: {"### dupctl inspect lock: error (exit 3)\n", "> **Error (exit 3):** cannot reach Redis at redis://:xxxxx@",
			"&lt;script&gt;"},
		FormatHTML: {`<p class="verdict fail"><strong>error (exit 3)</strong>`, `<section class="failure" role="alert">`,
			"<strong>Error (exit 3):</strong> cannot reach Redis", "&lt;script&gt;"},
		FormatTable: {"Error (exit 3): cannot reach Redis at redis://:xxxxx@"},
	} {
		out := failed(t, format, fixture(), f)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in:\n%s", format, w, out)
			}
		}
		for _, bad := range []string{"passes", "hunter2", "<script>"} {
			if strings.Contains(out, bad) && (bad != "<script>" || format != FormatTable) { // (a table is plain text)
				t.Errorf("%s: %q in:\n%s", format, bad, out)
			}
		}
	}
	// Nothing ran: the banner alone, no "No findings (0 checks)".
	for _, format := range []string{FormatMarkdown, FormatHTML, FormatTable} {
		out := failed(t, format, &findings.Report{Command: "inspect lock"}, &Failure{Message: "unknown flag: --bogus", ExitCode: 2})
		if !strings.Contains(out, "unknown flag: --bogus") || strings.Contains(out, "0 checks") {
			t.Errorf("%s, nothing ran:\n%s", format, out)
		}
	}
	md := failed(t, FormatMarkdown, fixture(), &Failure{Message: "interrupted", ExitCode: 130})
	if !strings.HasPrefix(md, "### dupctl inspect lock: interrupted (exit 130)\n") {
		t.Errorf("interrupted:\n%s", md)
	}
}
