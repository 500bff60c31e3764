package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// JUnit XML as Jenkins, GitLab, GitHub test reporters and CircleCI read it
// (the Ant/Surefire schema): one suite per command, one testcase per check,
// and at most one <failure> per testcase, carrying every finding of that
// check at or above --fail-on; so "failures" counts failed testcases and
// equals the number of <failure> elements. Findings below the threshold go
// to <system-out> so nothing is hidden. "time" is the command's wall time
// on the suites (checks are not timed one by one: their testcases say 0).
// A run that did not end well (exit 2, 3 or 130, Options.Failure) adds
// <error> testcases, so "errors" is never 0 then: one per check that could
// not run, or else one named after the command, saying why; a command that
// failed before any check has that one testcase alone.

// JUnitTestSuites is the document root.
type JUnitTestSuites struct {
	XMLName  xml.Name         `xml:"testsuites"`
	Name     string           `xml:"name,attr"`
	Tests    int              `xml:"tests,attr"`
	Failures int              `xml:"failures,attr"`
	Errors   int              `xml:"errors,attr"`
	Time     string           `xml:"time,attr"`
	Suites   []JUnitTestSuite `xml:"testsuite"`
}

// JUnitTestSuite is one command run.
type JUnitTestSuite struct {
	Name     string          `xml:"name,attr"`
	Tests    int             `xml:"tests,attr"`
	Failures int             `xml:"failures,attr"`
	Errors   int             `xml:"errors,attr"`
	Skipped  int             `xml:"skipped,attr"`
	Time     string          `xml:"time,attr"`
	Cases    []JUnitTestCase `xml:"testcase"`
}

// JUnitTestCase is one check.
type JUnitTestCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitFailure `xml:"failure"`
	Error     *JUnitFailure `xml:"error"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitFailure is what failed a testcase: the findings of one check at or
// above --fail-on (as <failure>), or why the command could not run (as
// <error>).
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

type junitPrinter struct{ o Options }

func (p junitPrinter) build(r *findings.Report) JUnitTestSuites {
	suiteName := "dupctl"
	if r.Command != "" {
		suiteName += " " + r.Command
	}
	class := strings.ReplaceAll(suiteName, " ", ".")
	suite := JUnitTestSuite{Name: suiteName, Time: seconds(p.o.Elapsed)}
	for _, code := range checkList(r) {
		name := code
		if rule, ok := lookup(p.o.Catalog, code); ok {
			name += ": " + rule.Title
		}
		tc := JUnitTestCase{Name: xmlSafe(name), ClassName: xmlSafe(class), Time: seconds(0)}
		var below, bodies []string
		var first *findings.Finding
		failing := 0
		var worst findings.Severity // none yet: below Info
		for i, f := range r.Findings {
			if f.Code != code {
				continue
			}
			if p.o.FailOn.Fails(f.Severity) {
				if first == nil {
					first = &r.Findings[i]
				}
				failing++
				worst = max(worst, f.Severity)
				bodies = append(bodies, findingBody(f))
			} else {
				below = append(below, fmt.Sprintf("%s %s: %s", f.Severity, f.Subject, oneLine(f.Message)))
			}
		}
		if first != nil {
			msg := fmt.Sprintf("%s: %s", first.Subject, oneLine(first.Message))
			if failing > 1 {
				msg = fmt.Sprintf("%d findings; first %s", failing, msg)
			}
			tc.Failure = &JUnitFailure{Message: xmlSafe(msg), Type: worst.String(), Body: xmlSafe(strings.Join(bodies, "\n"))}
		}
		for _, a := range r.Allowed {
			if a.Code == code {
				below = append(below, fmt.Sprintf("allowed until %s (%s): %s %s: %s", a.Expires, a.Reason, a.Severity, a.Subject, oneLine(a.Message)))
			}
		}
		tc.SystemOut = xmlSafe(strings.Join(below, "\n"))
		suite.Tests++
		if tc.Failure != nil {
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, tc := range p.errorCases(suiteName, class) {
		suite.Tests++
		suite.Errors++
		suite.Cases = append(suite.Cases, tc)
	}
	return JUnitTestSuites{Name: "dupctl", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Time: suite.Time,
		Suites: []JUnitTestSuite{suite}}
}

// errorCases are the testcases of a run that did not end well: an <error>
// for each check that could not run, or one named after the command (with
// the command's time) when the error is the command's own.
func (p junitPrinter) errorCases(suiteName, class string) []JUnitTestCase {
	f := p.o.Failure
	if f == nil {
		return nil
	}
	kind := fmt.Sprintf("exit %d", f.ExitCode)
	if len(f.NotRun) == 0 {
		return []JUnitTestCase{{Name: xmlSafe(suiteName), ClassName: xmlSafe(class), Time: seconds(p.o.Elapsed),
			Error: &JUnitFailure{Message: xmlSafe(oneLine(f.Message)), Type: kind, Body: xmlSafe(f.Message)}}}
	}
	var out []JUnitTestCase
	for _, n := range f.NotRun {
		out = append(out, JUnitTestCase{Name: xmlSafe(n.Check), ClassName: xmlSafe(class), Time: seconds(0),
			Error: &JUnitFailure{Message: xmlSafe(oneLine(n.Message)), Type: kind, Body: xmlSafe(n.Check + ": " + n.Message)}})
	}
	return out
}

func encodeJUnit(buf *bytes.Buffer, doc JUnitTestSuites) error {
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(buf)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	buf.WriteString("\n")
	return nil
}

// seconds is JUnit's time: seconds with millisecond precision.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func findingBody(f findings.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n%s\n", f.Severity, f.Code, f.Subject, f.Message)
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "evidence: %s\n", e)
	}
	if f.Fix != "" {
		fmt.Fprintf(&b, "fix: %s\n", f.Fix)
	}
	return b.String()
}

func (p junitPrinter) Print(w io.Writer, d Document) error {
	return emit(w, func(buf *bytes.Buffer) error { return encodeJUnit(buf, p.build(d.Report)) })
}

// xmlSafe replaces runes XML 1.0 cannot carry (control characters from a
// binary payload, say) so the report always parses.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF) {
			return r
		}
		return '\uFFFD'
	}, s)
}
