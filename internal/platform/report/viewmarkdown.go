package report

import (
	"io"
	"strings"
)

// The terminal view in Markdown: a command's table view (Document.Text,
// or a part of it) drawn once more for a CI summary, as TextHTML does for
// the page - its tables as GitHub-flavoured tables, its lines as
// paragraphs, drawn lines (columns of blanks, box or block characters) in
// a code block; the theme's strong text in bold, its other styles dropped.
// Every outside value is escaped as MarkdownText escapes it.

// mdView collects a view's output: text, and tables handed over whole.
type mdView struct {
	viewLines
	out   strings.Builder
	drawn []string // drawn lines waiting for their code block
}

func newMDView() *mdView {
	v := &mdView{}
	v.each = v.textLine
	return v
}

func (v *mdView) flush() {
	v.flushLine()
	v.flushDrawn()
}

// flushDrawn writes the drawn lines gathered so far as one code block
// (plain text: no style, no backtick fence inside).
func (v *mdView) flushDrawn() {
	if len(v.drawn) == 0 {
		return
	}
	v.out.WriteString("```text\n")
	for _, s := range v.drawn {
		v.out.WriteString(strings.ReplaceAll(mdStyled(s, false), "`", "'") + "\n")
	}
	v.out.WriteString("```\n\n")
	v.drawn = v.drawn[:0]
}

// textLine is one line of the view: a paragraph, or a line of a code
// block when it is drawn.
func (v *mdView) textLine(s string) {
	if strings.TrimSpace(s) == "" {
		v.flushDrawn()
		return
	}
	if drawn(s) {
		v.drawn = append(v.drawn, s)
		return
	}
	v.flushDrawn()
	v.out.WriteString(mdStyled(s, true) + "\n\n")
}

// table writes a table the view rendered; a cell's lines are joined with
// <br>, which GitHub reads in a table cell.
func (v *mdView) table(t *Table) {
	v.flush()
	var b strings.Builder
	b.WriteString("|")
	for _, h := range t.header {
		b.WriteString(" " + mdStyled(h, true) + " |")
	}
	b.WriteString("\n|")
	for i := range t.header {
		if t.right[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + cellLines(c, func(s string) string { return mdStyled(s, true) }) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	v.out.WriteString(b.String())
}

// mdStyled is one line of a view in Markdown: escaped (escape false keeps
// it as text for a code block), the theme's strong text in bold and its
// other styles dropped.
func mdStyled(s string, escape bool) string {
	s = strings.TrimRight(s, " ")
	var b strings.Builder
	bold := []bool{}
	for s != "" {
		i := strings.IndexAny(s, styleOpen+styleClose)
		if i < 0 {
			i = len(s)
		}
		text := s[:i]
		if escape {
			text = mdCell(text)
		} else {
			text = Cell(text, 0)
		}
		b.WriteString(text)
		s = s[i:]
		switch {
		case strings.HasPrefix(s, styleOpen):
			class, rest, _ := strings.Cut(s[len(styleOpen):], styleMid)
			strong := class == "st-strong" && escape
			if strong {
				b.WriteString("**")
			}
			bold = append(bold, strong)
			s = rest
		case strings.HasPrefix(s, styleClose):
			if n := len(bold); n > 0 {
				if bold[n-1] {
					b.WriteString("**")
				}
				bold = bold[:n-1]
			}
			s = s[len(styleClose):]
		}
	}
	return b.String()
}

// TextMarkdown writes a command's table view as Markdown, for its
// Document.Markdown.
func TextMarkdown(w io.Writer, text func(io.Writer, *Theme) error) error {
	v := newMDView()
	th := NewTheme(io.Discard, false)
	th.html = true // styles as sentinels, read back by mdStyled
	if err := text(v, th); err != nil {
		return err
	}
	v.flush()
	_, err := io.WriteString(w, v.out.String())
	return err
}
