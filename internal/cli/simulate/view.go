package simulate

import (
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

// chartWidth is the width of the lease chart's time axis, in columns; on a
// narrower terminal the axis narrows (to chartMin) so the chart fits.
const chartWidth, chartMin = 56, 16

// writeTimeline renders a run as an event table, one line per event, and
// a chart of lock leases, deliveries and side effects over virtual time.
func writeTimeline(w io.Writer, th *report.Theme, tl *sim.Timeline) error {
	t := report.NewTable("STEP", "TIME", "LANE", "EVENT").AlignRight(0)
	for _, ev := range tl.Events {
		text := ev.Text
		lane := ev.Lane
		if ev.Mark {
			text = th.Mark(text)
		}
		switch ev.Kind {
		case "crash", "pause", "drop", "duplicate", "expire", "ack-timeout", "failover":
			text = th.Severity(findings.Warn, text)
		case "tick":
			text, lane = th.Faint(text), th.Faint(lane)
		}
		t.Row(fmt.Sprint(ev.Step), "t="+sim.FormatMillis(ev.T), lane, text)
	}
	if err := t.Render(w); err != nil {
		return err
	}
	if tl.End > 0 {
		fmt.Fprintln(w)
		writeChart(w, th, tl)
	}
	return nil
}

// writeChart draws leases (█ valid, ░ expired while the holder still acts
// as owner), deliveries (─, | at the ack deadline, ✗ crash, ✓ ack) and side
// effects (● first, ◉ each duplicate) on one time axis, with ^ under the
// span where two workers believed they held the same lock.
func writeChart(w io.Writer, th *report.Theme, tl *sim.Timeline) {
	a := chartAxis{end: tl.End, cols: chartWidth}
	if width := report.Width(w); width > 0 {
		// LANE and WHAT ("lease token 12") beside it, 2 blanks apart
		a.cols = min(chartWidth, max(chartMin, width-len("LANE  lease token 12    "))) // (and the notes column's gap)
		// a note that would not fit beside its bar goes under it
		a.notesBelow = width < len("LANE  lease token 12  ")+a.cols+2+longestNote(tl)
	}
	end := sim.FormatMillis(tl.End)
	fmt.Fprintf(w, "%s\n", th.Strong(fmt.Sprintf("Over virtual time, 0 to %s (one column = %s)", end,
		sim.FormatMillis(max(tl.End/int64(a.cols-1), 1)))))
	t := report.NewTable("LANE", "WHAT", "0"+strings.Repeat(" ", a.cols-2-len(end))+end, "").Fixed(2)
	for wk := 0; wk < tl.Workers; wk++ {
		lane := fmt.Sprintf("W%d", wk+1)
		a.deliveries(t, tl, wk, lane)
		a.leases(t, tl, wk, lane)
		a.effects(t, tl, wk, lane)
	}
	if over := overlaps(tl); over != nil {
		bar := a.blank()
		for _, span := range over {
			a.fill(bar, span[0], span[1], '^')
		}
		a.row(t, "", "two owners", th.Severity(findings.Error, string(bar)), overlapNote)
	}
	_ = t.Render(w)
}

// chartAxis maps virtual time, 0 to end, onto the chart's columns.
type chartAxis struct {
	end        int64
	cols       int
	notesBelow bool
}

const overlapNote = "two workers acted as holder of the same lock"

// row adds a bar and its note: beside it, or on the lines under it.
func (a chartAxis) row(t *report.Table, lane, what, bar, note string) {
	if !a.notesBelow || note == "" {
		t.Row(lane, what, bar, note)
		return
	}
	t.Row(lane, what, bar, "")
	for _, line := range strings.Split(report.Wrap(note, a.cols-2), "\n") {
		t.Row("", "", "  "+line, "")
	}
}

// longestNote is the widest note the chart writes beside a bar.
func longestNote(tl *sim.Timeline) int {
	n := 0
	if overlaps(tl) != nil {
		n = len(overlapNote)
	}
	for _, l := range tl.Leases {
		n = max(n, len(leaseNote(l))+len("; its holder, paused, still took itself for the owner"))
	}
	return n
}

func (a chartAxis) col(t int64) int {
	c := int(t * int64(a.cols-1) / a.end)
	return min(max(c, 0), a.cols-1)
}

func (a chartAxis) blank() []rune { return []rune(strings.Repeat(" ", a.cols)) }

// fill draws r from the column of from to the column of to, both included.
func (a chartAxis) fill(bar []rune, from, to int64, r rune) {
	for c := a.col(from); c <= a.col(to); c++ {
		bar[c] = r
	}
}

// deliveries adds a row per delivery worker wk took.
func (a chartAxis) deliveries(t *report.Table, tl *sim.Timeline, wk int, lane string) {
	for _, d := range tl.Deliveries {
		if d.Worker != wk {
			continue
		}
		bar := a.blank()
		a.fill(bar, d.From, d.To, '─')
		if d.Deadline > 0 && d.Deadline <= a.end {
			bar[a.col(d.Deadline)] = '|'
		}
		switch d.End {
		case "crash":
			bar[a.col(d.To)] = '✗'
		case "ack":
			bar[a.col(d.To)] = '✓'
		}
		t.Row(lane, d.Message+" ("+d.End+")", string(bar), "")
	}
}

// leases adds a row per lease worker wk held, with how it ended and how
// long its holder went on acting as owner.
func (a chartAxis) leases(t *report.Table, tl *sim.Timeline, wk int, lane string) {
	for _, l := range tl.Leases {
		if l.Worker != wk {
			continue
		}
		bar := a.blank()
		a.fill(bar, l.From, l.Until, '█')
		note := leaseNote(l)
		if note != "" && l.Believed > l.Until {
			// The spans the HTML hatches: the holder could act only
			// while neither paused nor dead (issue 44: the terminal
			// marked a paused holder as acting).
			spans := acting(tl, lane, l.Until, l.Believed)
			for _, sp := range spans {
				for c := a.col(sp[0]) + 1; c <= a.col(sp[1]); c++ {
					bar[c] = '░'
				}
			}
			if len(spans) > 0 {
				note += "; its holder acted as owner until t=" + sim.FormatMillis(spans[len(spans)-1][1])
			} else {
				note += "; its holder, paused, still took itself for the owner"
			}
		}
		a.row(t, lane, fmt.Sprintf("lease token %d", l.Token), string(bar), note)
	}
}

// leaseNote says how a lease ended when that is news (expired, deleted,
// lost), or "".
func leaseNote(l sim.Lease) string {
	switch l.Ended {
	case "expired":
		return "expired at t=" + sim.FormatMillis(l.Until)
	case "deleted":
		return "deleted by another worker at t=" + sim.FormatMillis(l.Until)
	case "lost":
		return "lost in a failover at t=" + sim.FormatMillis(l.Until)
	}
	return ""
}

// effects adds worker wk's side effects as one row, if it ran any.
func (a chartAxis) effects(t *report.Table, tl *sim.Timeline, wk int, lane string) {
	eff := a.blank()
	has := false
	for _, e := range tl.Effects {
		if e.Worker == wk {
			has = true
			if e.N > 1 {
				eff[a.col(e.T)] = '◉'
			} else {
				eff[a.col(e.T)] = '●'
			}
		}
	}
	if has {
		t.Row(lane, "side effects", string(eff), "")
	}
}

// overlaps returns the spans in which two workers each believed they held
// the same lock.
func overlaps(tl *sim.Timeline) [][2]int64 {
	var out [][2]int64
	for i, a := range tl.Leases {
		for _, b := range tl.Leases[i+1:] {
			if a.Lock != b.Lock || a.Worker == b.Worker {
				continue
			}
			from, to := max(a.From, b.From), min(a.Believed, b.Believed)
			if from < to {
				out = append(out, [2]int64{from, to})
			}
		}
	}
	return out
}

func count(n int) string { return english.Number(int64(n)) }

// writeTimelineHTML is a run's picture and its events table, each event a
// row the picture's marks link to.
func writeTimelineHTML(w io.Writer, tl *sim.Timeline, title, why string) error {
	if err := timelineLanes(tl, title, why).SVG(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "<details open><summary>events</summary>\n<div class=\"scroll\"><table class=\"events\"><thead><tr><th class=\"num\" "+
		"scope=\"col\">step</th><th scope=\"col\">time</th><th scope=\"col\">lane</th><th scope=\"col\">event</th></tr></thead><tbody>\n")
	for _, ev := range tl.Events {
		if ev.Kind == "tick" {
			continue
		}
		text := report.Escape(ev.Text)
		if ev.Mark {
			text = "<strong>" + text + "</strong>"
		}
		fmt.Fprintf(w, "<tr id=\"ev-%d\"><td class=\"num\">%d</td><td>t=%s</td><td>%s</td><td>%s</td></tr>\n", ev.Step, ev.Step,
			report.Escape(sim.FormatMillis(ev.T)), report.Escape(ev.Lane), text)
	}
	_, err := io.WriteString(w, "</tbody></table></div></details>\n")
	return err
}

// writeCounterfactualsHTML is the same schedule under every profile.
func writeCounterfactualsHTML(w io.Writer, cfs []sim.Counterfactual) {
	fmt.Fprintf(w, "<h3>The same schedule under every profile</h3>\n<div class=\"scroll\"><table><thead><tr><th scope=\"col\">profile"+
		"</th><th scope=\"col\">outcome</th><th class=\"num\" scope=\"col\">effects</th><th class=\"num\" scope=\"col\">caught</th><th "+
		"class=\"num\" scope=\"col\">fenced</th><th class=\"num\" scope=\"col\">lock expiries</th><th class=\"num\" scope=\"col\">DLQ</th>"+
		"</tr></thead><tbody>\n")
	for _, cf := range cfs {
		outcome := sim.OutcomeOf(cf.Found).String()
		class := "pass"
		if cf.Found.Has(sim.VDuplicate) || cf.Found.Has(sim.VLoss) {
			class = "fail"
		}
		fmt.Fprintf(w, "<tr><td>%s</td><td><span class=\"badge %s\">%s</span></td><td class=\"num\">%d</td><td class=\"num\">%d</td><td "+
			"class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td></tr>\n",
			report.Escape(cf.Profile.Name), class, report.Escape(outcome), cf.Stats.Effects, cf.Stats.Caught, cf.Stats.Fenced,
			cf.Stats.LockExpiries, cf.Stats.DeadLettered)
	}
	io.WriteString(w, "</tbody></table></div>\n")
}

// writeScheduleMarkdown is a failing schedule as a compact list of its
// key steps, for a CI summary.
func writeScheduleMarkdown(w io.Writer, title string, tl *sim.Timeline) {
	fmt.Fprintf(w, "**%s**\n\n", report.MarkdownText(title))
	for _, ev := range sim.KeyEvents(tl) {
		fmt.Fprintf(w, "1. %s\n", report.MarkdownText(ev))
	}
}
