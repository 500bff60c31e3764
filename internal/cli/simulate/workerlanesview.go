package simulate

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

// A --worker run's HTML: the terminal view, then per run a section with
// its lanes, drawn only from what dupctl saw - the proxies' commands, the
// processes it started, stopped and killed, and the effects log's lines:
// one lane per worker copy (a restarted process stays on its copy's lane)
// with its deliveries, its locks (ending where they were released,
// deleted by another copy or ran out their TTL, or where the holder was
// stopped or killed), its reads, writes and commits, the fault where it
// was injected, the side effects, the second one on top; the cause and
// the events it rests on ringed; every mark linked to its row of the
// events table. A time dupctl did not see is said so, never drawn as if
// it had been.

const (
	// maxWorkerRuns bounds the runs one page draws (every run is in -o
	// json).
	maxWorkerRuns = 40
	// maxWorkerTable bounds one run's events table: the deciding events
	// and the fault first, then the first events.
	maxWorkerTable = 1_000
	// deliveryRowsMax: past this many deliveries a copy's deliveries
	// share one row (a worker that bounces a busy lock for seconds).
	deliveryRowsMax = 12
)

func writeWorkerHTML(w io.Writer, sc *sim.Scenario, res *chaos.Result) error {
	if err := report.TextHTML(w, func(wr io.Writer, th *report.Theme) error { return writeWorkerRuns(wr, th, sc, res) }); err != nil {
		return err
	}
	runs := res.Runs[:min(len(res.Runs), maxWorkerRuns)]
	for i := range runs {
		rr := &runs[i]
		fmt.Fprintf(w, "<section class=\"incident\" id=\"run-%d\"><h2>seed %d: %s - %s</h2>\n", i, rr.Seed, report.Escape(rr.Plan.String()),
			report.Escape(rr.Outcome))
		if rr.Replay != "" {
			fmt.Fprintf(w, "<p class=\"note\">replay: <code>%s</code></p>\n", report.Escape(rr.Replay))
		}
		wl := newWorkerLanes(res, rr, i)
		if err := wl.lanes().SVG(w); err != nil {
			return err
		}
		wl.writeEvents(w)
		io.WriteString(w, "</section>\n")
	}
	if len(res.Runs) > len(runs) {
		fmt.Fprintf(w, "<p class=\"note\">%d more runs are in <code>-o json</code>.</p>\n", len(res.Runs)-len(runs))
	}
	return nil
}

// workerLanes builds one run's picture.
type workerLanes struct {
	res      *chaos.Result
	rr       *chaos.RunResult
	n        int
	end      int64
	deciding map[int]bool // the events the picture's cause rests on
	focus    *chaos.KeyVerdict
	bySeq    map[int]chaos.Event
	// num is each event's place (by Seq) and effNum each effect line's
	// (by index in rr.Effects) in the run's order by time: the numbers
	// of the event-order strip and of the events table.
	num    map[int]int
	effNum map[int]int
	notes  []string
}

func newWorkerLanes(res *chaos.Result, rr *chaos.RunResult, n int) *workerLanes {
	wl := &workerLanes{res: res, rr: rr, n: n, end: 1, deciding: map[int]bool{}, bySeq: map[int]chaos.Event{}}
	for _, e := range rr.Events {
		wl.end = max(wl.end, e.T)
		wl.bySeq[e.Seq] = e
	}
	for _, d := range rr.Deliveries {
		wl.end = max(wl.end, d.To)
	}
	wl.number()
	wl.focus = focusKey(rr)
	if wl.focus != nil {
		for _, s := range wl.focus.Deciding {
			wl.deciding[s] = true
		}
	}
	return wl
}

// number places the events (already in time order) and the timed effect
// lines, each after the events of its millisecond, in one order.
func (wl *workerLanes) number() {
	wl.num, wl.effNum = map[int]int{}, map[int]int{}
	var effs []int
	for i, el := range wl.rr.Effects {
		if el.T != nil {
			effs = append(effs, i)
		}
	}
	slices.SortStableFunc(effs, func(a, b int) int { return int(*wl.rr.Effects[a].T - *wl.rr.Effects[b].T) })
	n := 0
	for _, e := range wl.rr.Events {
		for len(effs) > 0 && *wl.rr.Effects[effs[0]].T < e.T {
			n++
			wl.effNum[effs[0]], effs = n, effs[1:]
		}
		n++
		wl.num[e.Seq] = n
	}
	for _, i := range effs {
		n++
		wl.effNum[i] = n
	}
}

// focusKey is the key whose verdict the picture's cause line gives: the
// first duplicate (the victim's first), else the first loss, else the
// first other failing key.
func focusKey(rr *chaos.RunResult) *chaos.KeyVerdict {
	rank := func(kv *chaos.KeyVerdict) int {
		r := 4
		switch kv.Outcome {
		case chaos.OutcomeDup:
			r = 0
		case chaos.OutcomeLoss:
			r = 2
		}
		if kv.Key != rr.Plan.Victim {
			r++
		}
		return r
	}
	var best *chaos.KeyVerdict
	for i := range rr.Keys {
		kv := &rr.Keys[i]
		if kv.Outcome == chaos.OutcomeOK || kv.Why == "" {
			continue
		}
		if best == nil || rank(kv) < rank(best) {
			best = kv
		}
	}
	return best
}

var ruleTitles = func() map[string]string {
	m := map[string]string{}
	for _, r := range append(cause.Rules(), chaos.Rules()...) {
		m[r.Code] = r.Title
	}
	return m
}()

// cause is the line above the picture: the focus key's cause (or loss),
// else a fault whose scenario never happened.
func (wl *workerLanes) cause() *report.Cause {
	rr := wl.rr
	if kv := wl.focus; kv != nil {
		code := kv.Cause
		if code == "" {
			return &report.Cause{Code: kv.Outcome, Title: kv.Key, Sentence: kv.Why}
		}
		return &report.Cause{Code: code, Title: ruleTitles[code], Sentence: kv.Key + ": " + kv.Why, Link: report.CodeAnchor(code)}
	}
	if rr.Fault == nil && rr.Missing != "" {
		code := chaos.RuleNotReached.Code
		return &report.Cause{Code: code, Title: ruleTitles[code], Sentence: rr.Missing + ": the run proves nothing about it",
			Link: report.CodeAnchor(code)}
	}
	return nil
}

func slotOf(lane string) string {
	s, _, _ := strings.Cut(lane, "#")
	return s
}

// instText is "" for a copy's first process and "#2 " for its restart.
func instText(lane string) string {
	if _, inst, ok := strings.Cut(lane, "#"); ok {
		return "#" + inst + " "
	}
	return ""
}

func (wl *workerLanes) link(seq int) string {
	if seq <= 0 {
		return ""
	}
	return fmt.Sprintf("#run-%d-ev-%d", wl.n, seq)
}

func (wl *workerLanes) lanes() *report.Lanes {
	rr := wl.rr
	l := &report.Lanes{ID: fmt.Sprintf("run-%d-lanes", wl.n),
		Title: fmt.Sprintf("seed %d, %s, on your worker: what dupctl saw", rr.Seed, rr.Plan),
		Start: 0, End: wl.end, T0: rr.Start, Cause: wl.cause()}
	effects := wl.effectMarks()
	for n := 1; n <= wl.res.Workers; n++ {
		slot := fmt.Sprintf("W%d", n)
		ln := report.Lane{Name: slot}
		if row := wl.processRow(slot); len(row.Marks)+len(row.Bars) > 0 {
			ln.Rows = append(ln.Rows, row)
		}
		ln.Rows = append(ln.Rows, wl.deliveryRows(slot)...)
		ln.Rows = append(ln.Rows, wl.leaseRows(slot)...)
		if row := wl.stepsRow(slot); len(row.Marks) > 0 {
			ln.Rows = append(ln.Rows, row)
		}
		if row := effects[slot]; len(row.Marks) > 0 {
			ln.Rows = append(ln.Rows, row)
		}
		l.Lanes = append(l.Lanes, ln)
	}
	if row := effects[""]; len(row.Marks) > 0 {
		l.Lanes = append(l.Lanes, report.Lane{Name: "effects log (copy not named)", Rows: []report.LaneRow{row}})
	}
	if row := wl.dupctlRow(); len(row.Marks) > 0 {
		l.Lanes = append(l.Lanes, report.Lane{Name: "dupctl", Rows: []report.LaneRow{row}})
	}
	wl.describe(l)
	return l
}

// describe writes the picture's text equivalent and what it could not
// see.
func (wl *workerLanes) describe(l *report.Lanes) {
	rr := wl.rr
	fault := "the fault never came"
	if f := wl.faultEvent(); f != nil {
		fault = fmt.Sprintf("the fault at t=%s on %s", sim.FormatMillis(f.T), f.Lane)
	}
	l.Desc = fmt.Sprintf("%s over %s: %s, %s, %s; outcome %s.", english.Count(wl.res.Workers, "worker copy", "worker copies"),
		sim.FormatMillis(wl.end), english.Count(len(rr.Deliveries), "delivery", "deliveries"), english.Count(len(rr.Leases), "lock", "locks"),
		fault, rr.Outcome)
	if l.Cause != nil {
		l.Desc += " Cause: " + l.Cause.Code + "."
	}
	for _, ls := range rr.Leases {
		if end, how, _ := leaseEnd(ls, wl.end); how == "expired" && end < wl.end {
			wl.notes = append(wl.notes, "a lock's expiry is computed, its TTL counted from the last take or renewal dupctl saw: Redis "+
				"expires a key without a word on the wire")
			break
		}
	}
	l.Note = strings.Join(wl.notes, "; ")
}

func (wl *workerLanes) faultEvent() *chaos.Event {
	for i := range wl.rr.Events {
		if wl.rr.Events[i].Fault {
			return &wl.rr.Events[i]
		}
	}
	return nil
}

// mark is one event as a mark of a kind, ringed when the cause rests on
// it.
func (wl *workerLanes) mark(e chaos.Event, kind, label string) report.Mark {
	return report.Mark{At: e.T, Kind: kind, Label: label, Seq: wl.num[e.Seq], Link: wl.link(e.Seq), Evidence: wl.deciding[e.Seq],
		Title: fmt.Sprintf("t=%s %s: %s", sim.FormatMillis(e.T), e.Lane, e.Text)}
}

// processRow is a copy's processes: each start, each exit, the fault
// that fell on it, and a stop as a bar until dupctl resumed it.
func (wl *workerLanes) processRow(slot string) report.LaneRow {
	row := report.LaneRow{Label: "process"}
	rr := wl.rr
	for _, e := range rr.Events {
		if slotOf(e.Lane) != slot {
			continue
		}
		switch {
		case e.Fault:
			row.Marks = append(row.Marks, wl.faultMark(e))
			if rr.Plan.Fault == chaos.Stop {
				row.Bars = append(row.Bars, wl.pauseBar(e))
			}
		case e.Kind == "start" && instText(e.Lane) != "":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "restarted"))
		case e.Kind == "exit" && e.Text == "killed":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, ""))
		case e.Kind == "exit":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkCrash, "exits"))
		case e.Kind == "resume":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "resumed"))
		}
	}
	return row
}

// faultMark is the injected fault: a kill or a dropped connection as a
// crash, a stop as a pause, anything else (a second message, a lagging
// cache) as a step; always labelled as the fault.
func (wl *workerLanes) faultMark(e chaos.Event) report.Mark {
	kind, label := report.MarkOther, "fault: "+string(wl.rr.Plan.Fault)
	switch wl.rr.Plan.Fault {
	case chaos.Kill:
		kind, label = report.MarkCrash, "fault: SIGKILL"
	case chaos.Stop:
		kind, label = report.MarkPause, "fault: SIGSTOP"
	case chaos.Close:
		kind, label = report.MarkCrash, "fault: connection dropped"
	case chaos.Failover:
		kind, label = report.MarkExpire, "fault: Redis failover"
	case chaos.LagReplica:
		label = "fault: replica lags"
	}
	m := wl.mark(e, kind, label)
	m.Title = "THE FAULT: " + m.Title
	return m
}

// pauseBar is a stopped copy, from the fault until dupctl resumed it (or
// the end of the run).
func (wl *workerLanes) pauseBar(f chaos.Event) report.Bar {
	to, how := wl.end, "still stopped at the end of the run"
	for _, e := range wl.rr.Events {
		if e.Kind == "resume" && e.Lane == f.Lane && e.T >= f.T {
			to, how = e.T, "resumed (SIGCONT) at t="+sim.FormatMillis(e.T)
			break
		}
	}
	return report.Bar{From: f.T, To: to, Kind: report.BarPaused, Link: wl.link(f.Seq),
		Title: fmt.Sprintf("%s was stopped (SIGSTOP) by dupctl from t=%s: %s", f.Lane, sim.FormatMillis(f.T), how)}
}

// stopOf is when a copy's process stopped acting between from and to:
// the fault that stopped or killed it, or its exit; "" when it did not.
func (wl *workerLanes) stopOf(lane string, from, to int64) (int64, string) {
	for _, e := range wl.rr.Events {
		if e.Lane != lane || e.T < from || e.T >= to {
			continue
		}
		switch {
		case e.Fault && wl.rr.Plan.Fault == chaos.Stop:
			return e.T, "stopped"
		case e.Fault && wl.rr.Plan.Fault == chaos.Kill, e.Kind == "exit":
			return e.T, "killed"
		}
	}
	return 0, ""
}

// endWords say how a delivery ended, at its bar's end; labelWords the
// same in a row label's few letters.
var (
	endWords = map[string]string{"ack": "acked", "requeued": "requeued", "rejected": "rejected", "returned": "connection closed unacked",
		"auto-ack": "auto-ack", "": "still open at the end"}
	labelWords = map[string]string{"ack": "acked", "requeued": "requeued", "rejected": "rejected", "returned": "unacked",
		"auto-ack": "auto-ack", "": "open"}
)

// deliveryRows are a copy's deliveries: one row each (one shared row past
// deliveryRowsMax), a bar from the deliver to how it ended, a redelivery
// mark, the ack.
func (wl *workerLanes) deliveryRows(slot string) []report.LaneRow {
	var ds []chaos.Delivery
	for _, d := range wl.rr.Deliveries {
		if slotOf(d.Lane) == slot {
			ds = append(ds, d)
		}
	}
	shared := len(ds) > deliveryRowsMax
	var rows []report.LaneRow
	if shared {
		rows = append(rows, report.LaneRow{Label: english.Count(len(ds), "delivery", "deliveries")})
	}
	for _, d := range ds {
		row := report.LaneRow{Label: instText(d.Lane) + d.Key + " (" + labelWords[d.End] + ")"}
		end := endWords[d.End]
		bar := report.Bar{From: d.From, To: d.To, Kind: report.BarDelivery, End: end, Link: wl.link(d.Seq),
			Title: fmt.Sprintf("%s held a delivery of %s from t=%s to t=%s: %s", d.Lane, d.Key, sim.FormatMillis(d.From), sim.FormatMillis(d.To),
				end)}
		if d.End == "ack" && d.EndSeq != d.Seq {
			bar.End = "" // the ack's own mark says it
		}
		row.Bars = append(row.Bars, bar)
		if e, ok := wl.bySeq[d.Seq]; ok && (d.Redelivered || wl.deciding[d.Seq]) {
			kind, label := report.MarkOther, "delivered"
			if d.Redelivered {
				kind, label = report.MarkRedelivery, "redelivered"
			}
			row.Marks = append(row.Marks, wl.mark(e, kind, label))
		}
		if e, ok := wl.bySeq[d.EndSeq]; ok && d.EndSeq != d.Seq {
			switch d.End {
			case "ack":
				row.Marks = append(row.Marks, wl.mark(e, report.MarkAck, ""))
			case "returned":
				row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, ""))
			default:
				row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, d.End))
			}
		}
		if shared {
			row.Bars[0].End = ""
			rows[0].Bars = append(rows[0].Bars, row.Bars...)
			rows[0].Marks = append(rows[0].Marks, row.Marks...)
			continue
		}
		rows = append(rows, row)
	}
	return rows
}

// leaseEnd is when a lease's key stopped being its holder's and how:
// released, deleted by another copy, expired (computed from its TTL), or
// held at the end of the run.
func leaseEnd(ls chaos.Lease, runEnd int64) (int64, string, int64) {
	end, how := runEnd, "held at the end of the run"
	if ls.TTL > 0 && ls.Expires < end {
		end, how = ls.Expires, "expired"
	}
	if ls.Released != nil && *ls.Released <= end {
		end, how = *ls.Released, "released"
	}
	if ls.Deleted != nil && *ls.Deleted <= end {
		end, how = *ls.Deleted, "deleted by "+ls.DeletedBy
	}
	return end, how, ls.TTL
}

// leaseRows are a copy's locks, one row each named by its key: the lease
// until its key ended, cut where the holder was stopped or killed (the
// key left behind dashed), and hatched where the holder went on with the
// delivery after the key had expired or been deleted.
func (wl *workerLanes) leaseRows(slot string) []report.LaneRow {
	var rows []report.LaneRow
	for _, ls := range wl.rr.Leases {
		if slotOf(ls.Lane) != slot {
			continue
		}
		keyEnd, how, ttl := leaseEnd(ls, wl.end)
		endText := how
		if how == "expired" {
			endText = fmt.Sprintf("expired (TTL %s, computed)", sim.FormatMillis(ttl))
		}
		row := report.LaneRow{Label: instText(ls.Lane) + ls.Lock}
		ttlText := "no TTL"
		if ttl > 0 {
			ttlText = "TTL " + sim.FormatMillis(ttl)
		}
		lease := report.Bar{From: ls.From, To: keyEnd, Kind: report.BarLease, Label: ttlText, End: endText, Link: wl.link(ls.Seq),
			Title: fmt.Sprintf("%s took %s at t=%s (%s): %s at t=%s%s", ls.Lane, ls.Lock, sim.FormatMillis(ls.From), ttlText, how,
				sim.FormatMillis(keyEnd), computedText(how))}
		if stopAt, stopped := wl.stopOf(ls.Lane, ls.From, keyEnd); stopped != "" {
			lease.To, lease.End = stopAt, ls.Lane+" "+stopped
			lease.Title = fmt.Sprintf("%s took %s at t=%s (%s) and was %s by dupctl at t=%s", ls.Lane, ls.Lock, sim.FormatMillis(ls.From), ttlText,
				stopped, sim.FormatMillis(stopAt))
			row.Bars = append(row.Bars, lease, report.Bar{From: stopAt, To: keyEnd, Kind: report.BarOrphan, End: endText,
				Title: fmt.Sprintf("%s stayed in Redis while %s was %s, until t=%s: %s%s", ls.Lock, ls.Lane, stopped, sim.FormatMillis(keyEnd),
					how, computedText(how))})
		} else {
			row.Bars = append(row.Bars, lease)
		}
		if how == "expired" || strings.HasPrefix(how, "deleted") {
			row.Bars = append(row.Bars, wl.believed(ls, keyEnd, how)...)
		}
		if e, ok := wl.bySeq[ls.Seq]; ok && wl.deciding[ls.Seq] {
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, ""))
		}
		rows = append(rows, row)
	}
	return rows
}

func computedText(how string) string {
	if how == "expired" {
		return " (computed from the TTL: Redis's expiry is not on the wire)"
	}
	return ""
}

// believed are the spans after a lease's key ended in which its holder,
// running, still had the delivery the lock was for open: it went on as
// the holder of a lock it no longer had.
func (wl *workerLanes) believed(ls chaos.Lease, keyEnd int64, how string) []report.Bar {
	var out []report.Bar
	for _, d := range wl.rr.Deliveries {
		if d.Lane != ls.Lane || d.Key != ls.Key || d.From > ls.From || d.To <= keyEnd {
			continue
		}
		to := d.To
		if stopAt, stopped := wl.stopOf(ls.Lane, keyEnd, to); stopped == "killed" {
			to = stopAt
		}
		for _, sp := range wl.running(ls.Lane, keyEnd, to) {
			out = append(out, report.Bar{From: sp[0], To: sp[1], Kind: report.BarBelieved,
				Title: fmt.Sprintf("%s's lock %s %s at t=%s%s, but %s, running, still had %s's delivery open from t=%s to t=%s", ls.Lane, ls.Lock,
					how, sim.FormatMillis(keyEnd), computedText(how), ls.Lane, ls.Key, sim.FormatMillis(sp[0]), sim.FormatMillis(sp[1]))})
		}
	}
	return out
}

// running are the spans of from..to in which a copy was not stopped by
// dupctl.
func (wl *workerLanes) running(lane string, from, to int64) [][2]int64 {
	spans := [][2]int64{{from, to}}
	if f := wl.faultEvent(); f != nil && f.Lane == lane && wl.rr.Plan.Fault == chaos.Stop {
		p := wl.pauseBar(*f)
		var next [][2]int64
		for _, s := range spans {
			if p.To <= s[0] || p.From >= s[1] {
				next = append(next, s)
				continue
			}
			if p.From > s[0] {
				next = append(next, [2]int64{s[0], p.From})
			}
			if p.To < s[1] {
				next = append(next, [2]int64{p.To, s[1]})
			}
		}
		spans = next
	}
	return slices.DeleteFunc(spans, func(s [2]int64) bool { return s[1] <= s[0] })
}

// stepsRow is a copy's reads, writes, failed locks, unlocks and the
// others' locks it deleted: each its own glyph, with its answer.
func (wl *workerLanes) stepsRow(slot string) report.LaneRow {
	row := report.LaneRow{Label: "steps"}
	sqlEffects := wl.rr.EffectsFrom == chaos.EffectsSQL
	for _, e := range wl.rr.Events {
		if slotOf(e.Lane) != slot || e.Fault {
			continue
		}
		kind, label := "", ""
		switch e.Kind {
		case "busy":
			kind, label = report.MarkLockFailed, "busy"
		case "read":
			kind, label = readMark(e.Text)
		case "stale-read":
			kind, label = report.MarkCacheRead, "cache: stale"
		case "replica-read":
			kind, label = report.MarkCheck, "replica read"
		case "stale-replica-read":
			kind, label = report.MarkCacheRead, "replica: stale"
		case "write":
			kind, label = report.MarkOther, "write"
		case "commit":
			if sqlEffects {
				continue // drawn as the side effects
			}
			kind, label = report.MarkOther, "commit"
		case "unlock":
			kind, label = report.MarkOther, "unlock"
		case "unlock-foreign":
			kind, label = report.MarkForeignDel, "DEL of another's lock"
		case "republish":
			kind, label = report.MarkRedelivery, "republished"
		case "cache-held":
			kind, label = report.MarkOther, "cache write held back"
		default:
			continue
		}
		row.Marks = append(row.Marks, wl.mark(e, kind, label))
	}
	return row
}

// readMark is a read as a check: a Redis read as a cache read with its
// answer, a SQL read as an idempotency check (its answer is not on the
// wire dupctl reads).
func readMark(text string) (string, string) {
	if _, answer, ok := strings.Cut(text, " -> "); ok {
		word := answer
		if len([]rune(word)) > 14 {
			word = string([]rune(word)[:14]) + "…"
		}
		return report.MarkCacheRead, "cache: " + word
	}
	return report.MarkCheck, "read"
}

// effectMarks are the side effects per copy ("" for lines that name none):
// the effects log's lines where they are placed in time, or, with the
// effects query (counted after the run, with no times), the first COMMIT
// of each delivery that wrote the key. The second and later effects of a
// duplicated key are drawn as duplicates.
func (wl *workerLanes) effectMarks() map[string]report.LaneRow {
	rr := wl.rr
	rows := map[string]report.LaneRow{}
	dup := map[string]bool{}
	counted := map[string]int{}
	for _, kv := range rr.Keys {
		dup[kv.Key] = kv.Outcome == chaos.OutcomeDup
		counted[kv.Key] = kv.Effects
	}
	drawn := map[string]int{}
	add := func(slot string, m report.Mark, key string) {
		drawn[key]++
		if drawn[key] > 1 && dup[key] {
			m.Kind, m.Title = report.MarkDuplicate, "SECOND SIDE EFFECT: "+m.Title
			m.Evidence = true
		}
		row := rows[slot]
		row.Marks = append(row.Marks, m)
		rows[slot] = row
	}
	if rr.EffectsFrom == chaos.EffectsSQL {
		wl.notes = append(wl.notes, "the side effects were counted after the run by --effects-sql, which has no times: each is drawn at the "+
			"first COMMIT dupctl saw of a delivery that wrote its key")
		for _, e := range wl.commitEffects() {
			m := wl.mark(e, report.MarkEffect, "")
			m.Title += fmt.Sprintf(" (drawn as a side effect: --effects-sql counted %d for %s after the run)", counted[e.Key], e.Key)
			add(slotOf(e.Lane), m, e.Key)
		}
	} else {
		untimed := 0
		idx := make([]int, len(rr.Effects))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return int(tOf(rr.Effects[a]) - tOf(rr.Effects[b])) })
		for _, i := range idx {
			el := rr.Effects[i]
			if el.T == nil {
				untimed++
				continue
			}
			how := map[string]string{chaos.WhenOutput: "the time its line reached dupctl on the worker's output",
				chaos.WhenTimestamp: "the line's own timestamp"}[el.When]
			m := report.Mark{At: *el.T, Kind: report.MarkEffect, Seq: wl.effNum[i],
				Title: fmt.Sprintf("side effect of %s, effects log line %d, at t=%s (%s)", el.Key, el.Line, sim.FormatMillis(*el.T), how)}
			add(slotOf(el.Lane), m, el.Key)
		}
		if untimed > 0 {
			wl.notes = append(wl.notes, fmt.Sprintf("%s of the effects log %s no time and %s not drawn (%s counted)",
				english.Count(untimed, "side-effect line", "side-effect lines"), english.Plural(untimed, "carries", "carry"),
				english.Plural(untimed, "is", "are"), english.Plural(untimed, "it is", "they are")))
		}
	}
	for _, kv := range rr.Keys {
		if kv.Effects > drawn[kv.Key] {
			wl.notes = append(wl.notes, fmt.Sprintf("%s had %d side effects, %d drawn: the others' times were not observed", kv.Key, kv.Effects,
				drawn[kv.Key]))
		}
	}
	for slot, row := range rows {
		row.Label = "side effects"
		if rr.EffectsFrom == chaos.EffectsSQL {
			row.Label = "side effects (at COMMIT)"
		}
		rows[slot] = row
	}
	return rows
}

func tOf(e chaos.EffectLine) int64 {
	if e.T == nil {
		return 1 << 62
	}
	return *e.T
}

// commitEffects are the first commit event of each delivery that
// committed a write of its key, in time order.
func (wl *workerLanes) commitEffects() []chaos.Event {
	var out []chaos.Event
	for _, d := range wl.rr.Deliveries {
		for _, e := range wl.rr.Events {
			if e.Kind == "commit" && e.Key == d.Key && e.Lane == d.Lane && e.T >= d.From && e.T <= d.To {
				out = append(out, e)
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b chaos.Event) int { return int(a.T - b.T) })
	return out
}

// dupctlRow is what dupctl itself did: the workload's publishes, a fault
// of its own (a second message, a lagging cache), the held-back cache
// writes landing, a copy reconnected to Redis.
func (wl *workerLanes) dupctlRow() report.LaneRow {
	row := report.LaneRow{Label: "actions"}
	for _, e := range wl.rr.Events {
		if e.Lane != "dupctl" {
			continue
		}
		switch {
		case e.Fault:
			row.Marks = append(row.Marks, wl.faultMark(e))
		case e.Kind == "publish":
			label := ""
			if strings.Contains(e.Text, "another copy") {
				label = "publishes again"
			}
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, label))
		case e.Kind == "cache-landed":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "cache write lands"))
		case e.Kind == "reconnect":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "Redis back"))
		case e.Kind == "replica-pause":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "replica replay paused"))
		case e.Kind == "replica-resume":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "replica replay resumed"))
		case e.Kind == "replica-cut":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "Redis replicas cut off"))
		case e.Kind == "failover":
			row.Marks = append(row.Marks, wl.mark(e, report.MarkOther, "new Redis master"))
		}
	}
	return row
}

// writeEvents is the run's events table, bounded: the fault and the
// deciding events first, then the first events.
func (wl *workerLanes) writeEvents(w io.Writer) {
	evs := wl.rr.Events
	listed := map[int]bool{}
	for _, e := range evs {
		if len(listed) < maxWorkerTable/2 && (e.Fault || wl.deciding[e.Seq]) {
			listed[e.Seq] = true
		}
	}
	for _, e := range evs {
		if len(listed) >= maxWorkerTable {
			break
		}
		listed[e.Seq] = true
	}
	io.WriteString(w, "<details open><summary>events</summary><div class=\"scroll\"><table class=\"events\"><thead><tr>"+
		"<th scope=\"col\" class=\"num\">#</th><th scope=\"col\">t</th><th scope=\"col\">copy</th><th scope=\"col\">event</th>"+
		"<th scope=\"col\">what dupctl saw</th></tr></thead><tbody>\n")
	for _, e := range evs {
		if !listed[e.Seq] {
			continue
		}
		kind := report.Escape(e.Kind)
		if e.Fault {
			kind = "<strong>fault</strong>"
		}
		if wl.deciding[e.Seq] {
			kind += " <span class=\"badge info\">evidence</span>"
		}
		fmt.Fprintf(w, "<tr id=\"run-%d-ev-%d\"><td class=\"num\">%d</td><td class=\"num\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			wl.n, e.Seq, wl.num[e.Seq], report.Escape(sim.FormatMillis(e.T)), report.Escape(e.Lane), kind, report.Escape(e.Text))
	}
	io.WriteString(w, "</tbody></table></div>")
	if left := len(evs) - len(listed); left > 0 {
		fmt.Fprintf(w, "<p class=\"note\">%s of %s are listed; %s more are in <code>-o json</code>.</p>", english.Number(int64(len(listed))),
			english.Count(len(evs), "event", "events"), english.Number(int64(left)))
	}
	io.WriteString(w, "</details>\n")
}
