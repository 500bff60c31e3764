package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Markdown for CI step summaries ($GITHUB_STEP_SUMMARY, GitLab, a PR
// comment): a heading with the verdict, the findings as a GitHub-flavoured
// table, the command's own summary (Document.Markdown: for simulate, the
// shortest failing schedule as a list), and each finding's evidence and fix
// folded in a <details> block. Every cell is escaped so outside data can
// neither break the table nor inject markup.

type markdownPrinter struct{ o Options }

// MaxMarkdown is the most Markdown any run writes: GitHub's limit for a
// step summary is 1 MiB; a little is kept back for the redaction pass.
const MaxMarkdown = 1<<20 - 4<<10

// maxEvidence bounds the evidence lines per finding once a document is
// over its limit.
const maxEvidence = 20

// limit is the byte budget of one document.
func (p markdownPrinter) limit() int {
	if p.o.MarkdownLimit > 0 && p.o.MarkdownLimit < MaxMarkdown {
		return p.o.MarkdownLimit - min(p.o.MarkdownLimit/50, 1<<10)
	}
	return MaxMarkdown
}

// Print writes the document whole when it fits its limit; else the first
// findings that fit (halving until they do), the command's summary cut at
// a line, and a line saying how many more there are - never more than
// the limit.
func (p markdownPrinter) Print(w io.Writer, d Document) error {
	return emit(w, func(buf *bytes.Buffer) error {
		var summary bytes.Buffer
		if d.Markdown != nil {
			if err := d.Markdown(&summary); err != nil {
				return err
			}
		}
		limit := p.limit()
		n, sumBudget, evidence := len(d.Report.Findings), summary.Len(), 0
		for {
			buf.Reset()
			p.render(buf, d.Report, n, evidence, cutLines(summary.Bytes(), sumBudget))
			if buf.Len() <= limit {
				return nil
			}
			switch {
			case evidence == 0:
				evidence = maxEvidence
			case sumBudget > limit/3:
				sumBudget = limit / 3
			case n > 0:
				n /= 2
			case sumBudget > 0:
				sumBudget /= 2
			default:
				buf.Truncate(limit)
				return nil
			}
		}
	})
}

// cutLines is at most budget bytes of a summary, cut at a line end, with a
// line saying how many lines were left out.
func cutLines(b []byte, budget int) []byte {
	if len(b) <= budget {
		return b
	}
	cut := bytes.LastIndexByte(b[:budget], '\n') + 1
	left := bytes.Count(b[cut:], []byte("\n"))
	out := append([]byte(nil), b[:cut]...)
	return fmt.Appendf(out, "\n_… %s more left out to keep this summary within its size limit (-o json has everything)._\n",
		english.Count(left, "line", "lines"))
}

func (p markdownPrinter) render(buf *bytes.Buffer, r *findings.Report, n, evidence int, summary []byte) {
	s := findings.Summarize(r, p.o.FailOn)
	verdict := "passes"
	if s.Failed {
		verdict = "fails"
	}
	if f := p.o.Failure; f != nil {
		fmt.Fprintf(buf, "### dupctl %s: %s\n\n", mdText(r.Command), f.title())
		p.banner(buf, f)
	} else {
		fmt.Fprintf(buf, "### dupctl %s: %s at --fail-on %s\n\n", mdText(r.Command), verdict, p.o.FailOn)
	}
	if p.o.Failure != nil && !nothingRan(r, p.o.Failure) {
		buf.WriteString("\n")
	}
	switch {
	case nothingRan(r, p.o.Failure):
		// the banner says why
	case s.Findings == 0:
		fmt.Fprintf(buf, "No findings (%s).\n", english.Count(len(checkList(r)), "check", "checks"))
	default:
		fmt.Fprintf(buf, "%s: %d error, %d warn, %d info.\n\n", english.Count(s.Findings, "finding", "findings"), s.Errors, s.Warnings, s.Infos)
		buf.WriteString("| severity | code | subject | message |\n|---|---|---|---|\n")
		for _, f := range r.Findings[:n] {
			fmt.Fprintf(buf, "| %s | `%s` | %s | %s |\n", f.Severity, f.Code, mdCell(f.Subject), mdCell(f.Message))
		}
		if more := len(r.Findings) - n; more > 0 {
			fmt.Fprintf(buf, "\n_The first %s of %s are listed; %d more are left out to keep this summary within its size limit (-o json has "+
				"them all)._\n",
				english.Number(int64(n)), english.Count(len(r.Findings), "finding", "findings"), more)
		}
	}
	if len(summary) > 0 {
		buf.WriteString("\n")
		buf.Write(summary)
	}
	for _, f := range r.Findings[:n] {
		p.details(buf, f, evidence)
	}
	if k := len(r.Allowed); k > 0 {
		fmt.Fprintf(buf, "\n%s accepted by the allow-list (not counted).\n", english.Count(k, "finding", "findings"))
	}
}

// banner is a failed run's error, quoted so it stands out: the checks
// that could not run, or the command's one-line error.
func (p markdownPrinter) banner(buf *bytes.Buffer, f *Failure) {
	fmt.Fprintf(buf, "> **%s:** %s\n", f.label(), mdCell(f.lead()))
	if len(f.NotRun) > 0 {
		buf.WriteString(">\n")
	}
	for _, n := range f.NotRun {
		fmt.Fprintf(buf, "> - %s: %s\n", mdCell(n.Check), mdCell(n.Message))
	}
}

// details is a finding's evidence (the first evidence lines; 0: all) and
// fix, folded.
func (p markdownPrinter) details(buf *bytes.Buffer, f findings.Finding, evidence int) {
	if len(f.Evidence) == 0 && f.Fix == "" {
		return
	}
	fmt.Fprintf(buf, "\n<details><summary>%s <code>%s</code> %s</summary>\n\n", f.Severity, f.Code, mdText(f.Subject))
	for i, e := range f.Evidence {
		if i == evidence && evidence > 0 {
			fmt.Fprintf(buf, "- evidence: the first %d of %d lines are listed (-o json has them all)\n", evidence, len(f.Evidence))
			break
		}
		fmt.Fprintf(buf, "- evidence: %s\n", mdCell(e))
	}
	if f.Fix != "" {
		fmt.Fprintf(buf, "- fix: %s\n", mdCell(f.Fix))
	}
	buf.WriteString("\n</details>\n")
}

// mdText escapes text for Markdown outside a table: HTML and the
// characters that start Markdown syntax.
func mdText(s string) string {
	s = Cell(s, 0)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '#', '|', '~':
			b.WriteRune('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCell is mdText for a table cell (one line; a pipe escaped).
func mdCell(s string) string { return mdText(oneLine(s)) }

// MarkdownText escapes outside data for a command's own Markdown summary.
func MarkdownText(s string) string { return mdText(s) }
