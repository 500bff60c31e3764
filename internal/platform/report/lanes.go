package report

import (
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/text"
	"io"
	"strings"
)

// Lanes is a timeline picture in the manner of Jepsen's timeline.html: one
// lane per actor (worker, broker, clock), with bars for what lasts
// (deliveries, lock leases, the time a holder still acted as owner after
// its lease ended) and marks for what happens at an instant (side effects,
// the second one highlighted; crashes, pauses, acks, expiries). Every bar
// and mark carries its time in data attributes (data-from-ms, data-to-ms,
// data-t-ms) and a <title> with its text, so a reader hovering sees the
// event and a test can check that a mark sits where its time says; a mark
// with a link jumps to its row in the events table.
type Lanes struct {
	Title string // the figure's caption
	Desc  string // a text equivalent of the whole picture
	Start int64  // ms
	End   int64  // ms
	Lanes []Lane
	// Overlaps are spans to highlight across all lanes (two workers each
	// acting as the holder of one lock).
	Overlaps []Span
	// Note says what was left out (a window of a longer run).
	Note string
}

// Lane is one actor's rows.
type Lane struct {
	Name string
	Rows []LaneRow
}

// LaneRow is one row of a lane: a delivery, a lease, the side effects.
type LaneRow struct {
	Label string
	Bars  []Bar
	Marks []Mark
}

// Bar kinds, each drawn in its own colour and pattern.
const (
	BarDelivery = "delivery"
	BarLease    = "lease"
	BarBelieved = "believed" // the holder still acted as owner, unprotected
)

// Bar is a span of time.
type Bar struct {
	From, To int64
	Kind     string
	Label    string // drawn inside the bar when it fits (a token)
	Title    string // the hover text
	Link     string // #id of the event row, or ""
}

// Mark kinds.
const (
	MarkEffect    = "effect"
	MarkDuplicate = "duplicate" // the second side effect: the incident
	MarkCrash     = "crash"
	MarkPause     = "pause"
	MarkAck       = "ack"
	MarkExpire    = "expire"
	MarkDeadline  = "deadline"
	MarkOther     = "other"
)

// Mark is an instant.
type Mark struct {
	At    int64
	Kind  string
	Title string
	Link  string
}

// Span is an interval of the time axis.
type Span struct{ From, To int64 }

const (
	lanesLeft   = 170 // room for lane and row labels
	lanesWidth  = 760 // the time axis
	lanesRowH   = 22
	lanesTop    = 28
	lanesBottom = 34
)

// X is where time t sits on the axis: the one mapping every bar and mark
// uses (and tests check against).
func (l *Lanes) X(t int64) float64 {
	span := l.End - l.Start
	if span <= 0 {
		span = 1
	}
	f := float64(t-l.Start) / float64(span)
	return lanesLeft + max(0, min(1, f))*lanesWidth
}

// SVG writes the picture as an inline <figure> with its caption, legend
// and an accessible description. Every outside string is escaped.
func (l *Lanes) SVG(w io.Writer) error {
	rows := 0
	for _, ln := range l.Lanes {
		rows += max(len(ln.Rows), 1)
	}
	height := lanesTop + rows*lanesRowH + lanesBottom
	width := lanesLeft + lanesWidth + 40
	var b strings.Builder
	fmt.Fprintf(&b, "<figure class=\"lanes\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"lanes-title lanes-desc\" data-start-ms=\"%d\" data-end-ms=\"%d\" data-x0=\"%d\" data-width=\"%d\">\n",
		width, height, width, height, l.Start, l.End, lanesLeft, lanesWidth)
	fmt.Fprintf(&b, "<title id=\"lanes-title\">%s</title>\n<desc id=\"lanes-desc\">%s</desc>\n", Escape(l.Title), Escape(l.Desc))
	b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="` + Palette.Expired + `"/><line x1="0" y1="0" x2="0" y2="6" stroke="` + Palette.Error + `" stroke-width="2"/></pattern></defs>` + "\n")
	// the axis
	axisY := height - lanesBottom + 6
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>\n", lanesLeft, axisY, lanesLeft+lanesWidth, axisY, Palette.Faint)
	for i := 0; i <= 4; i++ {
		t := l.Start + (l.End-l.Start)*int64(i)/4
		x := l.X(t)
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">t=%s</text>\n",
			x, lanesTop-6, x, axisY, x, axisY+16, Escape(msText(t)))
	}
	for _, o := range l.Overlaps {
		x0, x1 := l.X(o.From), l.X(o.To)
		fmt.Fprintf(&b, "<rect class=\"overlap\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" fill-opacity=\"0.18\" data-from-ms=\"%d\" data-to-ms=\"%d\"><title>two workers acted as holder of the same lock, t=%s to t=%s</title></rect>\n",
			x0, lanesTop-8, max(x1-x0, 1), rows*lanesRowH+8, Palette.Error, o.From, o.To, Escape(msText(o.From)), Escape(msText(o.To)))
	}
	y := lanesTop
	for _, ln := range l.Lanes {
		fmt.Fprintf(&b, "<g class=\"lane\" data-lane=\"%s\">\n", Escape(ln.Name))
		fmt.Fprintf(&b, "<text x=\"4\" y=\"%d\" font-weight=\"bold\">%s</text>\n", y+15, Escape(text.ClipRunes(ln.Name, 8, "…")))
		if len(ln.Rows) == 0 {
			y += lanesRowH
		}
		for _, r := range ln.Rows {
			fmt.Fprintf(&b, "<text x=\"58\" y=\"%d\">%s</text>\n", y+15, Escape(text.ClipRunes(r.Label, 19, "…")))
			for _, bar := range r.Bars {
				l.bar(&b, bar, y)
			}
			for _, m := range r.Marks {
				l.mark(&b, m, y)
			}
			y += lanesRowH
		}
		fmt.Fprintf(&b, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n</g>\n", y, width, y)
	}
	b.WriteString("</svg>\n")
	fmt.Fprintf(&b, "<figcaption>%s", Escape(l.Title))
	if l.Note != "" {
		fmt.Fprintf(&b, " <span class=\"note\">(%s)</span>", Escape(l.Note))
	}
	b.WriteString("</figcaption>\n")
	b.WriteString(`<p class="legend"><span>&#9644; <span style="color:` + Palette.Delivery + `">delivery</span></span><span>&#9644; <span style="color:` + Palette.Lease + `">lock lease</span></span><span>&#9638; <span style="color:` + Palette.Error + `">holder still acting as owner after its lease ended</span></span><span>&#9679; side effect</span><span>&#9673; <strong>second side effect</strong></span><span>&#10007; crash</span><span>&#10074;&#10074; pause</span><span>&#10003; ack</span></p>` + "\n</figure>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (l *Lanes) bar(b *strings.Builder, bar Bar, y int) {
	x0, x1 := l.X(bar.From), l.X(bar.To)
	fill, stroke := Palette.Delivery, "none"
	h, dy := 8, 7
	switch bar.Kind {
	case BarLease:
		fill, h, dy = Palette.Lease, 14, 4
	case BarBelieved:
		fill, stroke, h, dy = "url(#hatch)", Palette.Error, 14, 4
	}
	open, closeTag := "", ""
	if bar.Link != "" {
		open, closeTag = fmt.Sprintf("<a href=\"%s\">", Escape(bar.Link)), "</a>"
	}
	fmt.Fprintf(b, "%s<rect class=\"bar %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" stroke=\"%s\" data-from-ms=\"%d\" data-to-ms=\"%d\"><title>%s</title></rect>",
		open, Escape(bar.Kind), x0, y+dy, max(x1-x0, 2), h, fill, stroke, bar.From, bar.To, Escape(bar.Title))
	if bar.Label != "" && x1-x0 > float64(7*len(bar.Label)) {
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%s</text>", x0+3, y+15, Escape(bar.Label))
	}
	b.WriteString(closeTag + "\n")
}

func (l *Lanes) mark(b *strings.Builder, m Mark, y int) {
	x, cy := l.X(m.At), float64(y+11)
	open, closeTag := "", ""
	if m.Link != "" {
		open, closeTag = fmt.Sprintf("<a href=\"%s\">", Escape(m.Link)), "</a>"
	}
	title := fmt.Sprintf("<title>%s</title>", Escape(m.Title))
	attrs := fmt.Sprintf("class=\"mark %s\" data-t-ms=\"%d\"", Escape(m.Kind), m.At)
	var shape string
	switch m.Kind {
	case MarkEffect:
		shape = fmt.Sprintf("<circle %s cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\">%s</circle>", attrs, x, cy, Palette.Effect, title)
	case MarkDuplicate:
		shape = fmt.Sprintf("<circle %s cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"%s\" stroke=\"%s\" stroke-width=\"3\">%s</circle>", attrs, x, cy, Palette.Error, Palette.Ink, title)
	case MarkCrash:
		shape = fmt.Sprintf("<path %s transform=\"translate(%.1f %.1f)\" d=\"M-6,-6 L6,6 M6,-6 L-6,6\" stroke=\"%s\" stroke-width=\"3\">%s</path>", attrs, x, cy, Palette.Fault, title)
	case MarkPause:
		shape = fmt.Sprintf("<path %s transform=\"translate(%.1f %.1f)\" d=\"M-3,-7 L-3,7 M3,-7 L3,7\" stroke=\"%s\" stroke-width=\"3\">%s</path>", attrs, x, cy, Palette.Fault, title)
	case MarkAck:
		shape = fmt.Sprintf("<path %s transform=\"translate(%.1f %.1f)\" d=\"M-6,0 L-2,5 L6,-6\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\">%s</path>", attrs, x, cy, Palette.Pass, title)
	case MarkDeadline, MarkExpire:
		shape = fmt.Sprintf("<path %s transform=\"translate(%.1f %.1f)\" d=\"M0,-9 L0,9\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"3 2\">%s</path>", attrs, x, cy, Palette.Warn, title)
	default:
		shape = fmt.Sprintf("<rect %s x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" fill=\"%s\">%s</rect>", attrs, x-3, cy-3, Palette.Info, title)
	}
	b.WriteString(open + shape + closeTag + "\n")
}

// msText writes milliseconds as people read durations: 950ms, 12s,
// 1m30.5s.
func msText(ms int64) string {
	switch {
	case ms < 1000 && ms > -1000:
		return fmt.Sprintf("%dms", ms)
	case ms%1000 == 0 && ms < 60_000:
		return fmt.Sprintf("%ds", ms/1000)
	}
	s := fmt.Sprintf("%.3f", float64(ms%60_000)/1000)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".") + "s"
	if ms >= 60_000 {
		return fmt.Sprintf("%dm%s", ms/60_000, s)
	}
	return s
}
