package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// The terminal view in HTML: a command's table view (Document.Text) drawn
// once more for the page, so the page holds what the terminal shows -
// its tables as HTML tables (sortable by eye, wrapping on paper,
// scrolling sideways on a phone), its lines as paragraphs, its charts as
// preformatted text - with the theme's styles as classes. The HTML
// printer uses it for a command without a picture of its own; a picture
// adds it with TextHTML.

// Style sentinels: the theme writes them around styled text in HTML mode,
// and the view turns them into spans after escaping the text.
const (
	styleOpen  = "\uE010"
	styleMid   = "\uE011"
	styleClose = "\uE012"
)

// viewLines hands a view's output over one line at a time (to each),
// the HTML and Markdown views alike.
type viewLines struct {
	line bytes.Buffer
	each func(string)
}

func (l *viewLines) Write(p []byte) (int, error) {
	l.line.Write(p)
	for {
		i := bytes.IndexByte(l.line.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		l.each(string(l.line.Next(i + 1)[:i]))
	}
}

// flushLine hands over a last line without its newline.
func (l *viewLines) flushLine() {
	if l.line.Len() > 0 {
		l.each(l.line.String())
		l.line.Reset()
	}
}

// drawn reports whether a view's line is drawn rather than written:
// columns of blanks, box or block characters.
func drawn(s string) bool {
	return strings.Contains(s, "  ") || strings.ContainsAny(s, "─│█░▏▕●◉✗✓^")
}

// htmlView collects a view's output: text, and tables handed over whole.
type htmlView struct {
	viewLines
	out strings.Builder
}

func newHTMLView() *htmlView {
	v := &htmlView{}
	v.each = v.textLine
	return v
}

func (v *htmlView) flush() { v.flushLine() }

// textLine is one line of the view: a paragraph, or preformatted when it
// is drawn.
func (v *htmlView) textLine(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	if drawn(s) {
		v.out.WriteString("<div class=\"scroll\"><pre class=\"view\">" + styled(s) + "</pre></div>\n")
		return
	}
	v.out.WriteString("<p class=\"view\">" + styled(s) + "</p>\n")
}

// table writes a table the view rendered.
func (v *htmlView) table(t *Table) {
	v.flush()
	var b strings.Builder
	b.WriteString("<div class=\"scroll\"><table class=\"view\"><thead><tr>")
	for i, h := range t.header {
		fmt.Fprintf(&b, "<th scope=\"col\"%s>%s</th>", numClass(t.right[i]), styled(h))
	}
	b.WriteString("</tr></thead><tbody>\n")
	for _, r := range t.rows {
		b.WriteString("<tr>")
		for i, c := range r {
			fmt.Fprintf(&b, "<td%s>%s</td>", numClass(t.right[i]), cellLines(c, styled))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
	v.out.WriteString(b.String())
}

// cellLines is a table cell's lines, each styled, joined by <br> (a line
// break in HTML and in a GitHub table cell alike).
func cellLines(c string, style func(string) string) string {
	lines := strings.Split(c, "\n")
	for j := range lines {
		lines[j] = style(lines[j])
	}
	return strings.Join(lines, "<br>")
}

func numClass(right bool) string {
	if right {
		return " class=\"num\""
	}
	return ""
}

// styled escapes s and turns the theme's sentinels into spans.
func styled(s string) string {
	s = template.HTMLEscapeString(Cell(strings.TrimRight(s, " "), 0))
	var b strings.Builder
	for {
		i := strings.Index(s, styleOpen)
		if i < 0 {
			b.WriteString(strings.ReplaceAll(s, styleClose, "</span>"))
			return b.String()
		}
		b.WriteString(strings.ReplaceAll(s[:i], styleClose, "</span>"))
		class, rest, ok := strings.Cut(s[i+len(styleOpen):], styleMid)
		if !ok {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString("<span class=\"" + class + "\">")
		s = rest
	}
}

// TextHTML writes a command's table view as HTML.
func TextHTML(w io.Writer, text func(io.Writer, *Theme) error) error {
	v := newHTMLView()
	th := NewTheme(io.Discard, false)
	th.html = true
	if err := text(v, th); err != nil {
		return err
	}
	v.flush()
	_, err := io.WriteString(w, "<section class=\"view\">\n"+v.out.String()+"</section>\n")
	return err
}
