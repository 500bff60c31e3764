package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// JUnit XML as Jenkins, GitLab, GitHub test reporters and CircleCI read it:
// one suite per command, one testcase per check, one <failure> per finding
// at or above --fail-on. Findings below the threshold go to <system-out> so
// nothing is hidden. No timestamps or durations: the output is
// deterministic.

// JUnitTestSuites is the document root.
type JUnitTestSuites struct {
	XMLName  xml.Name         `xml:"testsuites"`
	Name     string           `xml:"name,attr"`
	Tests    int              `xml:"tests,attr"`
	Failures int              `xml:"failures,attr"`
	Errors   int              `xml:"errors,attr"`
	Suites   []JUnitTestSuite `xml:"testsuite"`
}

// JUnitTestSuite is one command run.
type JUnitTestSuite struct {
	Name     string          `xml:"name,attr"`
	Tests    int             `xml:"tests,attr"`
	Failures int             `xml:"failures,attr"`
	Errors   int             `xml:"errors,attr"`
	Skipped  int             `xml:"skipped,attr"`
	Cases    []JUnitTestCase `xml:"testcase"`
}

// JUnitTestCase is one check.
type JUnitTestCase struct {
	Name      string         `xml:"name,attr"`
	ClassName string         `xml:"classname,attr"`
	Failures  []JUnitFailure `xml:"failure"`
	SystemOut string         `xml:"system-out,omitempty"`
}

// JUnitFailure is one finding that fails the run.
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
	suite := JUnitTestSuite{Name: suiteName}
	for _, code := range checkList(r) {
		name := code
		if rule, ok := lookup(p.o.Catalog, code); ok {
			name += ": " + rule.Title
		}
		tc := JUnitTestCase{Name: xmlSafe(name), ClassName: xmlSafe(class)}
		var below []string
		for _, f := range r.Findings {
			if f.Code != code {
				continue
			}
			if p.o.FailOn.Fails(f.Severity) {
				tc.Failures = append(tc.Failures, JUnitFailure{
					Message: xmlSafe(fmt.Sprintf("%s: %s", f.Subject, oneLine(f.Message))),
					Type:    f.Severity.String(),
					Body:    xmlSafe(findingBody(f)),
				})
			} else {
				below = append(below, fmt.Sprintf("%s %s: %s", f.Severity, f.Subject, oneLine(f.Message)))
			}
		}
		for _, a := range r.Allowed {
			if a.Code == code {
				below = append(below, fmt.Sprintf("allowed until %s (%s): %s %s: %s", a.Expires, a.Reason, a.Severity, a.Subject, oneLine(a.Message)))
			}
		}
		tc.SystemOut = xmlSafe(strings.Join(below, "\n"))
		suite.Tests++
		if len(tc.Failures) > 0 {
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	return JUnitTestSuites{Name: "dupctl", Tests: suite.Tests, Failures: suite.Failures, Suites: []JUnitTestSuite{suite}}
}

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
	return emit(w, func(buf *bytes.Buffer) error {
		buf.WriteString(xml.Header)
		enc := xml.NewEncoder(buf)
		enc.Indent("", "  ")
		if err := enc.Encode(p.build(d.Report)); err != nil {
			return err
		}
		buf.WriteString("\n")
		return nil
	})
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
