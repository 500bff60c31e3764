package report

import (
	"bytes"
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/english"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// detailLimit caps the evidence blocks shown without -v.
const detailLimit = 10

type tablePrinter struct{ o Options }

func (p tablePrinter) Print(w io.Writer, d Document) error {
	var keep []string
	clean := func(s string) string { return fold(Terminal(s, keep), p.o.Width) }
	return emitClean(w, func(buf *bytes.Buffer) error {
		th := NewTheme(buf, p.o.Color)
		keep = th.sequences()
		out := &sized{Writer: buf, width: p.o.Width}
		if d.Text != nil {
			if err := d.Text(out, th); err != nil {
				return err
			}
		}
		r := d.Report
		if len(r.Findings) > 0 {
			if d.Text != nil {
				buf.WriteString("\n")
			}
			if err := p.findingsTable(out, th, r); err != nil {
				return err
			}
			p.details(buf, th, r)
		}
		if d.Text != nil || len(r.Findings) > 0 {
			buf.WriteString("\n")
		}
		if n := len(r.Allowed); n > 0 {
			fmt.Fprintf(buf, "%s\n", th.Faint(fmt.Sprintf("%d %s accepted by the allow-list (not counted):",
				n, english.Plural(n, "finding", "findings"))))
			for _, a := range r.Allowed {
				fmt.Fprintf(buf, "  %s %s %s (until %s: %s)\n", a.Severity, a.Code, oneLine(a.Subject), a.Expires, oneLine(a.Reason))
			}
		}
		if !nothingRan(r, p.o.Failure) {
			buf.WriteString(SummaryLine(th, r, p.o.FailOn) + "\n")
		}
		if f := p.o.Failure; f != nil {
			// (a table file: on stdout the error is stderr's last line)
			fmt.Fprintf(buf, "%s %s\n", th.Severity(findings.Error, f.label()+":"), oneLine(f.lead()))
			for _, n := range f.NotRun {
				fmt.Fprintf(buf, "  %s: %s\n", oneLine(n.Check), oneLine(n.Message))
			}
		}
		return nil
	}, clean)
}

func (p tablePrinter) findingsTable(w io.Writer, th *Theme, r *findings.Report) error {
	t := NewTable("SEVERITY", "CODE", "SUBJECT", "MESSAGE").Shorten(2)
	for _, f := range r.Findings {
		t.Row(th.Severity(f.Severity, f.Severity.String()), f.Code, oneLine(f.Subject), oneLine(f.Message))
	}
	return t.Render(w)
}

// details shows each finding's evidence and fix, worst first; without -v
// only the first few, saying how many were left out.
func (p tablePrinter) details(buf *bytes.Buffer, th *Theme, r *findings.Report) {
	shown := 0
	for _, f := range r.Findings {
		if len(f.Evidence) == 0 && f.Fix == "" {
			continue
		}
		if !p.o.Verbose && shown == detailLimit {
			fmt.Fprintf(buf, "\n%s\n", th.Faint(fmt.Sprintf("(%d more findings with evidence: use -v to show all)",
				countDetailed(r.Findings)-shown)))
			return
		}
		shown++
		fmt.Fprintf(buf, "\n%s %s %s\n", th.Severity(f.Severity, f.Severity.String()), th.Strong(f.Code), oneLine(f.Subject))
		for _, e := range f.Evidence {
			fmt.Fprintf(buf, "  %s %s\n", th.Faint("evidence:"), oneLine(e)) // a key or log line may hold a newline
		}
		if f.Fix != "" {
			fmt.Fprintf(buf, "  %s %s\n", th.Faint("fix:"), f.Fix)
		}
	}
}

func countDetailed(fs []findings.Finding) int {
	n := 0
	for _, f := range fs {
		if len(f.Evidence) > 0 || f.Fix != "" {
			n++
		}
	}
	return n
}

// SummaryLine is the last line of every table output: counts, and whether
// the run fails at the chosen --fail-on.
func SummaryLine(th *Theme, r *findings.Report, t findings.Threshold) string {
	s := findings.Summarize(r, t)
	if s.Findings == 0 {
		return th.Pass(fmt.Sprintf("No findings (%d checks).", len(checkList(r))))
	}
	verdict := "passes"
	if s.Failed {
		verdict = th.Severity(findings.Error, "fails")
	}
	// "CI verdict": passing is the exit code's word, not a judgement of
	// what was found (a simulation passes while it shows a duplicate).
	return fmt.Sprintf("%d %s: %d error, %d warn, %d info; CI verdict: %s at --fail-on %s.",
		s.Findings, english.Plural(s.Findings, "finding", "findings"), s.Errors, s.Warnings, s.Infos, verdict, t)
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`, "\t", " ").Replace(s)
}
