package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// flushed is what one run wrote: stdout and each output file.
type flushed struct {
	stdout          string
	json            report.JSONReport
	junit, md, html string
}

// runFlush runs a command's end as Run does: emit (a report of two checks,
// no findings) when emit is set, then Flush with the command's error.
func runFlush(t *testing.T, stdout string, emit bool, err error, code int, message string) flushed {
	t.Helper()
	dir := t.TempDir()
	ios, _, out, _ := iostreams.Test()
	f := NewFactory(ios)
	f.Global.Output = stdout
	path := func(name string) string { return filepath.Join(dir, name) }
	f.Global.Files = []OutputFile{{report.FormatJSON, path("r.json")}, {report.FormatJUnit, path("r.xml")},
		{report.FormatMarkdown, path("r.md")}, {report.FormatHTML, path("r.html")}}
	if emit {
		rep := &findings.Report{Command: "doctor", Checks: []string{"SIM_MATRIX_MISMATCH", "SIM_SCOPE_INCOMPLETE"}}
		if eerr := f.Emit(context.Background(), report.Document{Report: rep}); eerr != nil {
			t.Fatal(eerr)
		}
	}
	if ferr := f.Flush("doctor", err, code, message); ferr != nil {
		t.Fatal(ferr)
	}
	f.Cleanup()
	read := func(name string) string {
		b, rerr := os.ReadFile(path(name))
		if rerr != nil {
			t.Fatalf("%s not written: %v", name, rerr)
		}
		return string(b)
	}
	got := flushed{stdout: out.String(), junit: read("r.xml"), md: read("r.md"), html: read("r.html")}
	if jerr := json.Unmarshal([]byte(read("r.json")), &got.json); jerr != nil {
		t.Fatal(jerr)
	}
	return got
}

// unreachable is doctor's error when a system is down: each check that
// could not run, named around its cause, joined, kept.
func unreachable() error {
	joined := errors.Join(fmt.Errorf("%s: %w", "inspect lock (every lock-shaped key)",
		errors.New("cannot reach Redis at redis://:hunter2@127.0.0.1:1/0: connection refused")))
	return &exitcode.Error{Code: exitcode.Unavailable, Err: WordError(joined, Plain), KeepOutput: true}
}

// TestFlushKeptReportSaysWhatCouldNotRun: doctor with Redis down renders
// its report, then exits 3: every output is the report and the error, the
// check that could not run an <error> testcase - never a green JUnit.
func TestFlushKeptReportSaysWhatCouldNotRun(t *testing.T) {
	err := unreachable()
	got := runFlush(t, report.FormatTable, true, err, exitcode.Unavailable, err.Error())
	for _, w := range []string{`errors="1"`, `<testcase name="SIM_MATRIX_MISMATCH"`, `<testcase name="inspect lock (every lock-shaped key)"`,
		`<error message="cannot reach Redis at redis://:xxxxx@127.0.0.1:1/0: connection refused" type="exit 3">`} {
		if !strings.Contains(got.junit, w) {
			t.Errorf("junit: no %s in\n%s", w, got.junit)
		}
	}
	e := got.json.Error
	if e == nil || e.ExitCode != 3 || len(e.NotRun) != 1 || e.NotRun[0].Check != "inspect lock (every lock-shaped key)" ||
		len(got.json.Checks) != 2 {
		t.Fatalf("json: %+v, checks %v", e, got.json.Checks)
	}
	if !strings.HasPrefix(got.md, "### dupctl doctor: error (exit 3)\n") || !strings.Contains(got.html, `role="alert"`) {
		t.Errorf("no banner:\n%s\n%s", got.md, got.html)
	}
	// The table on stdout is the report as rendered; stderr says the rest.
	if !strings.HasPrefix(got.stdout, "No findings (2 checks).") {
		t.Errorf("stdout %q", got.stdout)
	}
	for _, out := range []string{got.stdout, got.junit, got.md, got.html, fmt.Sprint(got.json)} {
		if strings.Contains(out, "hunter2") {
			t.Fatalf("password written: %s", out)
		}
	}
}

// TestFlushFailedBeforeAnyCheck: a command that failed before its checks
// (no report rendered) still writes every file, and -o json on stdout: a
// document of the error alone.
func TestFlushFailedBeforeAnyCheck(t *testing.T) {
	err := exitcode.UnavailableError(errors.New("cannot reach Redis at redis://:hunter2@127.0.0.1:1/0"), "check that it runs")
	got := runFlush(t, report.FormatJSON, false, err, exitcode.Unavailable, err.Error())
	if !strings.Contains(got.junit, `<testcase name="dupctl doctor" classname="dupctl.doctor"`) ||
		!strings.Contains(got.junit, `errors="1"`) {
		t.Errorf("junit:\n%s", got.junit)
	}
	e := got.json.Error
	if e == nil || e.ExitCode != 3 || e.Message != "cannot reach Redis at redis://:xxxxx@127.0.0.1:1/0 (check that it runs)" ||
		len(e.NotRun) != 0 || len(got.json.Checks) != 0 {
		t.Fatalf("json error %+v", e)
	}
	var stdout report.JSONReport
	if jerr := json.Unmarshal([]byte(got.stdout), &stdout); jerr != nil || stdout.Error == nil || stdout.Error.ExitCode != 3 {
		t.Fatalf("stdout: %v %q", jerr, got.stdout)
	}
}

// TestFlushFailedNotKept: a run that failed after rendering, with an
// error that does not let its report stand, writes the error alone.
func TestFlushFailedNotKept(t *testing.T) {
	err := exitcode.UsageErrorf("--count: must be 1..100000, got 0")
	got := runFlush(t, report.FormatTable, true, err, exitcode.Usage, err.Error())
	if got.stdout != "" || len(got.json.Checks) != 0 || got.json.Error == nil || got.json.Error.ExitCode != 2 {
		t.Fatalf("stdout %q, json %+v", got.stdout, got.json)
	}
}

// TestFlushInterruptedKeepsWhatItHas: Ctrl-C after the report was
// rendered: the report, with an "interrupted" error.
func TestFlushInterruptedKeepsWhatItHas(t *testing.T) {
	got := runFlush(t, report.FormatTable, true, context.Canceled, exitcode.Interrupted, "interrupted")
	e := got.json.Error
	if e == nil || e.Message != "interrupted" || e.ExitCode != 130 || len(got.json.Checks) != 2 {
		t.Fatalf("json: %+v", got.json)
	}
	if !strings.Contains(got.junit, `<error message="interrupted" type="exit 130">`) ||
		!strings.HasPrefix(got.md, "### dupctl doctor: interrupted (exit 130)\n") {
		t.Errorf("junit or markdown:\n%s\n%s", got.junit, got.md)
	}
	if !strings.HasPrefix(got.stdout, "No findings (2 checks).") {
		t.Errorf("stdout %q", got.stdout)
	}
}

// TestFlushEndedWell: a run that ended well writes what it rendered, with
// no error in it.
func TestFlushEndedWell(t *testing.T) {
	got := runFlush(t, report.FormatTable, true, nil, exitcode.OK, "")
	if got.json.Error != nil || strings.Contains(got.junit, "<error") || !strings.Contains(got.junit, `errors="0"`) ||
		strings.Contains(got.html, `role="alert"`) || !strings.HasPrefix(got.md, "### dupctl doctor: passes at --fail-on error\n") {
		t.Fatalf("%+v", got)
	}
	if b := bytes.Count([]byte(got.stdout), []byte("\n")); b != 1 {
		t.Errorf("stdout %q", got.stdout)
	}
}
