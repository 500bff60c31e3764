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

func (p markdownPrinter) Print(w io.Writer, d Document) error {
	return emit(w, func(buf *bytes.Buffer) error {
		r := d.Report
		s := findings.Summarize(r, p.o.FailOn)
		verdict := "passes"
		if s.Failed {
			verdict = "fails"
		}
		fmt.Fprintf(buf, "### dupctl %s: %s at --fail-on %s\n\n", mdText(r.Command), verdict, p.o.FailOn)
		if s.Findings == 0 {
			fmt.Fprintf(buf, "No findings (%s).\n", english.Count(len(checkList(r)), "check", "checks"))
		} else {
			fmt.Fprintf(buf, "%s: %d error, %d warn, %d info.\n\n", english.Count(s.Findings, "finding", "findings"), s.Errors, s.Warnings, s.Infos)
			buf.WriteString("| severity | code | subject | message |\n|---|---|---|---|\n")
			for _, f := range r.Findings {
				fmt.Fprintf(buf, "| %s | `%s` | %s | %s |\n", f.Severity, f.Code, mdCell(f.Subject), mdCell(f.Message))
			}
		}
		if d.Markdown != nil {
			buf.WriteString("\n")
			if err := d.Markdown(buf); err != nil {
				return err
			}
		}
		for _, f := range r.Findings {
			if len(f.Evidence) == 0 && f.Fix == "" {
				continue
			}
			fmt.Fprintf(buf, "\n<details><summary>%s <code>%s</code> %s</summary>\n\n", f.Severity, f.Code, mdText(f.Subject))
			for _, e := range f.Evidence {
				fmt.Fprintf(buf, "- evidence: %s\n", mdCell(e))
			}
			if f.Fix != "" {
				fmt.Fprintf(buf, "- fix: %s\n", mdCell(f.Fix))
			}
			buf.WriteString("\n</details>\n")
		}
		if n := len(r.Allowed); n > 0 {
			fmt.Fprintf(buf, "\n%s accepted by the allow-list (not counted).\n", english.Count(n, "finding", "findings"))
		}
		return nil
	})
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
