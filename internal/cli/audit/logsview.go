package audit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

func count(n int64) string { return english.Number(n) }

// writeRead is the first line of both views: what was read, and how.
func writeRead(w io.Writer, title string, in logs.Stats) {
	fmt.Fprintf(w, "%s %s %s read as %s, %s lines (%s unreadable), %s events\n", title,
		count(int64(in.Sources)), english.Plural(in.Sources, "file", "files"), in.ReadAs(),
		count(in.Lines), count(in.Malformed), count(in.Events))
}

// writeLogs is the table view of `audit logs`.
func writeLogs(w io.Writer, th *report.Theme, r *auditlogs.Result, o *LogsOptions) error {
	writeRead(w, th.Strong("audit logs:"), r.Input)
	if r.Follow != nil {
		writeFollowed(w, th, r.Follow)
	}
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
	for _, tl := range decidedFirst(r) {
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
	t := report.NewTable("JOB TYPE", "MESSAGES", "LOCK OK", "LOCK BUSY", "EFFECTS", "CAUGHT", "RETRIES", "DLQ", "FAILURES",
		"P50", "P95", "P99", "MAX").AlignRight(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
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
	writeRead(w, th.Strong("explain mapping:"), in)
	fmt.Fprintf(w, "\n%s\n", th.Strong("Fields (the JSON path each was read from)"))
	t := report.NewTable("FIELD", "PATH", "LINES").AlignRight(2)
	for _, u := range x.Fields {
		t.Row(u.Field, u.Path, count(u.Lines))
	}
	if err := t.Render(w); err != nil {
		return err
	}
	writeLearned(w, th, in.Inferred)
	fmt.Fprintf(w, "\n%s\n", th.Strong("Events (which lines became which kind, and by what)"))
	t = report.NewTable("KIND", "LINES", "BY", "IN", "MATCHED", "EXAMPLE").AlignRight(1)
	for _, u := range x.Kinds {
		t.Row(u.Kind, count(u.Lines), u.By, u.In, u.Phrase, u.Example+" "+strconv.Quote(u.Text))
	}
	if err := t.Render(w); err != nil {
		return err
	}
	writePrefilter(w, th, x.Prefilter)
	if x.OtherLines == 0 {
		if in.Malformed > 0 || in.Events == 0 {
			fmt.Fprintf(w, "\nEvery line read matched an event name or a phrase; %s %s could not be read as %s and %s not in these tables.\n",
				count(in.Malformed), english.Plural(in.Malformed, "line", "lines"), in.ReadAs(), english.Plural(in.Malformed, "is", "are"))
			return nil
		}
		fmt.Fprintf(w, "\nEvery line matched an event name or a phrase.\n")
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", th.Strong(fmt.Sprintf(
		"Matched nothing: %s %s in %s message %s (the commonest first; add a phrase with --event KIND=PHRASE)",
		count(x.OtherLines), english.Plural(x.OtherLines, "line", "lines"),
		count(int64(x.OtherTemplates)), english.Plural(x.OtherTemplates, "template", "templates"))))
	t = report.NewTable("LINES", "TEMPLATE", "EXAMPLE").AlignRight(0)
	for _, u := range x.Other {
		t.Row(count(u.Lines), u.Template, u.Example+" "+strconv.Quote(u.Text))
	}
	return t.Render(w)
}

// writePrefilter says whether an audit's second pass may pass over lines
// with a byte test, and which lines keep their chunk read whole.
func writePrefilter(w io.Writer, th *report.Theme, p logs.PrefilterUse) {
	fmt.Fprintf(w, "\n%s\n", th.Strong("Second pass (the lines of the duplicated keys, read again)"))
	if p.Verbatim == 0 {
		fmt.Fprintf(w, "  No line holds its business or idempotency key verbatim as a JSON member's string value, so no line is "+
			"passed over by a byte test: every chunk the second pass reads again is read whole, line by line.\n")
		return
	}
	names := make([]string, len(p.Members))
	for i, m := range p.Members {
		names[i] = strconv.Quote(m)
	}
	fmt.Fprintf(w, "  %s of %s lines hold their key verbatim as the string value of %s: in a chunk made only of such lines, "+
		"a line whose value there is no duplicated key is passed over by a byte test, never parsed.\n",
		count(p.Verbatim), count(p.Verbatim+p.Other), strings.Join(names, ", "))
	if p.Other > 0 {
		fmt.Fprintf(w, "  The other %s %s (no key, only a job or message id, a key inside another value or spelt with escapes, "+
			"a text layout) have their chunks read whole.\n", count(p.Other), english.Plural(p.Other, "line", "lines"))
	}
	fmt.Fprintf(w, "  Never under --follow, which reads each line once.\n")
}

// writeLearned says what a sample of the input taught the reader, and from
// what: who wrote the lines, where the business key is, how times without
// a year or date were completed, and the steps told by where a template
// sits in each key's sequence.
func writeLearned(w io.Writer, th *report.Theme, l *logs.Learned) {
	if l == nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n", th.Strong(fmt.Sprintf("Learned from the input (a sample of %s lines)", count(int64(l.Lines)))))
	fmt.Fprintf(w, "  %s\n", l.Worker.Reason)
	if l.Key.Reason != "" && (l.Key.Field != "" || l.Key.Mapped) {
		fmt.Fprintf(w, "  business key: %s\n", l.Key.Reason)
	}
	times := map[string]bool{}
	for _, s := range l.Sources {
		if s.Times != "" && !times[s.Times] {
			times[s.Times] = true
			fmt.Fprintf(w, "  times: %s\n", s.Times)
		}
	}
	for _, r := range l.Roles {
		if r.Phrase != "" {
			fmt.Fprintf(w, "  %s: %q (%s lines, confidence %.2f): %s\n", r.Role, r.Phrase, count(int64(r.Lines)), r.Confidence, r.Evidence)
		}
	}
	for _, m := range l.Missing {
		fmt.Fprintf(w, "  %s: no template was confidently this step\n", m.Role)
	}
}
