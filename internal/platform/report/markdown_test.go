package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// TestMarkdownBounded: a report far over the limit comes out under it,
// with the first findings and a line saying how many more; the command's
// summary is cut at a line; --md-limit bounds it for a PR comment.
func TestMarkdownBounded(t *testing.T) {
	r := &findings.Report{Command: "audit logs"}
	for i := range 4_000 {
		ev := make([]string, 30)
		for j := range ev {
			ev[j] = fmt.Sprintf("fleet.log:%d worker-%d side_effect key=payment:ord-%07d %s", i*30+j, j, i, strings.Repeat("x", 40))
		}
		r.Findings = append(r.Findings, findings.Finding{Severity: findings.Error, Code: "DUP_EFFECT_REDELIVERY",
			Subject: fmt.Sprintf("ord-%07d", i), Message: "side effect ran again", Evidence: ev, Fix: "make it idempotent"})
	}
	summary := func(w io.Writer) error {
		for i := range 50_000 {
			fmt.Fprintf(w, "1. step %d: something happened\n", i)
		}
		return nil
	}
	for _, limit := range []int{0, 65_536} {
		var b bytes.Buffer
		p := markdownPrinter{Options{FailOn: findings.FailError, MarkdownLimit: limit}}
		if err := p.Print(&b, Document{Report: r, Markdown: summary}); err != nil {
			t.Fatal(err)
		}
		want := MaxMarkdown
		if limit > 0 {
			want = limit
		}
		out := b.String()
		if b.Len() > want || b.Len() < want/2 {
			t.Errorf("limit %d: %d bytes of Markdown, want at most %d (and not far under)", limit, b.Len(), want)
		}
		if !strings.Contains(out, "more are left out") || !strings.Contains(out, "more left out to keep this summary") {
			t.Errorf("limit %d: no line says what was left out", limit)
		}
		if !strings.HasPrefix(out, "### dupctl audit logs: fails") {
			t.Errorf("limit %d: the verdict heading is missing", limit)
		}
	}
}

// TestTextMarkdown: a table view in Markdown - its strong text in bold,
// other styles dropped, lines as paragraphs, tables as GitHub tables (a
// right-aligned column marked so, a cell's lines joined by <br>), drawn
// lines in a code block; outside data escaped so it can neither break a
// table nor inject markup.
func TestTextMarkdown(t *testing.T) {
	var b bytes.Buffer
	err := TextMarkdown(&b, func(w io.Writer, th *Theme) error {
		fmt.Fprintf(w, "%s 2 of *3* <b>nodes</b> %s\n\n", th.Strong("Broker:"), th.Faint("(faint)"))
		tb := NewTable("NODE", "KEYS").AlignRight(1)
		tb.Row("a|b", th.Pass("1\n2"))
		if err := tb.Render(w); err != nil {
			return err
		}
		fmt.Fprintln(w, "bar  ▁▂█ `x`")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "**Broker:** 2 of \\*3\\* &lt;b&gt;nodes&lt;/b&gt; (faint)\n\n" +
		"| NODE | KEYS |\n|---|---:|\n| a\\|b | 1<br>2 |\n\n" +
		"```text\nbar  ▁▂█ 'x'\n```\n\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
