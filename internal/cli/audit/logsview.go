package audit

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

func count(n int64) string { return english.Number(n) }

// writeLogs is the table view of `audit logs`.
func writeLogs(w io.Writer, th *report.Theme, r *auditlogs.Result, o *LogsOptions) error {
	in := r.Input
	fmt.Fprintf(w, "%s %s %s read as %s, %s lines (%s unreadable), %s events\n", th.Strong("audit logs:"),
		count(int64(in.Sources)), english.Plural(in.Sources, "file", "files"), in.ReadAs(), count(in.Lines), count(in.Malformed), count(in.Events))
	fmt.Fprintf(w, "%s keys, %s side effects, %s %s with a duplicated side effect\n",
		count(int64(r.Keys)), count(r.Effects), count(int64(len(r.Duplicates))), english.Plural(len(r.Duplicates), "key", "keys"))
	if len(r.Causes) > 0 {
		fmt.Fprintln(w)
		t := report.NewTable("CAUSE", "KEYS").AlignRight(1)
		for _, c := range r.Causes {
			t.Row(c.Cause, count(int64(c.Count)))
		}
		if err := t.Render(w); err != nil {
			return err
		}
	}
	if err := writeMetrics(w, th, &r.Metrics); err != nil {
		return err
	}
	if o.Incident != "" && !hasTimeline(r, o.Incident) {
		fmt.Fprintf(w, "\n%s\n", th.Faint(fmt.Sprintf("--incident %s: no line carries this key", o.Incident)))
	}
	for _, tl := range r.Timelines {
		if err := writeTimeline(w, th, &tl); err != nil {
			return err
		}
	}
	return nil
}

func hasTimeline(r *auditlogs.Result, key string) bool {
	for _, t := range r.Timelines {
		if t.Key == key {
			return true
		}
	}
	return false
}

func writeMetrics(w io.Writer, th *report.Theme, m *auditlogs.Metrics) error {
	if len(m.JobTypes) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", th.Strong("Metrics"))
	t := report.NewTable("JOB TYPE", "MESSAGES", "LOCK OK", "LOCK BUSY", "EFFECTS", "CAUGHT", "RETRIES", "DLQ", "FAILURES", "P50", "P95", "P99", "MAX").AlignRight(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	for _, jt := range m.JobTypes {
		p50, p95, p99, mx := "-", "-", "-", "-"
		if d := jt.Duration; d != nil {
			p50, p95, p99, mx = dur(d.P50), dur(d.P95), dur(d.P99), dur(d.Max)
		}
		t.Row(jt.JobType, count(jt.Messages), count(jt.LockAcquired), count(jt.LockFailed), count(jt.SideEffects), count(jt.Caught),
			count(jt.Retries), count(jt.DeadLettered), count(jt.Failures), p50, p95, p99, mx)
	}
	if err := t.Render(w); err != nil {
		return err
	}
	var att []string
	for _, a := range m.DeliveriesByAttempt {
		label := fmt.Sprint(a.Attempt)
		if a.Attempt > 100 {
			label = "over 100"
		}
		att = append(att, fmt.Sprintf("%s: %s", label, count(a.Deliveries)))
	}
	if m.NoAttempt > 0 {
		att = append(att, fmt.Sprintf("no attempt logged: %s", count(m.NoAttempt)))
	}
	if len(att) > 0 {
		fmt.Fprintf(w, "Deliveries by attempt: %s\n", strings.Join(att, ", "))
	}
	fmt.Fprintf(w, "Duplicates caught by idempotency: %s; retries: %s; dead-lettered: %s; crashes: %s\n",
		count(m.DuplicatesCaught), count(m.Retries), count(m.DeadLettered), count(m.Crashes))
	if len(m.Errors) > 0 {
		var es []string
		for i, e := range m.Errors {
			if i == 8 {
				es = append(es, fmt.Sprintf("%d more", len(m.Errors)-i))
				break
			}
			es = append(es, fmt.Sprintf("%s %s (%.2f%%)", e.Type, count(e.Count), 100*e.Rate))
		}
		fmt.Fprintf(w, "Errors per delivery: %s\n", strings.Join(es, ", "))
	}
	return nil
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}

// writeTimeline draws a key's events as one lane (column) per worker.
func writeTimeline(w io.Writer, th *report.Theme, tl *auditlogs.Timeline) error {
	fmt.Fprintf(w, "\n%s\n", th.Strong("Timeline of "+tl.Key))
	header := []string{"TIME"}
	header = append(header, tl.Workers...)
	header = append(header, "DETAIL", "WHERE")
	t := report.NewTable(header...)
	for _, r := range tl.Rows {
		cells := make([]string, len(header))
		cells[0] = fmt.Sprintf("+%.3fs", r.Offset.Seconds())
		label := r.Event
		if r.Repeat {
			label = th.Mark(label + " AGAIN")
		}
		cells[1+r.Lane] = label
		cells[len(cells)-2] = r.Detail
		cells[len(cells)-1] = r.Where
		t.Row(cells...)
	}
	if len(tl.Rows) > 0 {
		fmt.Fprintf(w, "%s\n", th.Faint("t0 = "+tl.Rows[0].Time.UTC().Format("2006-01-02T15:04:05.000Z")))
	}
	return t.Render(w)
}

// writeExplain is the table view of --explain-mapping.
func writeExplain(w io.Writer, th *report.Theme, x *logs.Explanation) error {
	in := x.Input
	fmt.Fprintf(w, "%s %s %s read as %s, %s lines (%s unreadable), %s events\n", th.Strong("explain mapping:"),
		count(int64(in.Sources)), english.Plural(in.Sources, "file", "files"), in.ReadAs(), count(in.Lines), count(in.Malformed), count(in.Events))
	fmt.Fprintf(w, "\n%s\n", th.Strong("Fields (the JSON path each was read from)"))
	t := report.NewTable("FIELD", "PATH", "LINES").AlignRight(2)
	for _, u := range x.Fields {
		t.Row(u.Field, u.Path, count(u.Lines))
	}
	if err := t.Render(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", th.Strong("Events (which lines became which kind, and by what)"))
	t = report.NewTable("KIND", "LINES", "BY", "IN", "MATCHED", "EXAMPLE").AlignRight(1)
	for _, u := range x.Kinds {
		t.Row(u.Kind, count(u.Lines), u.By, u.In, u.Phrase, u.Example+" "+strconv.Quote(u.Text))
	}
	if err := t.Render(w); err != nil {
		return err
	}
	if x.OtherLines == 0 {
		if in.Malformed > 0 || in.Events == 0 {
			fmt.Fprintf(w, "\nEvery line read matched an event name or a phrase; %s %s could not be read as %s and %s not in these tables.\n",
				count(in.Malformed), english.Plural(in.Malformed, "line", "lines"), in.ReadAs(), english.Plural(in.Malformed, "is", "are"))
			return nil
		}
		fmt.Fprintf(w, "\nEvery line matched an event name or a phrase.\n")
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", th.Strong(fmt.Sprintf("Matched nothing: %s %s in %s message %s (the commonest first; add a phrase with --event KIND=PHRASE)",
		count(x.OtherLines), english.Plural(x.OtherLines, "line", "lines"), count(int64(x.OtherTemplates)), english.Plural(x.OtherTemplates, "template", "templates"))))
	t = report.NewTable("LINES", "TEMPLATE", "EXAMPLE").AlignRight(0)
	for _, u := range x.Other {
		t.Row(count(u.Lines), u.Template, u.Example+" "+strconv.Quote(u.Text))
	}
	return t.Render(w)
}

// maxTimelineEvents bounds one drawn timeline: past it, the first events
// are drawn and the rest said to be left out, so a page stays responsive.
const maxTimelineEvents = 10_000

// maxTimelines bounds how many keys' timelines one page draws.
const maxTimelines = 20

// writeLogsHTML draws each incident's timeline rebuilt from the log lines:
// a lane per worker, deliveries (received to acked, retried, dead-lettered
// or crashed) and lock holds as bars, every line as a mark, the second
// side effect highlighted, each mark linked to its row and the row to its
// file:line.
func writeLogsHTML(w io.Writer, r *auditlogs.Result, incident string) error {
	fmt.Fprintf(w, "<p>%s, %s, %s; %s with a duplicated side effect.</p>\n", english.Count(r.Input.Sources, "file", "files"),
		english.Count(r.Input.Lines, "line", "lines"), english.Count(r.Effects, "side effect", "side effects"), english.Count(len(r.Duplicates), "key", "keys"))
	if len(r.Timelines) == 0 {
		if incident != "" {
			fmt.Fprintf(w, "<p class=\"note\">No line names %s.</p>\n", report.Escape(incident))
		} else {
			io.WriteString(w, "<p class=\"note\">Give <code>--incident KEY</code> (or <code>-v</code> for every duplicate) to draw a key's timeline.</p>\n")
		}
		return nil
	}
	for i, tl := range r.Timelines {
		if i == maxTimelines {
			fmt.Fprintf(w, "<p class=\"note\">%d more timelines left out.</p>\n", len(r.Timelines)-maxTimelines)
			break
		}
		if err := writeIncidentHTML(w, &tl, i); err != nil {
			return err
		}
	}
	return nil
}

func writeIncidentHTML(w io.Writer, tl *auditlogs.Timeline, n int) error {
	rows := tl.Rows
	note := ""
	if len(rows) > maxTimelineEvents {
		note = fmt.Sprintf("the first %s of %s lines are drawn", english.Number(maxTimelineEvents), english.Number(len(rows)))
		rows = rows[:maxTimelineEvents]
	}
	anchor := func(i int) string { return fmt.Sprintf("#k%d-l%d", n, i) }
	var end int64 = 1
	for _, r := range rows {
		end = max(end, r.Offset.Milliseconds())
	}
	l := &report.Lanes{Title: "business key " + tl.Key + ", rebuilt from the logs", Start: 0, End: end, Note: note}
	effects, dups := 0, 0
	for lane, worker := range tl.Workers {
		deliv := report.LaneRow{Label: "deliveries"}
		lock := report.LaneRow{Label: "lock"}
		marks := report.LaneRow{Label: "lines"}
		openDeliv, openLock := -1, -1
		for i, r := range rows {
			if r.Lane != lane {
				continue
			}
			t := r.Offset.Milliseconds()
			title := fmt.Sprintf("%s +%s %s: %s %s (%s)", worker, r.Offset, r.Time.Format("15:04:05.000"), r.Event, r.Detail, r.Where)
			m := report.Mark{At: t, Kind: report.MarkOther, Title: title, Link: anchor(i)}
			switch r.Event {
			case "received":
				openDeliv = i
			case "acked", "retry", "dead_lettered", "crash":
				if openDeliv >= 0 {
					from := rows[openDeliv].Offset.Milliseconds()
					deliv.Bars = append(deliv.Bars, report.Bar{From: from, To: t, Kind: report.BarDelivery, Title: fmt.Sprintf("%s held the delivery from +%s to +%s, ended: %s", worker, rows[openDeliv].Offset, r.Offset, r.Event), Link: anchor(openDeliv)})
					openDeliv = -1
				}
			case "lock_acquired":
				openLock = i
			case "lock_released", "lock_lost":
				if openLock >= 0 {
					lock.Bars = append(lock.Bars, leaseBars(worker, rows[openLock], t, r.Event, anchor(openLock))...)
					openLock = -1
				}
			}
			switch r.Event {
			case "side_effect":
				effects++
				m.Kind = report.MarkEffect
				if r.Repeat {
					dups++
					m.Kind = report.MarkDuplicate
					m.Title = "SECOND SIDE EFFECT: " + title
				}
			case "crash":
				m.Kind = report.MarkCrash
			case "acked":
				m.Kind = report.MarkAck
			case "lock_lost":
				m.Kind = report.MarkExpire
			}
			marks.Marks = append(marks.Marks, m)
		}
		for _, open := range []struct {
			i   int
			row *report.LaneRow
			bar string
		}{{openDeliv, &deliv, report.BarDelivery}, {openLock, &lock, report.BarLease}} {
			switch {
			case open.i < 0:
			case open.bar == report.BarLease: // still held when the log ends
				open.row.Bars = append(open.row.Bars, leaseBars(worker, rows[open.i], end, "the end of the log", anchor(open.i))...)
			default:
				open.row.Bars = append(open.row.Bars, report.Bar{From: rows[open.i].Offset.Milliseconds(), To: end, Kind: open.bar, Title: worker + ": still open when the log ends", Link: anchor(open.i)})
			}
		}
		ln := report.Lane{Name: worker}
		for _, row := range []report.LaneRow{deliv, lock, marks} {
			if len(row.Bars)+len(row.Marks) > 0 {
				ln.Rows = append(ln.Rows, row)
			}
		}
		l.Lanes = append(l.Lanes, ln)
	}
	l.Desc = fmt.Sprintf("%s over %s: %s, %d of them a repeat.", english.Count(len(tl.Workers), "worker", "workers"), time.Duration(end)*time.Millisecond,
		english.Count(effects, "side effect", "side effects"), dups)
	fmt.Fprintf(w, "<h2>%s</h2>\n", report.Escape(tl.Key))
	if err := l.SVG(w); err != nil {
		return err
	}
	io.WriteString(w, "<details open><summary>lines</summary><table class=\"events\"><thead><tr><th scope=\"col\">offset</th><th scope=\"col\">worker</th><th scope=\"col\">event</th><th scope=\"col\">detail</th><th scope=\"col\">line</th></tr></thead><tbody>\n")
	for i, r := range rows {
		ev := report.Escape(r.Event)
		if r.Repeat {
			ev = "<strong>" + ev + " (again)</strong>"
		}
		fmt.Fprintf(w, "<tr id=\"%s\"><td>+%s</td><td>%s</td><td>%s</td><td>%s</td><td><code>%s</code></td></tr>\n", anchor(i)[1:], report.Escape(r.Offset.String()),
			report.Escape(r.Worker), ev, report.Escape(r.Detail), report.Escape(r.Where))
	}
	_, err := io.WriteString(w, "</tbody></table></details>\n")
	return err
}

var ttlInDetail = regexp.MustCompile(`\bttl=([0-9][0-9a-zµ.]*)`)

// leaseBars is one lock hold from its acquisition line to until (ms): the
// lease while its TTL (logged with the acquisition as ttl=...) lasted,
// then, if the holder went on past it, the span it acted as holder with
// no lock, hatched.
func leaseBars(worker string, acquired auditlogs.TimelineRow, until int64, how, link string) []report.Bar {
	from := acquired.Offset.Milliseconds()
	lease := report.Bar{From: from, To: until, Kind: report.BarLease, Title: fmt.Sprintf("%s held the lock from +%s (%s)", worker, acquired.Offset, how), Link: link}
	m := ttlInDetail.FindStringSubmatch(acquired.Detail)
	if m == nil {
		return []report.Bar{lease}
	}
	ttl, err := time.ParseDuration(m[1])
	if err != nil || from+ttl.Milliseconds() >= until {
		return []report.Bar{lease}
	}
	expiry := from + ttl.Milliseconds()
	lease.To = expiry
	lease.Title = fmt.Sprintf("%s's lock from +%s, TTL %s: it expired at +%s", worker, acquired.Offset, ttl, time.Duration(expiry)*time.Millisecond)
	return []report.Bar{lease, {From: expiry, To: until, Kind: report.BarBelieved, Link: link,
		Title: fmt.Sprintf("%s went on as the lock's holder after its TTL ran out, until %s", worker, how)}}
}
