package report

import (
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/text"
)

// Lanes is a timeline picture in the manner of Jepsen's timeline.html: one
// lane per actor (worker, broker, clock), with bars for what lasts
// (deliveries, lock leases, the time a holder still acted as owner after
// its lease ended, a pause) and marks for what happens at an instant (side
// effects, the second one drawn last, on top; crashes, pauses, acks,
// expiries; and the evidence that decides the cause: a token-less or
// foreign DEL, a failed lock, a cache read or an idempotency check and
// its answer, a key that changed, a redelivery). Every bar and mark
// carries its time in data attributes (data-from-ms, data-to-ms,
// data-t-ms) and a <title> with its text, so a reader hovering sees the
// event and a test can check that a mark sits where its time says; a mark
// with a link jumps to its row in the events table.
//
// When marks stack within a few pixels of each other (nine steps at t=0),
// an event-order strip under the picture draws every event once more, one
// column per event in the order they happened, so no step is out of sight.
// A row with more marks than the picture can tell apart (a hot key) is
// drawn as counts per column, with the deciding marks kept.
type Lanes struct {
	// ID makes the picture's element ids unique on a page with several;
	// empty: one is derived from the title.
	ID    string
	Title string // the figure's caption
	Desc  string // a text equivalent of the whole picture
	// Cause, when set, is written above the picture: the incident's cause
	// code and its sentence.
	Cause *Cause
	Start int64 // ms
	End   int64 // ms
	// T0 is the wall-clock time of offset 0 (logs); zero for virtual time.
	T0    time.Time
	Lanes []Lane
	// Overlaps are spans to highlight across all lanes (two workers each
	// acting as the holder of one lock).
	Overlaps []Span
	// Note says what was left out (a window of a longer run).
	Note string
	// Legend, when set, replaces the incident legend: a picture whose
	// bars and marks mean other things (a replay's publishes) says what
	// each of its own means.
	Legend []LegendItem
}

// LegendItem is one entry of a picture's own legend: a bar kind's swatch
// or a mark kind's glyph, and what it means there.
type LegendItem struct {
	Bar  string // a Bar* kind, or ""
	Mark string // a Mark* kind, or ""
	Text string
}

// Cause is what the picture shows the reason of: a cause code
// (DUP_EFFECT_*), its title and the incident's own sentence.
type Cause struct {
	Code     string
	Title    string
	Sentence string
	Link     string // #id of the finding, or ""
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
	// BarOrphan is a lease whose key is still in the store while its
	// holder has crashed or is paused: nobody acts on it.
	BarOrphan = "orphan"
	BarPaused = "paused" // the worker was stopped (GC, VM stall)
)

// Bar is a span of time.
type Bar struct {
	From, To int64
	Kind     string
	Label    string // drawn inside the bar when it fits (a token, a key)
	// End says how the bar ended ("deleted by W2", "W1 crashed"), drawn
	// after its end with a cap.
	End   string
	Title string // the hover text
	Link  string // #id of the event row, or ""
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
	// The deciding evidence, each its own glyph.
	MarkForeignDel = "foreign-del" // a DEL without the holder's token, or of another's lock
	MarkLockFailed = "lock-failed" // SET NX answered busy
	MarkCheck      = "check"       // an idempotency check, with its answer as Label
	MarkCacheRead  = "cache-read"  // "already done?" asked of a cache, with its answer
	MarkKeyChanged = "key-changed" // the idempotency key differs from the earlier one
	MarkRedelivery = "redelivery"  // the broker delivered the message again
)

// Mark is an instant.
type Mark struct {
	At    int64
	Kind  string
	Title string
	Link  string
	// Label is a few words drawn beside the glyph (a check's answer).
	Label string
	// Evidence marks a line the cause rests on: drawn with a ring.
	Evidence bool
	// Seq is the event's place in the run (a step, a line number), for
	// the event-order strip; 0 when unknown.
	Seq int
}

// Span is an interval of the time axis.
type Span struct{ From, To int64 }

const (
	lanesLeft    = 250 // room for row labels
	lanesWidth   = 760 // the time axis
	lanesRight   = 150 // room for how the last bars ended
	lanesRowH    = 24
	lanesHeadH   = 18 // a lane's name, on its own line, never clipped
	lanesTop     = 30
	lanesBottom  = 40
	lanesMaxName = 150 // runes of a lane name per line
	rowLabelMax  = 37  // runes of a row label (the full text is its hover)
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

func (l *Lanes) id() string {
	if l.ID != "" {
		return l.ID
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%d|%d", l.Title, l.Start, l.End)
	return fmt.Sprintf("lanes-%08x", h.Sum32())
}

// nameLines is a lane name cut into lines of at most lanesMaxName runes.
func nameLines(name string) []string {
	r := []rune(name)
	var out []string
	for len(r) > lanesMaxName {
		out = append(out, string(r[:lanesMaxName]))
		r = r[lanesMaxName:]
	}
	return append(out, string(r))
}

func (l *Lanes) height() int {
	h := lanesTop + lanesBottom
	for _, ln := range l.Lanes {
		h += len(nameLines(ln.Name))*lanesHeadH + max(len(ln.Rows), 1)*lanesRowH
	}
	return h
}

// SVG writes the picture as an inline <figure>: the cause, the picture in
// a box that scrolls sideways on a narrow screen (its text never shrinks
// below legibility), the event-order strip when marks stack, the caption
// and the legend. Every outside string is escaped.
func (l *Lanes) SVG(w io.Writer) error {
	id := l.id()
	height, width := l.height(), lanesLeft+lanesWidth+lanesRight
	var b strings.Builder
	b.WriteString("<figure class=\"lanes\">\n")
	l.writeCause(&b)
	fmt.Fprintf(&b, "<div class=\"scroll\"><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "+
		"role=\"group\" aria-labelledby=\"%s-title %s-desc\" data-start-ms=\"%d\" data-end-ms=\"%d\" data-x0=\"%d\" data-width=\"%d\">\n",
		width, height, width, height, id, id, l.Start, l.End, lanesLeft, lanesWidth)
	fmt.Fprintf(&b, "<title id=\"%s-title\">%s</title>\n<desc id=\"%s-desc\">%s</desc>\n", id, Escape(l.Title), id, Escape(l.Desc))
	fmt.Fprintf(&b, `<defs><pattern id="%s-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect `+
		`class="hatch-bg" width="6" height="6"/><line class="hatch-line" x1="0" y1="0" x2="0" y2="6" stroke-width="2"/></pattern>`+
		`</defs>`+"\n", id)
	l.writeAxis(&b, height)
	for _, o := range l.Overlaps {
		x0, x1 := l.X(o.From), l.X(o.To)
		fmt.Fprintf(&b, "<rect class=\"overlap\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" data-from-ms=\"%d\" data-to-ms=\"%d\">"+
			"<title>two workers each took themselves for the holder of the same lock, %s to %s</title></rect>\n",
			x0, lanesTop-8, max(x1-x0, 1), height-lanesTop-lanesBottom+8, o.From, o.To, Escape(l.tickText(o.From)), Escape(l.tickText(o.To)))
	}
	var top []pending // drawn last, on top of everything: the second side effects
	stacked := false
	y := lanesTop
	for _, ln := range l.Lanes {
		fmt.Fprintf(&b, "<g class=\"lane\" data-lane=\"%s\">\n<title>%s</title>\n", Escape(ln.Name), Escape(ln.Name))
		for _, line := range nameLines(ln.Name) {
			fmt.Fprintf(&b, "<text class=\"lane-name\" x=\"4\" y=\"%d\">%s</text>\n", y+13, Escape(line))
			y += lanesHeadH
		}
		if len(ln.Rows) == 0 {
			y += lanesRowH
		}
		for _, r := range ln.Rows {
			label := text.ClipRunes(r.Label, rowLabelMax, "…")
			fmt.Fprintf(&b, "<text class=\"row-label\" x=\"12\" y=\"%d\"><title>%s</title>%s</text>\n", y+16, Escape(r.Label), Escape(label))
			t, s := l.row(&b, r, y, id)
			top, stacked = append(top, t...), stacked || s
			y += lanesRowH
		}
		fmt.Fprintf(&b, "<line class=\"rule\" x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n", y, width, y)
	}
	for _, p := range top {
		l.mark(&b, p.m, p.y)
	}
	b.WriteString("</svg></div>\n")
	if stacked {
		l.writeOrder(&b)
	}
	fmt.Fprintf(&b, "<figcaption>%s", Escape(l.Title))
	if l.Note != "" {
		fmt.Fprintf(&b, " <span class=\"note\">(%s)</span>", Escape(l.Note))
	}
	b.WriteString("</figcaption>\n")
	if l.Legend != nil {
		b.WriteString(ownLegend(l.Legend))
	} else {
		b.WriteString(lanesLegend)
	}
	b.WriteString("</figure>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// pending is a mark held back to be drawn on top.
type pending struct {
	m Mark
	y int
}

func (l *Lanes) writeCause(b *strings.Builder) {
	c := l.Cause
	if c == nil {
		return
	}
	code := "<code>" + Escape(c.Code) + "</code>"
	if c.Link != "" {
		code = "<a href=\"" + Escape(c.Link) + "\">" + code + "</a>"
	}
	fmt.Fprintf(b, "<p class=\"cause\"><span class=\"cause-label\">cause</span> %s", code)
	if c.Title != "" {
		fmt.Fprintf(b, " <strong>%s</strong>", Escape(c.Title))
	}
	if c.Sentence != "" {
		fmt.Fprintf(b, "<br>%s", Escape(c.Sentence))
	}
	b.WriteString("</p>\n")
}

// row draws one row's bars and marks; it returns the marks to draw on
// top and whether two of its marks stack within a few pixels.
func (l *Lanes) row(b *strings.Builder, r LaneRow, y int, id string) ([]pending, bool) {
	bars := mergeBars(l, r.Bars)
	for _, bar := range bars {
		l.bar(b, bar, y, id)
	}
	for _, bar := range bars {
		l.barEnd(b, bar, y)
	}
	marks, bins := l.binMarks(r.Marks)
	for _, bn := range bins {
		l.bin(b, bn, y)
	}
	var top []pending
	lastLabel := -1.0
	for _, m := range marks {
		if m.Kind == MarkDuplicate {
			top = append(top, pending{m, y})
			continue
		}
		l.mark(b, m, y)
		if m.Label != "" {
			if x := l.X(m.At) + 9; x > lastLabel {
				fmt.Fprintf(b, "<text class=\"mark-label\" x=\"%.1f\" y=\"%d\">%s</text>\n", x, y+9, Escape(m.Label))
				lastLabel = x + float64(6*len([]rune(m.Label)))
			}
		}
	}
	return top, stacks(l, marks)
}

// stacks says whether two marks of a row sit within 5 px of each other.
func stacks(l *Lanes, marks []Mark) bool {
	for i := 1; i < len(marks); i++ {
		for j := i - 1; j >= 0 && j >= i-8; j-- {
			d := l.X(marks[i].At) - l.X(marks[j].At)
			if d < 5 && d > -5 {
				return true
			}
		}
	}
	return false
}

// ownLegend writes a picture's own legend: each mark drawn with the
// picture's own glyph and colours (a small inline SVG), each bar as its
// swatch.
func ownLegend(items []LegendItem) string {
	var b strings.Builder
	b.WriteString("<p class=\"legend\">")
	for _, it := range items {
		b.WriteString("<span>")
		switch {
		case it.Bar != "":
			fmt.Fprintf(&b, "<span class=\"sw sw-%s\"></span>", Escape(it.Bar))
		case it.Mark != "":
			kind := it.Mark
			if _, ok := glyphs[kind]; !ok {
				kind = MarkOther
			}
			fmt.Fprintf(&b, "<svg class=\"glyph\" viewBox=\"-10 -10 20 20\" width=\"16\" height=\"16\" aria-hidden=\"true\">"+
				"<g class=\"mark %s\">%s</g></svg>", kind, glyph(kind))
		}
		b.WriteString(Escape(it.Text) + "</span>")
	}
	b.WriteString("</p>\n")
	return b.String()
}

const lanesLegend = `<p class="legend"><span><span class="sw sw-delivery"></span>delivery</span><span><span class="sw sw-lease">` +
	`</span>lock lease (its key, how it ended)</span>` +
	`<span><span class="sw sw-believed"></span>holder still acting as owner after its lease ended</span><span><span class="sw sw-orphan">` +
	`</span>key left with no acting holder (crashed or paused)</span>` +
	`<span><span class="sw sw-paused"></span>paused</span><span>&#9679; side effect</span><span>&#9673; <strong>second side effect` +
	`</strong></span>` +
	`<span>&#9660; DEL of a lock it did not hold</span><span>&#8856; lock busy</span><span>&#9670; idempotency check (answer)</span>` +
	`<span>&#9671; cache read (answer)</span>` +
	`<span>&#9733; key changed</span><span>&#8635; redelivery</span><span>&#10007; crash</span><span>&#10074;&#10074; pause</span><span>` +
	`&#10003; ack</span><span>&#9711; deciding evidence</span></p>` + "\n"
