package report

import (
	"strconv"
	"strings"
)

// Phone pages: below 600 px a wide table is read as one card per row,
// each cell prefixed by its column's header (cardCSS). The page is a
// file with no script (its Content-Security-Policy allows none), so the
// header has to be in the cell: labelCells gives every body cell a
// data-label with its column's header text, for every table on the page -
// the findings table and every view's own - once, as the page is
// written, so a view never has to repeat its header per cell.

// labelCells returns page with a data-label on every <td> and <th> of a
// table body that has a header cell above it in the table's <thead>
// (colspan counted; the last header row names the columns). It reads
// the HTML dupctl writes: every outside value in it is escaped, so a '<'
// starts a tag.
func labelCells(page string) string {
	type table struct {
		head   []string
		inHead bool
		col    int
	}
	var (
		b     strings.Builder
		stack []*table
	)
	b.Grow(len(page) + len(page)/8)
	for i := 0; i < len(page); {
		j := strings.IndexByte(page[i:], '<')
		if j < 0 {
			b.WriteString(page[i:])
			break
		}
		b.WriteString(page[i : i+j])
		i += j
		k := strings.IndexByte(page[i:], '>')
		if k < 0 {
			b.WriteString(page[i:])
			break
		}
		tag := page[i : i+k+1]
		i += k + 1
		name := tagName(tag)
		var top *table
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch {
		case name == "table":
			stack = append(stack, &table{})
		case name == "/table" && top != nil:
			stack = stack[:len(stack)-1]
		case top == nil:
		case name == "thead":
			top.inHead, top.head = true, nil
		case name == "/thead":
			top.inHead = false
		case name == "tr":
			top.col = 0
			if top.inHead {
				top.head = nil
			}
		case (name == "th" || name == "td") && top.inHead:
			end := strings.Index(page[i:], "</"+name+">")
			if end < 0 {
				end = len(page) - i
			}
			text := headerText(page[i : i+end])
			for range colspan(tag) {
				top.head = append(top.head, text)
			}
		case name == "th" || name == "td":
			if top.col < len(top.head) && top.head[top.col] != "" && !strings.Contains(tag, "data-label=") {
				tag = "<" + name + " data-label=\"" + top.head[top.col] + "\"" + tag[1+len(name):]
			}
			top.col += colspan(tag)
		}
		b.WriteString(tag)
	}
	return b.String()
}

// tagName is a tag's lower-case name, with its '/' when it closes.
func tagName(tag string) string {
	s := tag[1:]
	end := strings.IndexAny(s, " \t\n/>")
	if end == 0 && strings.HasPrefix(s, "/") {
		end = 1 + strings.IndexAny(s[1:], " \t\n>")
	}
	if end < 0 {
		return ""
	}
	return strings.ToLower(s[:end])
}

// colspan is a cell tag's colspan, 1 without one.
func colspan(tag string) int {
	_, rest, ok := strings.Cut(tag, "colspan=\"")
	if !ok {
		return 1
	}
	n, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '"'), 0)])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// headerText is a header cell's text, still escaped (it goes back into
// an attribute), without its tags and with its white space collapsed.
func headerText(cell string) string {
	var b strings.Builder
	for {
		j := strings.IndexByte(cell, '<')
		if j < 0 {
			b.WriteString(cell)
			break
		}
		b.WriteString(cell[:j] + " ")
		k := strings.IndexByte(cell[j:], '>')
		if k < 0 {
			break
		}
		cell = cell[j+k+1:]
	}
	return strings.ReplaceAll(strings.Join(strings.Fields(b.String()), " "), "\"", "&#34;")
}

// cardCSS lays a table out as cards below 600 px: the header row not
// shown (its words are on every cell, from labelCells, and a screen
// reader reads them there: generated content is read), one bordered card
// per row, one line or more per cell (numbers side by side), long words
// broken anywhere rather than pushing the card wider than the phone. A
// finding's message comes first in its card. The matrix and the broker's
// topology are grids read across and down, pictures more than lists: they
// keep their sideways scroll.
const cardCSS = `@media (max-width: 600px) {
  table:not(.matrix, .topology), table:not(.matrix, .topology) > tbody,
  table:not(.matrix, .topology) > tbody > tr > :is(td, th), table:not(.matrix, .topology) > caption { display: block; }
  table:not(.matrix, .topology) { min-width: 0; width: 100%; }
  table:not(.matrix, .topology) > thead { display: none; }
  table:not(.matrix, .topology) > tbody > tr { display: flex; flex-wrap: wrap; column-gap: 1.2rem; border: 1px solid var(--rule);
    border-radius: .3rem; padding: .3rem .6rem; margin: 0 0 .5rem; }
  table:not(.matrix, .topology) > tbody > tr[class^="sev-"] { border-left-width: 4px; }
  tr.sev-error { border-left-color: var(--error) !important; } tr.sev-warn { border-left-color: var(--warn) !important; }
  tr.sev-info { border-left-color: var(--info) !important; }
  table:not(.matrix, .topology) > tbody > tr > :is(td, th) { border: 0; padding: .1rem 0; text-align: left; white-space: normal;
    overflow-wrap: anywhere; min-width: 0; flex: 1 1 100%; }
  table:not(.matrix, .topology) > tbody > tr > td.num { flex: 0 1 auto; }
  table:not(.matrix, .topology) > tbody > tr > :is(td, th) :is(code, .nobr) { overflow-wrap: anywhere; white-space: normal; }
  table:not(.matrix, .topology) > tbody > tr > :is(td, th):empty { display: none; }
  table:not(.matrix, .topology) > tbody > tr > [data-label]::before { content: attr(data-label) ": "; color: var(--faint);
    font-weight: 600; font-size: 13px; }
  table:not(.matrix, .topology) > tbody > tr > td.message { order: -1; }
}
`
