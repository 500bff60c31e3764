package simulate

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

// timelineLanes is a run's timeline as a lanes picture: per worker its
// deliveries, its leases (each named by its lock key, ending where the key
// was deleted, expired or released or where its holder crashed or paused,
// then the span the holder still acted as owner, hatched), its pauses, its
// steps (the deciding ones with their own glyphs: a failed lock, a DEL of
// another's lock, a check and its answer, a key that changed, a
// redelivery) and its side effects; the broker's, Redis's and the clock's
// marks; above it, the cause the timeline's evidence names. Every bar and
// mark links to its row of the events table.
func timelineLanes(tl *sim.Timeline, title, why string) *report.Lanes {
	l := &report.Lanes{Title: title, Start: 0, End: max(tl.End, 1)}
	for _, o := range overlaps(tl) {
		l.Overlaps = append(l.Overlaps, report.Span{From: o[0], To: o[1]})
	}
	ev := readEvidence(tl)
	l.Cause = ev.cause(why)
	var dups, effects, crashes int
	for wk := 0; wk < tl.Workers; wk++ {
		name := fmt.Sprintf("W%d", wk+1)
		lane := report.Lane{Name: name}
		lane.Rows = append(lane.Rows, deliveryRows(tl, wk, name)...)
		lane.Rows = append(lane.Rows, leaseRows(tl, wk, name)...)
		if p := pauseRow(tl, name); len(p.Bars) > 0 {
			lane.Rows = append(lane.Rows, p)
		}
		steps := report.LaneRow{Label: "steps"}
		for _, e := range tl.Events {
			if e.Lane == name && e.Kind != "effect" && e.Kind != "duplicate-effect" {
				steps.Marks = append(steps.Marks, ev.mark(e))
				if e.Kind == "crash" {
					crashes++
				}
			}
		}
		if len(steps.Marks) > 0 {
			lane.Rows = append(lane.Rows, steps)
		}
		eff := report.LaneRow{Label: "side effects"}
		for _, e := range tl.Events {
			if e.Lane == name && (e.Kind == "effect" || e.Kind == "duplicate-effect") {
				m := ev.mark(e)
				effects++
				if m.Kind == report.MarkDuplicate {
					dups++
				}
				eff.Marks = append(eff.Marks, m)
			}
		}
		if len(eff.Marks) > 0 {
			lane.Rows = append(lane.Rows, eff)
		}
		l.Lanes = append(l.Lanes, lane)
	}
	for _, who := range []string{"broker", "redis", "clock"} {
		row := report.LaneRow{Label: "events"}
		for _, e := range tl.Events {
			if e.Lane == who && e.Kind != "tick" {
				row.Marks = append(row.Marks, ev.mark(e))
			}
		}
		if len(row.Marks) > 0 {
			l.Lanes = append(l.Lanes, report.Lane{Name: who, Rows: []report.LaneRow{row}})
		}
	}
	l.Desc = fmt.Sprintf("%d workers over virtual time 0 to %s: %d side effects, %d of them a duplicate; %d crashes; %d lock leases.",
		tl.Workers, sim.FormatMillis(tl.End), effects, dups, crashes, len(tl.Leases))
	if l.Cause != nil {
		l.Desc += " Cause: " + l.Cause.Code + ", " + l.Cause.Title + "."
	}
	return l
}

func stepLink(e sim.Event) string { return fmt.Sprintf("#ev-%d", e.Step) }

// stepAt is the link to the first event of a lane at t of one of kinds.
func stepAt(tl *sim.Timeline, lane string, t int64, kinds ...string) string {
	for _, e := range tl.Events {
		if e.Lane == lane && e.T == t && (len(kinds) == 0 || contains(kinds, e.Kind)) {
			return stepLink(e)
		}
	}
	return ""
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func deliveryRows(tl *sim.Timeline, wk int, name string) []report.LaneRow {
	var rows []report.LaneRow
	for _, d := range tl.Deliveries {
		if d.Worker != wk {
			continue
		}
		row := report.LaneRow{Label: d.Message + " (" + d.End + ")"}
		row.Bars = append(row.Bars, report.Bar{From: d.From, To: d.To, Kind: report.BarDelivery, End: d.End,
			Title: fmt.Sprintf("%s held %s from t=%s to t=%s, ended: %s", name, d.Message, sim.FormatMillis(d.From), sim.FormatMillis(d.To), d.End),
			Link:  stepAt(tl, name, d.From, "receive")})
		if d.Deadline > 0 && d.Deadline <= tl.End {
			row.Marks = append(row.Marks, report.Mark{At: d.Deadline, Kind: report.MarkDeadline,
				Title: "the broker's ack deadline for " + d.Message + " at t=" + sim.FormatMillis(d.Deadline)})
		}
		rows = append(rows, row)
	}
	return rows
}

// pauses are a worker's stopped spans, each clipped to the run.
func pauses(tl *sim.Timeline, name string) [][2]int64 {
	var out [][2]int64
	for _, e := range tl.Events {
		if e.Lane == name && e.Kind == "pause" {
			until := tl.End
			if m := pauseUntil.FindStringSubmatch(e.Text); m != nil {
				if ms, ok := parseMillis(m[1]); ok {
					until = ms
				}
			}
			out = append(out, [2]int64{e.T, until})
		}
	}
	return out
}

var pauseUntil = regexp.MustCompile(`until t=(\S+)`)

// parseMillis reads sim.FormatMillis's words back (950ms, 4.762s,
// 1m10s, 1m: Go duration strings).
func parseMillis(s string) (int64, bool) {
	d, err := time.ParseDuration(s)
	return d.Milliseconds(), err == nil
}

func pauseRow(tl *sim.Timeline, name string) report.LaneRow {
	row := report.LaneRow{Label: "paused"}
	for _, p := range pauses(tl, name) {
		to, title := min(p[1], tl.End), fmt.Sprintf("%s was paused (stop-the-world) from t=%s until t=%s", name, sim.FormatMillis(p[0]),
			sim.FormatMillis(p[1]))
		if p[1] > tl.End {
			title += ", past the end of the run: it did nothing in this span"
		}
		row.Bars = append(row.Bars, report.Bar{From: p[0], To: to, Kind: report.BarPaused, Title: title, Link: stepAt(tl, name, p[0], "pause")})
	}
	return row
}

// leaseRows are a worker's leases, one row each, named by the lock key.
func leaseRows(tl *sim.Timeline, wk int, name string) []report.LaneRow {
	var rows []report.LaneRow
	for _, ls := range tl.Leases {
		if ls.Worker != wk {
			continue
		}
		row := report.LaneRow{Label: ls.Lock}
		keyEnd, how := ls.Until, keyEndText(tl, ls)
		if ls.Ended == "" {
			keyEnd = tl.End
		}
		stopAt, stopped := holderStop(tl, name, ls.From, keyEnd)
		lease := report.Bar{From: ls.From, To: keyEnd, Kind: report.BarLease, Label: fmt.Sprintf("token %d", ls.Token), End: how,
			Title: fmt.Sprintf("%s's lease on %s, token %d, from t=%s: %s", name, ls.Lock, ls.Token, sim.FormatMillis(ls.From), how),
			Link:  stepAt(tl, name, ls.From, "lock")}
		if stopped != "" {
			lease.To, lease.End = stopAt, name+" "+stopped
			lease.Title = fmt.Sprintf("%s's lease on %s, token %d, from t=%s until %s %s at t=%s", name, ls.Lock, ls.Token,
				sim.FormatMillis(ls.From), name, stopped, sim.FormatMillis(stopAt))
			row.Bars = append(row.Bars, lease, report.Bar{From: stopAt, To: keyEnd, Kind: report.BarOrphan, End: how,
				Title: fmt.Sprintf("%s stayed in Redis (token %d) while %s was %s, until t=%s: %s", ls.Lock, ls.Token, name, stopped,
					sim.FormatMillis(keyEnd), how)})
		} else {
			row.Bars = append(row.Bars, lease)
		}
		if ls.Ended == "expired" || ls.Ended == "deleted" || ls.Ended == "lost" {
			for _, s := range acting(tl, name, ls.Until, ls.Believed) {
				row.Bars = append(row.Bars, report.Bar{From: s[0], To: s[1], Kind: report.BarBelieved,
					Title: fmt.Sprintf("token %d's lease was %s at t=%s, but %s acted as its holder from t=%s to t=%s", ls.Token, how,
						sim.FormatMillis(ls.Until), name, sim.FormatMillis(s[0]), sim.FormatMillis(s[1]))})
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// keyEndText says how a lease's key ended: released, expired, deleted by
// the worker whose DEL removed it, or held at the end of the run.
func keyEndText(tl *sim.Timeline, ls sim.Lease) string {
	switch ls.Ended {
	case "":
		return "held at the end of the run"
	case "lost":
		return "lost in a failover"
	case "deleted":
		who := fmt.Sprintf("W%d", ls.Worker+1)
		for _, e := range tl.Events {
			if e.T == ls.Until && e.Kind == "unlock" && strings.Contains(e.Text, "deleted the lock of "+who) {
				return "deleted by " + e.Lane
			}
		}
		return "deleted by another worker"
	}
	return ls.Ended
}

// holderStop is when a lease's holder crashed or paused while its key
// lasted, and which of the two ("" when it did neither).
func holderStop(tl *sim.Timeline, name string, from, keyEnd int64) (int64, string) {
	started := false
	for _, e := range tl.Events {
		if e.Lane != name {
			continue
		}
		if e.Kind == "lock" && e.T == from && strings.Contains(e.Text, "-> OK") {
			started = true
			continue
		}
		if !started || e.T >= keyEnd {
			continue
		}
		switch e.Kind {
		case "crash":
			return e.T, "crashed"
		case "pause":
			return e.T, "paused"
		}
	}
	return 0, ""
}

// acting are the spans from..until in which a worker was neither paused
// nor dead: where it could act as a holder it no longer was.
func acting(tl *sim.Timeline, name string, from, until int64) [][2]int64 {
	until = min(until, tl.End)
	for _, e := range tl.Events {
		if e.Lane == name && e.Kind == "crash" && e.T >= from {
			until = min(until, e.T)
			break
		}
	}
	spans := [][2]int64{{from, until}}
	for _, p := range pauses(tl, name) {
		var next [][2]int64
		for _, s := range spans {
			if p[1] <= s[0] || p[0] >= s[1] {
				next = append(next, s)
				continue
			}
			if p[0] > s[0] {
				next = append(next, [2]int64{s[0], p[0]})
			}
			if p[1] < s[1] {
				next = append(next, [2]int64{p[1], s[1]})
			}
		}
		spans = next
	}
	var out [][2]int64
	for _, s := range spans {
		if s[1] > s[0] {
			out = append(out, s)
		}
	}
	return out
}
