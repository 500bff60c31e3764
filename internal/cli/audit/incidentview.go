package audit

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// maxTimelineEvents bounds one drawn timeline: past it, the first events
// are drawn and the rest said to be left out, so a page stays responsive.
const maxTimelineEvents = 10_000

// maxTableLines bounds one incident's lines table: the lines the cause
// rests on and the repeated side effects always, then the first lines up
// to this many (every line is in -o json).
const maxTableLines = 1_000

// maxTimelines bounds how many keys' timelines one page draws.
const maxTimelines = 20

// writeLogsHTML draws each incident's timeline rebuilt from the log lines
// under its cause (code, title, explanation), with an index of the
// incidents first when there are several: a lane per worker, deliveries
// and lock holds (named by their key, ending where the key was released,
// lost, deleted by another worker or taken over, or where the holder
// crashed) as bars, every line as a mark, the deciding lines ringed, the
// second side effect on top, each mark linked to its row and the row to
// its file:line.
func writeLogsHTML(w io.Writer, r *auditlogs.Result, incident string) error {
	fmt.Fprintf(w, "<p>%s, %s, %s; %s with a duplicated side effect.</p>\n", english.Count(r.Input.Sources, "file", "files"),
		english.Count(r.Input.Lines, "line", "lines"), english.Count(r.Effects, "side effect", "side effects"),
		english.Count(len(r.Duplicates), "key", "keys"))
	if len(r.Timelines) == 0 {
		if incident != "" {
			fmt.Fprintf(w, "<p class=\"note\">No line names %s.</p>\n", report.Escape(incident))
		} else {
			io.WriteString(w, "<p class=\"note\">Give <code>--incident KEY</code> (or <code>-v</code> for every duplicate) to draw a key's "+
				"timeline.</p>\n")
		}
		return nil
	}
	ordered := decidedFirst(r)
	shown := ordered[:min(len(ordered), maxTimelines)]
	if len(shown) > 1 {
		writeIncidentIndex(w, r, shown)
	}
	for i := range shown {
		if err := writeIncidentHTML(w, &shown[i], duplicateOf(r, shown[i].Key), i); err != nil {
			return err
		}
	}
	if len(r.Timelines) > maxTimelines {
		fmt.Fprintf(w, "<p class=\"note\">%d more timelines left out.</p>\n", len(r.Timelines)-maxTimelines)
	}
	return nil
}

// decidedFirst is r's timelines with the incidents whose cause was decided
// first, then the undetermined, the unexplained, and keys without a
// duplicate, each group in the capability's order: a reader (and the
// page's first screens) meets what the logs prove before what they leave open.
func decidedFirst(r *auditlogs.Result) []auditlogs.Timeline {
	rank := map[string]int{} // (a key without a duplicate: 0 + 3)
	for i := range r.Duplicates {
		rank[r.Duplicates[i].Key] = causeRank(&r.Duplicates[i]) - 3
	}
	out := slices.Clone(r.Timelines)
	slices.SortStableFunc(out, func(a, b auditlogs.Timeline) int { return rank[a.Key] - rank[b.Key] })
	return out
}

func causeRank(d *auditlogs.Duplicate) int {
	switch {
	case d == nil:
		return 3
	case d.Cause == cause.RuleUnexplained.Code:
		return 2
	case d.Cause == cause.RuleUndetermined.Code:
		return 1
	}
	return 0
}

func duplicateOf(r *auditlogs.Result, key string) *auditlogs.Duplicate {
	for i := range r.Duplicates {
		if r.Duplicates[i].Key == key {
			return &r.Duplicates[i]
		}
	}
	return nil
}

// writeIncidentIndex is the table of the drawn incidents: key, cause,
// effects, workers, each linked to its section.
func writeIncidentIndex(w io.Writer, r *auditlogs.Result, tls []auditlogs.Timeline) {
	io.WriteString(w, "<nav class=\"index\"><h2>Incidents</h2><div class=\"scroll\"><table><thead><tr><th scope=\"col\">key</th><th "+
		"scope=\"col\">cause</th>"+
		"<th class=\"num\" scope=\"col\">side effects</th><th scope=\"col\">workers</th><th class=\"num\" scope=\"col\">lines</th></tr>"+
		"</thead><tbody>\n")
	for i, tl := range tls {
		code, effects := "-", "-"
		if d := duplicateOf(r, tl.Key); d != nil {
			code, effects = d.Cause, fmt.Sprint(d.Effects)
		}
		fmt.Fprintf(w, "<tr><td><a href=\"#incident-%d\">%s</a></td><td><code>%s</code></td><td class=\"num\">%s</td><td>%s</td><td "+
			"class=\"num\">%s</td></tr>\n",
			i, report.Escape(tl.Key), report.Escape(code), effects, report.Escape(strings.Join(tl.Workers, ", ")),
			english.Number(int64(len(tl.Rows))))
	}
	io.WriteString(w, "</tbody></table></div></nav>\n")
}

var causeTitles = func() map[string]string {
	m := map[string]string{}
	for _, r := range cause.Rules() {
		m[r.Code] = r.Title
	}
	return m
}()

func incidentCause(d *auditlogs.Duplicate) *report.Cause {
	if d == nil || d.Cause == "" {
		return nil
	}
	return &report.Cause{Code: d.Cause, Title: causeTitles[d.Cause], Sentence: d.Explanation, Link: report.CodeAnchor(d.Cause)}
}

// evidenceLines are the file:line of every line the cause rests on.
func evidenceLines(d *auditlogs.Duplicate) map[string]bool {
	out := map[string]bool{}
	if d == nil {
		return out
	}
	for _, p := range d.Pairs {
		for _, e := range p.Evidence {
			out[e.Where] = true
		}
	}
	return out
}

func writeIncidentHTML(w io.Writer, tl *auditlogs.Timeline, d *auditlogs.Duplicate, n int) error {
	rows := tl.Rows
	note := ""
	if len(rows) > maxTimelineEvents {
		note = fmt.Sprintf("the first %s of %s lines are drawn", english.Number(maxTimelineEvents), english.Number(len(rows)))
		rows = rows[:maxTimelineEvents]
	}
	l := incidentLanes(tl, rows, d, n)
	l.Note = note
	fmt.Fprintf(w, "<section class=\"incident\" id=\"incident-%d\"><h2>%s</h2>\n", n, report.Escape(tl.Key))
	if err := l.SVG(w); err != nil {
		return err
	}
	writeIncidentLines(w, rows, evidenceLines(d), n)
	_, err := io.WriteString(w, "</section>\n")
	return err
}

func lineAnchor(n, i int) string { return fmt.Sprintf("#k%d-l%d", n, i) }

// writeIncidentLines is the lines table, bounded: the deciding lines and
// the repeats always, then the first lines up to maxTableLines.
func writeIncidentLines(w io.Writer, rows []auditlogs.TimelineRow, decisive map[string]bool, n int) {
	io.WriteString(w, "<details open><summary>lines</summary><div class=\"scroll\"><table class=\"events\"><thead><tr><th scope=\"col\">"+
		"offset</th>"+
		"<th scope=\"col\">worker</th><th scope=\"col\">event</th><th scope=\"col\">detail</th>"+
		"<th scope=\"col\">line</th></tr></thead><tbody>\n")
	listed := tableLines(rows, decisive)
	written := 0
	for i, r := range rows {
		if !listed[i] {
			continue
		}
		written++
		ev := report.Escape(r.Event)
		if r.Repeat {
			ev = "<strong>" + ev + " (again)</strong>"
		}
		if decisive[r.Where] {
			ev += " <span class=\"badge info\">evidence</span>"
		}
		fmt.Fprintf(w, "<tr id=\"%s\"><td>+%s</td><td>%s</td><td>%s</td><td>%s</td><td><code>%s</code></td></tr>\n", lineAnchor(n, i)[1:],
			report.Escape(r.Offset.String()), report.Escape(r.Worker), ev, report.Escape(r.Detail), report.Escape(r.Where))
	}
	io.WriteString(w, "</tbody></table></div>")
	if left := len(rows) - written; left > 0 {
		fmt.Fprintf(w, "<p class=\"note\">%s of %s are listed (the lines the cause rests on and the repeated side effects first, then the "+
			"first lines); "+
			"%s more are in <code>-o json</code>.</p>", english.Number(int64(written)), english.Count(len(rows), "line", "lines"),
			english.Number(int64(left)))
	}
	io.WriteString(w, "</details>\n")
}

// tableLines chooses the lines the table lists, at most maxTableLines:
// the deciding lines and the repeated side effects first (up to half),
// then the first lines.
func tableLines(rows []auditlogs.TimelineRow, decisive map[string]bool) map[int]bool {
	out := map[int]bool{}
	for i, r := range rows {
		if len(out) == maxTableLines/2 {
			break
		}
		if decisive[r.Where] || r.Repeat {
			out[i] = true
		}
	}
	for i := 0; i < len(rows) && len(out) < maxTableLines; i++ {
		out[i] = true
	}
	return out
}

func ms(d time.Duration) int64 { return d.Milliseconds() }
