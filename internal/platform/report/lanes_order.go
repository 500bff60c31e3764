package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/text"
)

const (
	orderCol   = 26  // px per event in the event-order strip
	orderMax   = 200 // most events a strip draws (past it, none: the table orders them)
	orderRowH  = 24
	orderTop   = 26
	orderBelow = 56
)

// orderEvent is one mark in the event-order strip.
type orderEvent struct {
	m    Mark
	lane int
}

// orderEvents are every mark of the picture in the order they happened:
// by Seq where the marks carry one, else by time; ties keep lane order.
func (l *Lanes) orderEvents() []orderEvent {
	var evs []orderEvent
	seq := true
	for i, ln := range l.Lanes {
		for _, r := range ln.Rows {
			for _, m := range r.Marks {
				evs = append(evs, orderEvent{m, i})
				seq = seq && m.Seq > 0
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if seq {
			return evs[i].m.Seq < evs[j].m.Seq
		}
		return evs[i].m.At < evs[j].m.At
	})
	return evs
}

// writeOrder draws the event-order strip: the time axis stacks some marks
// on each other, so every mark is drawn again one column per event, in
// order, on its lane's row, with its step number above and its time below
// wherever the time moves on.
func (l *Lanes) writeOrder(b *strings.Builder) {
	evs := l.orderEvents()
	if len(evs) > orderMax {
		// A hot key: its marks are counted per column above; the order of
		// thousands of events is the events table's.
		return
	}
	note := ""

	width := lanesLeft + len(evs)*orderCol + 20
	height := orderTop + len(l.Lanes)*orderRowH + orderBelow
	fmt.Fprintf(b, "<div class=\"scroll order-strip\"><p class=\"strip-title\">Event order: the time axis above stacks events within a "+
		"few pixels, "+
		"so here each event has its own column, in the order it happened%s.</p>\n", Escape(note))
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"order\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "+
		"role=\"group\" aria-label=\"%s\" data-events=\"%d\">\n",
		width, height, width, height, Escape("event order of "+l.Title), len(evs))
	for i, ln := range l.Lanes {
		y := orderTop + i*orderRowH
		fmt.Fprintf(b, "<text class=\"row-label\" x=\"4\" y=\"%d\"><title>%s</title>%s</text><line class=\"rule\" x1=\"0\" y1=\"%d\" "+
			"x2=\"%d\" y2=\"%d\"/>\n",
			y+16, Escape(ln.Name), Escape(text.ClipRunes(ln.Name, rowLabelMax, "…")), y+orderRowH, width, y+orderRowH)
	}
	last := int64(-1 << 62)
	for i, ev := range evs {
		x := float64(lanesLeft + i*orderCol + orderCol/2)
		n := ev.m.Seq
		if n == 0 {
			n = i + 1
		}
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text class=\"step-no\" x=\"%.1f\" y=\"%d\" "+
			"text-anchor=\"middle\">%d</text>\n",
			x, orderTop-4, x, height-orderBelow, x, orderTop-8, n)
		l.markAt(b, ev.m, x, float64(orderTop+ev.lane*orderRowH+12))
		if ev.m.At != last {
			ty := height - orderBelow + 12
			fmt.Fprintf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" transform=\"rotate(-40 %.1f %d)\" text-anchor=\"end\">%s</text>\n", x, ty, x,
				ty, Escape(l.tickText(ev.m.At)))
			last = ev.m.At
		}
	}
	b.WriteString("</svg></div>\n")
}
