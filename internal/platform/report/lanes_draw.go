package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/text"
)

// A row draws at most this many marks and bars one by one; past it (a hot
// key's thousands of lines), the rest are counted per binPx column.
const (
	maxRowMarks = 150
	maxRowBars  = 120
	maxKept     = 60 // deciding marks kept one by one in a binned row
	binPx       = 6
)

func linkWrap(link string) (string, string) {
	if link == "" {
		return "", ""
	}
	return fmt.Sprintf("<a href=\"%s\">", Escape(link)), "</a>"
}

func (l *Lanes) bar(b *strings.Builder, bar Bar, y int, id string) {
	x0, x1 := l.X(bar.From), l.X(bar.To)
	h, dy := 8, 8
	fill := ""
	switch bar.Kind {
	case BarLease, BarOrphan:
		h, dy = 14, 5
	case BarBelieved:
		h, dy, fill = 14, 5, fmt.Sprintf(" fill=\"url(#%s-hatch)\"", id)
	case BarPaused:
		h, dy = 6, 17
	}
	open, closeTag := linkWrap(bar.Link)
	fmt.Fprintf(b, "%s<rect class=\"bar %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"%s data-from-ms=\"%d\" data-to-ms=\"%d\">"+
		"<title>%s</title></rect>",
		open, Escape(bar.Kind), x0, y+dy, max(x1-x0, 2), h, fill, bar.From, bar.To, Escape(bar.Title))
	if bar.Label != "" && x1-x0 > float64(6*len([]rune(bar.Label))+6) {
		fmt.Fprintf(b, "<text class=\"bar-label\" x=\"%.1f\" y=\"%d\">%s</text>", x0+3, y+16, Escape(bar.Label))
	}
	b.WriteString(closeTag)
	b.WriteString("\n")
}

// barEnd draws how a bar ended, a cap at its end and a few words after
// it; drawn after every bar of its row so no later bar covers the words.
func (l *Lanes) barEnd(b *strings.Builder, bar Bar, y int) {
	if bar.End == "" {
		return
	}
	x1 := l.X(bar.To)
	fmt.Fprintf(b, "<line class=\"bar-end\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x1, y+2, x1, y+22)
	// Words that would run past the picture's right edge are wrapped onto
	// a second line, and past that cut with the whole in a title (issue
	// 44: "no release logged (its last..." was clipped by the edge).
	room := int((float64(lanesLeft+lanesWidth+lanesRight) - x1 - 6) / endLabelCharPx)
	lines := strings.Split(Wrap(bar.End, max(room, 8)), "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "<text class=\"bar-end-label\" x=\"%.1f\" y=\"%d\">%s</text>\n", x1+3, y+9, Escape(bar.End))
		return
	}
	second := strings.Join(lines[1:], " ")
	if len(lines) > 2 {
		second = text.ClipRunes(second, max(room, 8), "…")
	}
	fmt.Fprintf(b, "<text class=\"bar-end-label\" x=\"%.1f\" y=\"%d\"><title>%s</title><tspan>%s </tspan>"+
		"<tspan x=\"%.1f\" dy=\"11\">%s</tspan></text>\n", x1+3, y+9, Escape(bar.End), Escape(lines[0]), x1+3, Escape(second))
}

// endLabelCharPx is an 11 px label's average character width, generous.
const endLabelCharPx = 6.2

// glyphs are the marks' shapes, drawn around (0,0) and translated.
var glyphs = map[string]string{
	MarkCrash:      `<path d="M-6,-6 L6,6 M6,-6 L-6,6" stroke-width="3"/>`,
	MarkPause:      `<path d="M-3,-7 L-3,7 M3,-7 L3,7" stroke-width="3"/>`,
	MarkAck:        `<path d="M-6,0 L-2,5 L6,-6" fill="none" stroke-width="2.5"/>`,
	MarkExpire:     `<path d="M0,-10 L0,10" stroke-width="2" stroke-dasharray="3 2"/>`,
	MarkDeadline:   `<path d="M0,-10 L0,10" stroke-width="2" stroke-dasharray="3 2"/>`,
	MarkForeignDel: `<path d="M-7,-6 L7,-6 L0,7 Z" stroke-width="1.5"/>`,
	MarkLockFailed: `<circle r="6" fill="none" stroke-width="2"/><path d="M-4,4 L4,-4" stroke-width="2"/>`,
	MarkCheck:      `<path d="M0,-7 L7,0 L0,7 L-7,0 Z" stroke-width="1.5"/>`,
	MarkCacheRead:  `<path d="M0,-7 L7,0 L0,7 L-7,0 Z" stroke-width="2" stroke-dasharray="2 1.5"/>`,
	MarkKeyChanged: `<path d="M0,-8 L2.4,-2.5 L8,-2.5 L3.5,1 L5,7 L0,3.6 L-5,7 L-3.5,1 L-8,-2.5 L-2.4,-2.5 Z" stroke-width="1"/>`,
	MarkRedelivery: `<path d="M5,-4 A6,6 0 1 0 6,2" fill="none" stroke-width="2.2"/><path d="M2,-7 L6,-4 L2,-1 Z" stroke-width="1"/>`,
	MarkEffect:     `<circle r="5"/>`,
	MarkDuplicate:  `<circle r="8" stroke-width="3"/>`,
	MarkOther:      `<rect x="-3" y="-3" width="6" height="6"/>`,
}

func glyph(kind string) string {
	if g, ok := glyphs[kind]; ok {
		return g
	}
	return glyphs[MarkOther]
}

// mark draws one mark as a group translated to its x: its class says its
// kind, data-t-ms its time, <title> its text; a ring around it when the
// cause rests on it.
func (l *Lanes) mark(b *strings.Builder, m Mark, y int) {
	l.markAt(b, m, l.X(m.At), float64(y+12))
}

func (l *Lanes) markAt(b *strings.Builder, m Mark, x, cy float64) {
	open, closeTag := linkWrap(m.Link)
	kind := m.Kind
	if _, ok := glyphs[kind]; !ok {
		kind = MarkOther
	}
	ev := ""
	if m.Evidence {
		ev = " data-evidence=\"1\""
	}
	b.WriteString(open)
	fmt.Fprintf(b, "<g class=\"mark %s\" data-t-ms=\"%d\"%s transform=\"translate(%.1f %.1f)\"><title>%s</title>", Escape(kind), m.At, ev,
		x, cy, Escape(m.Title))
	if m.Evidence {
		b.WriteString(`<circle class="ring" r="11"/>`)
	}
	b.WriteString(glyph(kind) + "</g>" + closeTag + "\n")
}

// markBin is the marks of a hot row that fall in one column.
type markBin struct {
	From, To int64
	Kinds    map[string]int
	Count    int
}

// keepsAlone says whether a mark is drawn one by one even in a binned row:
// the marks a cause rests on.
func keepsAlone(m Mark) bool {
	switch m.Kind {
	case MarkDuplicate, MarkCrash, MarkForeignDel, MarkKeyChanged, MarkRedelivery, MarkLockFailed:
		return true
	}
	return m.Evidence
}

// binMarks returns the marks to draw one by one and, past maxRowMarks,
// the rest counted per column.
func (l *Lanes) binMarks(marks []Mark) ([]Mark, []markBin) {
	if len(marks) <= maxRowMarks {
		return marks, nil
	}
	var kept []Mark
	byCol := map[int]*markBin{}
	firstOf := map[string]bool{}
	for _, m := range marks {
		if len(kept) < maxKept && (keepsAlone(m) || !firstOf[m.Kind]) {
			firstOf[m.Kind] = true
			kept = append(kept, m)
			continue
		}
		col := int((l.X(m.At) - lanesLeft) / binPx)
		bn := byCol[col]
		if bn == nil {
			bn = &markBin{From: m.At, To: m.At, Kinds: map[string]int{}}
			byCol[col] = bn
		}
		bn.From, bn.To = min(bn.From, m.At), max(bn.To, m.At)
		bn.Kinds[m.Kind]++
		bn.Count++
	}
	bins := make([]markBin, 0, len(byCol))
	for _, bn := range byCol {
		bins = append(bins, *bn)
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].From < bins[j].From })
	return kept, bins
}

// bin draws a column's count as a bar whose height grows with the log of
// the count; its title says what is in it.
func (l *Lanes) bin(b *strings.Builder, bn markBin, y int) {
	kinds := make([]string, 0, len(bn.Kinds))
	for k := range bn.Kinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", bn.Kinds[k], k))
	}
	h := min(4+4*math.Log2(float64(bn.Count)), 20)
	x := l.X(bn.From)
	fmt.Fprintf(b, "<rect class=\"bin\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" data-count=\"%d\" data-from-ms=\"%d\" "+
		"data-to-ms=\"%d\"><title>%s from %s to %s: %s</title></rect>\n",
		x, float64(y+22)-h, binPx-1, h, bn.Count, bn.From, bn.To, english.Count(bn.Count, "event", "events"), Escape(l.tickText(bn.From)),
		Escape(l.tickText(bn.To)), Escape(strings.Join(parts, ", ")))
}

// mergeBars returns a row's bars, and past maxRowBars the bars of each
// kind merged where they lie within a column of each other, as spans
// counted in their title.
func mergeBars(l *Lanes, bars []Bar) []Bar {
	if len(bars) <= maxRowBars {
		return bars
	}
	sorted := slices.Clone(bars)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].From < sorted[j].From })
	var out []Bar
	counts := map[int]int{}
	for _, bar := range sorted {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.Kind == bar.Kind && l.X(bar.From) <= l.X(last.To)+binPx {
				last.To = max(last.To, bar.To)
				counts[n-1]++
				continue
			}
		}
		bar.Label, bar.End = "", ""
		out = append(out, bar)
		counts[len(out)-1] = 1
	}
	for i := range out {
		if c := counts[i]; c > 1 {
			out[i].Title = fmt.Sprintf("%s from %s to %s (the first: %s)", english.Count(c, out[i].Kind+" bar", out[i].Kind+" bars"),
				l.tickText(out[i].From), l.tickText(out[i].To), out[i].Title)
		}
	}
	return out
}
