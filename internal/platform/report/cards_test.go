package report

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// TestEveryBodyCellIsLabelled: on an HTML page, every cell of the findings
// table and of a view's table carries its column's header as data-label
// (what a phone shows before the cell in a card), and the finding's
// message is the cell marked to come first.
func TestEveryBodyCellIsLabelled(t *testing.T) {
	view := func(w io.Writer, th *Theme) error {
		tb := NewTable("FAMILY", "KEYS").AlignRight(1)
		tb.Row("lock:payment:order:{id}", "3")
		tb.Row("lock:job:{uuid}", "12")
		return tb.Render(w)
	}
	page := render(t, FormatHTML, options(findings.FailError), view)
	cells := regexp.MustCompile(`<td[ >][^>]*`).FindAllString(page, -1)
	if len(cells) != 4*4+2*2 {
		t.Fatalf("%d body cells, want 4 findings x 4 columns and 2 rows x 2 columns", len(cells))
	}
	labels := map[string]int{}
	for _, c := range cells {
		m := regexp.MustCompile(`data-label="([^"]*)"`).FindStringSubmatch(c)
		if m == nil {
			t.Errorf("a cell without a label: %s", c)
			continue
		}
		labels[m[1]]++
	}
	for _, want := range []string{"Severity", "Code", "Subject", "Message"} {
		if labels[want] != 4 {
			t.Errorf("%d cells labelled %q, want one per finding (4): %v", labels[want], want, labels)
		}
	}
	if labels["FAMILY"] != 2 || labels["KEYS"] != 2 {
		t.Errorf("the view's cells are labelled %v, want FAMILY and KEYS twice each", labels)
	}
	if n := strings.Count(page, `<td data-label="Message" class="message">`); n != 4 {
		t.Errorf("%d message cells marked to come first in their card, want 4", n)
	}
}

// TestLabelCells: colspans, the last of two header rows, markup and
// quotes in a header, nested tables and a table without a header.
func TestLabelCells(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`<table><thead><tr><th colspan="2">a <code>b</code></th><th>c"d</th></tr></thead>` +
			`<tbody><tr><td>1</td><td>2</td><th scope="row">3</th></tr></tbody></table>`,
			`<table><thead><tr><th colspan="2">a <code>b</code></th><th>c"d</th></tr></thead><tbody><tr><td data-label="a b">1</td>` +
				`<td data-label="a b">2</td><th data-label="c&#34;d" scope="row">3</th></tr></tbody></table>`},
		{`<table><thead><tr><th colspan="2">top</th></tr><tr><th>x</th><th>y</th></tr></thead>` +
			`<tbody><tr><td colspan="2">both</td></tr><tr><td>1</td>` +
			`<td><table><thead><tr><th>in</th></tr></thead><tbody><tr><td>n</td></tr></tbody></table></td></tr></tbody></table>`,
			`<table><thead><tr><th colspan="2">top</th></tr><tr><th>x</th><th>y</th></tr></thead>` +
				`<tbody><tr><td data-label="x" colspan="2">both</td></tr>` +
				`<tr><td data-label="x">1</td><td data-label="y"><table><thead><tr><th>in</th></tr></thead>` +
				`<tbody><tr><td data-label="in">n</td></tr>` +
				`</tbody></table></td></tr></tbody></table>`},
		{`<table><tr><td>no header</td></tr></table><p>a &lt; b</p>`, `<table><tr><td>no header</td></tr></table><p>a &lt; b</p>`},
		{`<table><thead><tr><th>a</th></tr></thead><tbody><tr><td data-label="mine">1</td></tr></tbody></table>`,
			`<table><thead><tr><th>a</th></tr></thead><tbody><tr><td data-label="mine">1</td></tr></tbody></table>`},
	} {
		if got := labelCells(c.in); got != c.want {
			t.Errorf("labelCells(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
