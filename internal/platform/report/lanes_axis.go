package report

import (
	"fmt"
	"strings"
	"time"
)

// niceSteps are the tick intervals the axis rounds to, in ms: 1, 2 and 5
// times a power of ten, then minutes and hours.
var niceSteps = []int64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000,
	60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000}

// tickStep is the smallest round interval that puts at most maxTicks
// ticks on a span.
func tickStep(span int64, maxTicks int64) int64 {
	for _, s := range niceSteps {
		if span/s <= maxTicks {
			return s
		}
	}
	return max(span/maxTicks, 1)
}

// Ticks are the round times between start and end at which the axis is
// labelled.
func Ticks(start, end int64) []int64 {
	step := tickStep(max(end-start, 1), 8)
	first := (start + step - 1) / step * step
	if start < 0 {
		first = start / step * step
	}
	var out []int64
	for t := first; t <= end; t += step {
		out = append(out, t)
	}
	return out
}

// tickText is a time as the axis writes it: virtual time as t=, log time
// as an offset from t0.
func (l *Lanes) tickText(ms int64) string {
	if l.T0.IsZero() {
		return "t=" + msText(ms)
	}
	return "+" + msText(ms)
}

func (l *Lanes) writeAxis(b *strings.Builder, height int) {
	axisY := height - lanesBottom + 6
	fmt.Fprintf(b, "<g class=\"axis\"><line class=\"axis-line\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", lanesLeft, axisY,
		lanesLeft+lanesWidth, axisY)
	for _, t := range Ticks(l.Start, l.End) {
		x := l.X(t)
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text class=\"tick\" x=\"%.1f\" y=\"%d\" "+
			"text-anchor=\"middle\" data-t-ms=\"%d\">%s</text>\n",
			x, lanesTop-6, x, axisY, x, axisY+16, t, Escape(l.tickText(t)))
	}
	if !l.T0.IsZero() {
		fmt.Fprintf(b, "<text class=\"t0\" x=\"4\" y=\"%d\">t0 = %s</text>\n", axisY+32,
			Escape(l.T0.UTC().Format("2006-01-02 15:04:05.000 UTC")))
	}
	b.WriteString("</g>\n")
}

// msText writes milliseconds as people read durations: 950ms, 12s,
// 1m30.5s.
func msText(ms int64) string {
	if ms < 0 {
		return "-" + msText(-ms)
	}
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms%1000 == 0 && ms < 60_000:
		return fmt.Sprintf("%ds", ms/1000)
	case ms >= time.Hour.Milliseconds():
		return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
	}
	s := fmt.Sprintf("%.3f", float64(ms%60_000)/1000)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".") + "s"
	if ms >= 60_000 {
		return fmt.Sprintf("%dm%s", ms/60_000, s)
	}
	return s
}
