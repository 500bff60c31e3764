package dlq

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/replay"
	"github.com/dupctl/dupctl/internal/replay/journal"
)

// A --yes replay's HTML: the terminal's summary, then the run as its
// journal tells it - a table of its parts (each --resume adds one) and
// lanes per part: the part itself from its start to how it ended (its
// end record's reason, or none: the process stopped after its last
// record), per destination each publish until its confirm or refusal
// (dashed where no outcome was recorded: in doubt) with its outcome, and
// the DLQ's own: skipped messages (already SUCCEEDED, no destination,
// held by the loop guard), acks a resumed part sent for an earlier part's
// publishes, acks that failed. Every time is one the journal wrote.

// partsGap: parts further apart than this (and than the parts before
// them last) are drawn on a picture of their own, so a resume hours
// later does not squash both into a few pixels.
const partsGap = time.Minute

func writeReplayHTML(w io.Writer, res *replay.ReplayResult, journalPath string) error {
	if err := report.TextHTML(w, func(wr io.Writer, th *report.Theme) error { return writeReplay(wr, th, res, journalPath) }); err != nil {
		return err
	}
	if res.DryRun || journalPath == "" {
		return nil
	}
	tl, err := readTimeline(journalPath)
	if err != nil {
		fmt.Fprintf(w, "<p class=\"note\">The run's picture is drawn from its journal, which could not be read: %s</p>\n",
			report.Escape(err.Error()))
		return nil
	}
	fmt.Fprintf(w, "<h2>The run, from its journal</h2>\n<p class=\"note\">run <code>%s</code>, journal <code>%s</code>: %s</p>\n",
		report.Escape(tl.Run), report.Escape(journalPath), report.Escape(english.Count(len(tl.Parts), "part", "parts")+
			" (each --resume, and each failover to another node, adds one)"))
	writePartsTable(w, tl)
	for i, g := range partGroups(tl.Parts) {
		if err := replayLanes(tl, g, i).SVG(w); err != nil {
			return err
		}
	}
	return nil
}

func readTimeline(path string) (*journal.Timeline, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return journal.ReadTimeline(fh)
}

// ended says how a part ended, in a few words.
func ended(p *journal.Part) string {
	switch {
	case !p.Ended:
		return "no end record: stopped after its last record (killed?)"
	case p.Why == "":
		return "ended"
	}
	return p.Why
}

// partsHeader are the parts table's columns and what each counts.
var partsHeader = [][2]string{
	{"part", "each --resume adds a part to the run"},
	{"started (UTC)", "the part's start record"},
	{"took", "from its start record to its end record, or to its last record when it has none"},
	{"how it ended", "its end record's reason; no end record: the process stopped (killed, or the machine went down)"},
	{"replayed", "publishes to a destination"},
	{"parked", "publishes to the parking queue"},
	{"confirmed", "publishes confirmed at their destination"},
	{"refused", "publishes returned (unroutable), nacked, or not published: left in the DLQ"},
	{"in doubt", "publishes whose confirm never came: they may be at their destination, their DLQ copy is still there"},
	{"done earlier", "messages an earlier part had already replayed"},
	{"skipped", "messages not replayed: already SUCCEEDED, no destination, held by the loop guard"},
	{"acks failed", "confirmed publishes whose DLQ ack failed"},
}

func writePartsTable(w io.Writer, tl *journal.Timeline) {
	io.WriteString(w, "<div class=\"scroll\"><table class=\"view parts\"><thead><tr>")
	for _, h := range partsHeader {
		class := " class=\"num\""
		if h[0] == "part" || h[0] == "started (UTC)" || h[0] == "how it ended" {
			class = ""
		}
		fmt.Fprintf(w, "<th scope=\"col\"%s title=\"%s\">%s</th>", class, report.Escape(h[1]), report.Escape(h[0]))
	}
	io.WriteString(w, "</tr></thead><tbody>\n")
	for i := range tl.Parts {
		p := &tl.Parts[i]
		kinds := map[string]int{}
		for _, pb := range p.Pubs {
			kinds[pb.Kind]++
		}
		o := p.Outcomes
		fmt.Fprintf(w, "<tr data-part=\"%d\"><td>%d%s</td><td>%s</td><td class=\"num\">%s</td><td>%s</td>"+
			"<td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td>"+
			"<td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td></tr>\n",
			p.N, p.N, map[bool]string{true: " (resumed)", false: ""}[p.N > 1], report.Escape(p.Start.UTC().Format("2006-01-02 15:04:05.000")),
			report.Escape(p.End.Sub(p.Start).Round(time.Millisecond).String()), report.Escape(ended(p)), kinds["replay"], kinds["park"],
			o[journal.OK], o[journal.Returned]+o[journal.Nacked], o[journal.Doubt]+o[""], doneEarlier(p), len(p.Skips), len(p.AckLost))
	}
	io.WriteString(w, "</tbody></table></div>\n")
	for _, p := range tl.Parts {
		if p.More > 0 {
			fmt.Fprintf(w, "<p class=\"note\">Part %d: the first %s publishes are drawn one by one and counted in the table's "+
				"replayed and parked columns; %s more are counted in its outcome columns only.</p>\n", p.N, english.Number(journal.MaxPubs),
				english.Number(int64(p.More)))
		}
	}
}

// doneEarlier is how many messages a part found already at their
// destination by an earlier part: its end record's count, or the acks it
// journaled for them when it has none.
func doneEarlier(p *journal.Part) int {
	if n, ok := p.Summary["already_done"]; ok {
		return n
	}
	return len(p.Acks)
}

// partGroups splits the parts where one starts long after the last ended.
func partGroups(parts []journal.Part) [][]journal.Part {
	var out [][]journal.Part
	for i, p := range parts {
		if i > 0 {
			g := out[len(out)-1]
			span := g[len(g)-1].End.Sub(g[0].Start)
			if gap := p.Start.Sub(g[len(g)-1].End); gap <= max(partsGap, span) {
				out[len(out)-1] = append(g, p)
				continue
			}
		}
		out = append(out, []journal.Part{p})
	}
	return out
}

// replayLegend says what the replay picture's bars and marks mean; a
// file's replay has no DLQ to ack in.
func replayLegend(file bool) []report.LegendItem {
	confirmed, left := "confirmed at its destination (its DLQ copy acked then)", "left in the DLQ"
	if file {
		confirmed, left = "confirmed at its destination", "not replayed"
	}
	return []report.LegendItem{
		{Bar: report.BarLease, Text: "a part of the run, from its start to how it ended"},
		{Bar: report.BarDelivery, Text: "a publish, from its journal record (written before the publish and any --rate wait) " +
			"to its confirm or refusal"},
		{Bar: report.BarOrphan, Text: "a publish with no outcome recorded (in doubt)"},
		{Mark: report.MarkAck, Text: confirmed},
		{Mark: report.MarkLockFailed, Text: "returned (unroutable), nacked or not published: " + left},
		{Mark: report.MarkExpire, Text: "in doubt: the connection went before the confirm"},
		{Mark: report.MarkCheck, Text: "skipped: already SUCCEEDED, no destination, or held by the loop guard"},
		{Mark: report.MarkRedelivery, Text: "a resumed part acks the DLQ copy of an earlier part's confirmed publish"},
		{Mark: report.MarkForeignDel, Text: "the DLQ ack failed"},
		{Mark: report.MarkPause, Text: "interrupted (Ctrl-C, --timeout)"},
		{Mark: report.MarkCrash, Text: "stopped with no end record"},
		{Mark: report.MarkOther, Text: "a part's start or end"},
		{Text: "◯ ringed: needs a person's attention"},
	}
}

// replayLanes draws a group of parts on one time axis, a lane each.
func replayLanes(tl *journal.Timeline, parts []journal.Part, n int) *report.Lanes {
	t0 := parts[0].Start
	ms := func(t time.Time) int64 { return t.Sub(t0).Milliseconds() }
	end := max(ms(parts[len(parts)-1].End), 1)
	nums := make([]string, len(parts))
	for i, p := range parts {
		nums[i] = fmt.Sprint(p.N)
	}
	l := &report.Lanes{ID: fmt.Sprintf("replay-%d-lanes", n), Start: 0, End: end, T0: t0, Legend: replayLegend(tl.File != ""),
		Title: fmt.Sprintf("replay run %s, %s %s, from its journal", tl.Run, english.Plural(len(parts), "part", "parts"),
			strings.Join(nums, ", "))}
	pubs, problems := 0, 0
	for i := range parts {
		p := &parts[i]
		ln := report.Lane{Name: partName(p)}
		ln.Rows = append(ln.Rows, partRow(p, ms))
		rows, np := destinationRows(p, ms)
		ln.Rows = append(ln.Rows, rows...)
		problems += np + len(p.AckLost)
		if row := dlqRow(p, ms); len(row.Marks) > 0 {
			ln.Rows = append(ln.Rows, row)
		}
		pubs += len(p.Pubs)
		l.Lanes = append(l.Lanes, ln)
	}
	// The span of the journal's records, not the command's run time (the
	// terminal's "over 144ms" counts connecting and settling too): said as
	// such, so the two figures do not read as one that disagrees.
	l.Desc = fmt.Sprintf("%s, the journal's records spanning %s: %s drawn, %s needing attention (returned, nacked, in doubt, "+
		"acks failed).",
		english.Count(len(parts), "part", "parts"), (time.Duration(end) * time.Millisecond).String(),
		english.Count(pubs, "publish", "publishes"), english.Number(int64(problems)))
	l.Note = "every time is one the journal wrote; a DLQ ack has no record of its own: it follows its publish's confirm at once"
	return l
}

func partName(p *journal.Part) string {
	if p.N > 1 {
		return fmt.Sprintf("part %d (--resume), started %s", p.N, p.Start.UTC().Format("15:04:05.000"))
	}
	return fmt.Sprintf("part 1, started %s", p.Start.UTC().Format("15:04:05.000"))
}

// partRow is the part's span and how it ended.
func partRow(p *journal.Part, ms func(time.Time) int64) report.LaneRow {
	how := ended(p)
	row := report.LaneRow{Label: "run"}
	row.Bars = append(row.Bars, report.Bar{From: ms(p.Start), To: ms(p.End), Kind: report.BarLease,
		Label: fmt.Sprintf("part %d", p.N), End: how,
		Title: fmt.Sprintf("part %d from %s to %s: %s", p.N, p.Start.UTC().Format(time.RFC3339Nano), p.End.UTC().Format(time.RFC3339Nano), how)})
	start := report.Mark{At: ms(p.Start), Kind: report.MarkOther, Title: fmt.Sprintf("part %d starts (%d messages in the DLQ)", p.N, p.Count)}
	stop := report.Mark{At: ms(p.End), Kind: report.MarkOther, Title: fmt.Sprintf("part %d ends: %s", p.N, how)}
	switch {
	case !p.Ended:
		stop.Kind, stop.Evidence = report.MarkCrash, true
		stop.Title = fmt.Sprintf("part %d wrote no end record: the process stopped after its last record at %s (killed, or the machine "+
			"went down); --resume continues it", p.N, p.End.UTC().Format(time.RFC3339Nano))
	case p.Why == "interrupted":
		stop.Kind = report.MarkPause
	}
	row.Marks = append(row.Marks, start, stop)
	return row
}

// destinationRows are a part's publishes, one row per destination (replay
// or park): each publish until its outcome, and the outcome; it returns
// how many need attention.
func destinationRows(p *journal.Part, ms func(time.Time) int64) ([]report.LaneRow, int) {
	byDest := map[string]*report.LaneRow{}
	var order []string
	problems := 0
	for _, pb := range p.Pubs {
		key := pb.Kind + "\x00" + pb.To
		row := byDest[key]
		if row == nil {
			row = &report.LaneRow{Label: "→ " + pb.To + " (" + pb.Kind + ")"}
			byDest[key], order = row, append(order, key)
		}
		what := fmt.Sprintf("%s %s (publish %d) to %s", pb.Kind, pb.ID, pb.Seq, pb.To)
		if pb.Of != 0 {
			what += fmt.Sprintf(", again for publish %d (--retry-in-doubt)", pb.Of)
		}
		if pb.Outcome == "" {
			problems++
			row.Bars = append(row.Bars, report.Bar{From: ms(pb.At), To: ms(p.End), Kind: report.BarOrphan,
				Title: what + ": no outcome recorded before the part stopped: in doubt (it may be at its destination; its DLQ copy is still there)"})
			continue
		}
		row.Bars = append(row.Bars, report.Bar{From: ms(pb.At), To: ms(pb.OutcomeAt), Kind: report.BarDelivery,
			Title: fmt.Sprintf("%s: published at %s, %s %s later", what, pb.At.UTC().Format("15:04:05.000"), pb.Outcome,
				pb.OutcomeAt.Sub(pb.At).Round(time.Millisecond))})
		m := report.Mark{At: ms(pb.OutcomeAt), Title: what + ": " + outcomeText(pb)}
		switch pb.Outcome {
		case journal.OK:
			m.Kind = report.MarkAck
		case journal.Returned, journal.Nacked:
			m.Kind, m.Label, m.Evidence = report.MarkLockFailed, pb.Outcome, true
			if strings.HasPrefix(pb.Why, "not published") {
				m.Label = "not published"
			}
		case journal.Doubt:
			m.Kind, m.Label, m.Evidence = report.MarkExpire, "in doubt", true
		}
		if m.Evidence {
			problems++
		}
		row.Marks = append(row.Marks, m)
	}
	sort.Strings(order)
	rows := make([]report.LaneRow, 0, len(order))
	for _, k := range order {
		rows = append(rows, *byDest[k])
	}
	return rows, problems
}

func outcomeText(pb journal.Publish) string {
	s := map[string]string{journal.OK: "confirmed at its destination; its DLQ copy acked", journal.Returned: "returned: left in the DLQ",
		journal.Nacked: "nacked by the broker: left in the DLQ", journal.Doubt: "in doubt: the connection went before the confirm"}[pb.Outcome]
	if pb.Outcome == journal.Returned && strings.HasPrefix(pb.Why, "not published") {
		s = "not published: left in the DLQ"
	}
	if pb.Why != "" {
		s += " (" + pb.Why + ")"
	}
	return s
}

// dlqRow is what a part did in the DLQ besides its publishes: skips,
// resumed acks, failed acks.
func dlqRow(p *journal.Part, ms func(time.Time) int64) report.LaneRow {
	row := report.LaneRow{Label: "DLQ"}
	for _, s := range p.Skips {
		label := "skipped"
		switch {
		case strings.HasPrefix(s.Why, "bounced"):
			label = "loop guard"
		case strings.Contains(s.Why, "SUCCEEDED"):
			label = "already done"
		case s.Why == "no destination":
			label = "no destination"
		}
		row.Marks = append(row.Marks, report.Mark{At: ms(s.At), Kind: report.MarkCheck, Label: label,
			Title: fmt.Sprintf("%s not replayed: %s", s.ID, s.Why), Evidence: label == "loop guard"})
	}
	for _, a := range p.Acks {
		row.Marks = append(row.Marks, report.Mark{At: ms(a.At), Kind: report.MarkRedelivery,
			Title: fmt.Sprintf("acked the DLQ copy of publish %d, which an earlier part confirmed", a.Seq)})
	}
	for _, a := range p.AckLost {
		row.Marks = append(row.Marks, report.Mark{At: ms(a.At), Kind: report.MarkForeignDel, Label: "ack failed", Evidence: true,
			Title: fmt.Sprintf("%s (publish %d) is at its destination, but its DLQ ack failed: %s", a.ID, a.Seq, a.Why)})
	}
	sort.SliceStable(row.Marks, func(i, j int) bool { return row.Marks[i].At < row.Marks[j].At })
	return row
}
