package audit

import (
	"fmt"
	"strings"
	"time"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// hold is one lock hold read from the lines: from its acquisition to
// where the key was released, lost, deleted by another worker or taken
// over, or where its holder crashed or logged its last line.
type hold struct {
	lane    int
	key     string
	fromRow int
	from    int64
	to      int64
	how     string
	crashed bool
}

// incidentLanes is one key's lines as a lanes picture.
func incidentLanes(tl *auditlogs.Timeline, rows []auditlogs.TimelineRow, d *auditlogs.Duplicate, n int) *report.Lanes {
	var end int64 = 1
	for _, r := range rows {
		end = max(end, ms(r.Offset))
	}
	l := &report.Lanes{ID: fmt.Sprintf("incident-%d-lanes", n), Title: "business key " + tl.Key + ", rebuilt from the logs", Start: 0,
		End:   end,
		Cause: incidentCause(d)}
	if len(rows) > 0 && !rows[0].Time.IsZero() {
		l.T0 = rows[0].Time
	}
	decisive := evidenceLines(d)
	holds, foreign := lockHolds(rows, len(tl.Workers))
	changed := keyChanges(rows)
	effects, dups := 0, 0
	for lane, worker := range tl.Workers {
		ln := report.Lane{Name: worker}
		if deliv := deliveryRow(rows, lane, worker, n); len(deliv.Bars) > 0 {
			ln.Rows = append(ln.Rows, deliv)
		}
		ln.Rows = append(ln.Rows, lockRows(holds, rows, lane, worker, end, n)...)
		lines := report.LaneRow{Label: "lines"}
		for i, r := range rows {
			if r.Lane != lane {
				continue
			}
			m := lineMark(r, worker, decisive[r.Where], foreign[i])
			m.Link, m.Seq = lineAnchor(n, i), i+1
			switch m.Kind {
			case report.MarkEffect:
				effects++
			case report.MarkDuplicate:
				effects++
				dups++
			}
			if changed[i] {
				if m.Kind == report.MarkCheck || m.Kind == report.MarkCacheRead || m.Kind == report.MarkOther {
					m.Kind, m.Label = report.MarkKeyChanged, "key "+detailKey(r.Detail)
				} else {
					lines.Marks = append(lines.Marks, report.Mark{At: m.At, Kind: report.MarkKeyChanged, Label: "key " + detailKey(r.Detail),
						Title: "the idempotency key changed: " + m.Title, Link: m.Link, Seq: m.Seq, Evidence: m.Evidence})
				}
			}
			lines.Marks = append(lines.Marks, m)
		}
		if len(lines.Marks) > 0 {
			ln.Rows = append(ln.Rows, lines)
		}
		l.Lanes = append(l.Lanes, ln)
	}
	l.Desc = fmt.Sprintf("%s over %s: %s, %d of them a repeat.", english.Count(len(tl.Workers), "worker", "workers"),
		time.Duration(end)*time.Millisecond,
		english.Count(effects, "side effect", "side effects"), dups)
	if l.Cause != nil {
		l.Desc += " Cause: " + l.Cause.Code + ", " + l.Cause.Title + "."
	}
	return l
}

func deliveryRow(rows []auditlogs.TimelineRow, lane int, worker string, n int) report.LaneRow {
	row := report.LaneRow{Label: "deliveries"}
	open := -1
	var last int64
	for i, r := range rows {
		if r.Lane != lane {
			continue
		}
		t := ms(r.Offset)
		last = t
		switch r.Event {
		case "received":
			open = i
		case "acked", "retry", "dead_lettered", "crash":
			if open >= 0 {
				end := map[string]string{"acked": "acked", "retry": "retried", "dead_lettered": "dead-lettered", "crash": "crashed"}[r.Event]
				row.Bars = append(row.Bars, report.Bar{From: ms(rows[open].Offset), To: t, Kind: report.BarDelivery, End: end,
					Title: fmt.Sprintf("%s held the delivery from +%s to +%s, ended: %s", worker, rows[open].Offset, r.Offset, end), Link: lineAnchor(n,
						open)})
				open = -1
			}
		}
	}
	if open >= 0 {
		row.Bars = append(row.Bars, report.Bar{From: ms(rows[open].Offset), To: last, Kind: report.BarDelivery, End: "no ack logged",
			Title: worker + ": no ack, retry or crash logged for this delivery up to its last line", Link: lineAnchor(n, open)})
	}
	return row
}

// lockHolds reads the lock holds of every worker, and which release lines
// deleted a lock their worker did not hold or carried no token.
func lockHolds(rows []auditlogs.TimelineRow, workers int) ([]hold, map[int]string) {
	h := &holdScan{rows: rows, open: map[string]int{}, taken: map[laneKey]int{}, foreign: map[int]string{},
		lastLine: make([]int64, workers)}
	for i, r := range rows {
		t, k := ms(r.Offset), detailKey(r.Detail)
		h.lastLine[r.Lane] = t
		switch r.Event {
		case "lock_acquired":
			h.acquired(i, r, t, k)
		case "lock_released":
			h.released(i, r, t, k)
		case "lock_lost", "crash":
			h.stopped(r, t, k)
		}
	}
	for key, j := range h.open {
		h.closeHold(key, h.lastLine[h.holds[j].lane], "no release logged (its last line)", false)
	}
	for lk, j := range h.taken {
		h.closeTaken(lk, h.lastLine[lk.lane], h.holds[j].how+", it went on to its last line", false)
	}
	return h.holds, h.foreign
}

// holdScan reads lock holds line by line.
type holdScan struct {
	rows  []auditlogs.TimelineRow
	holds []hold
	open  map[string]int // lock key -> index in holds
	// taken: a holder whose key another worker took goes on as its holder
	// until its own release or last line (issue 44: a lock-expiry holder's
	// 600 ms of work after its lease ended was unmarked).
	taken    map[laneKey]int
	foreign  map[int]string
	lastLine []int64
}

func (h *holdScan) closeHold(k string, t int64, how string, crashed bool) {
	if i, ok := h.open[k]; ok {
		h.holds[i].to, h.holds[i].how, h.holds[i].crashed = t, how, crashed
		delete(h.open, k)
	}
}

func (h *holdScan) closeTaken(lk laneKey, t int64, how string, crashed bool) {
	if i, ok := h.taken[lk]; ok {
		h.holds[i].to, h.holds[i].how, h.holds[i].crashed = t, how, crashed
		delete(h.taken, lk)
	}
}

func (h *holdScan) acquired(i int, r auditlogs.TimelineRow, t int64, k string) {
	if j, ok := h.open[k]; ok {
		if h.holds[j].lane == r.Lane {
			h.closeHold(k, t, "acquired again", false)
		} else {
			h.holds[j].how = "taken over by " + r.Worker
			h.taken[laneKey{h.holds[j].lane, k}] = j
			delete(h.open, k)
		}
	}
	h.closeTaken(laneKey{r.Lane, k}, t, "acquired again", false)
	h.open[k] = len(h.holds)
	h.holds = append(h.holds, hold{lane: r.Lane, key: k, fromRow: i, from: t})
}

func (h *holdScan) released(i int, r auditlogs.TimelineRow, t int64, k string) {
	if j, ok := h.taken[laneKey{r.Lane, k}]; ok {
		h.closeTaken(laneKey{r.Lane, k}, t, "released after it was "+h.holds[j].how, false)
	}
	j, held := h.open[k]
	switch {
	case held && h.holds[j].lane != r.Lane:
		h.foreign[i] = "DEL of " + h.rows[h.holds[j].fromRow].Worker + "'s lock"
		h.closeHold(k, t, "deleted by "+r.Worker, false)
	case strings.Contains(r.Detail, "token=(none)"):
		h.foreign[i] = "DEL without token"
		h.closeHold(k, t, "deleted without token", false)
	case !held:
		h.foreign[i] = "DEL of a lock it did not hold"
	default:
		h.closeHold(k, t, "released", false)
	}
}

// stopped ends the holds a lock_lost (of its key, or every one when it
// names none) or a crash ends.
func (h *holdScan) stopped(r auditlogs.TimelineRow, t int64, k string) {
	how := map[string]string{"lock_lost": "lost", "crash": r.Worker + " crashed"}[r.Event]
	crashed := r.Event == "crash"
	for lk := range h.taken {
		if lk.lane == r.Lane && (crashed || k == "" || k == lk.key) {
			h.closeTaken(lk, t, how, crashed)
		}
	}
	for key, j := range h.open {
		if h.holds[j].lane == r.Lane && (crashed || k == "" || k == key) {
			h.closeHold(key, t, how, crashed)
		}
	}
}

// laneKey is one worker's hold of one lock key.
type laneKey struct {
	lane int
	key  string
}

// lockRows are a worker's lock holds, one row per lock key, each bar
// named by its key: the lease while its logged TTL lasted, then, if the
// holder went on past it, the span it acted as holder with no lock,
// hatched; after a crash, the key left until its TTL, dashed.
func lockRows(holds []hold, rows []auditlogs.TimelineRow, lane int, worker string, end int64, n int) []report.LaneRow {
	var out []report.LaneRow
	byKey := map[string]int{}
	for _, h := range holds {
		if h.lane != lane {
			continue
		}
		i, ok := byKey[h.key]
		if !ok {
			i = len(out)
			byKey[h.key] = i
			out = append(out, report.LaneRow{Label: orUnnamed(h.key)})
		}
		out[i].Bars = append(out[i].Bars, holdBars(h, rows[h.fromRow], worker, end, lineAnchor(n, h.fromRow))...)
	}
	return out
}

func orUnnamed(k string) string {
	if k == "" {
		return "(no key logged)"
	}
	return k
}

func holdBars(h hold, acquired auditlogs.TimelineRow, worker string, end int64, link string) []report.Bar {
	lease := report.Bar{From: h.from, To: h.to, Kind: report.BarLease, Label: orUnnamed(h.key), End: h.how, Link: link,
		Title: fmt.Sprintf("%s held %s from +%s to +%s: %s", worker, orUnnamed(h.key), acquired.Offset, time.Duration(h.to)*time.Millisecond,
			h.how)}
	m := ttlInDetail.FindStringSubmatch(acquired.Detail)
	if m == nil {
		return []report.Bar{lease}
	}
	ttl, err := time.ParseDuration(m[1])
	if err != nil {
		return []report.Bar{lease}
	}
	expiry := h.from + ttl.Milliseconds()
	if h.crashed && expiry > h.to {
		return []report.Bar{lease, {From: h.to, To: min(expiry, end), Kind: report.BarOrphan, Link: link,
			Title: fmt.Sprintf("%s stayed locked after %s crashed, until its TTL of %s (+%s)", orUnnamed(h.key), worker, ttl,
				time.Duration(expiry)*time.Millisecond)}}
	}
	if expiry >= h.to {
		return []report.Bar{lease}
	}
	lease.To, lease.End = expiry, "TTL "+ttl.String()+" ran out"
	lease.Title = fmt.Sprintf("%s's lock %s from +%s, TTL %s: it expired at +%s", worker, orUnnamed(h.key), acquired.Offset, ttl,
		time.Duration(expiry)*time.Millisecond)
	return []report.Bar{lease, {From: expiry, To: h.to, Kind: report.BarBelieved, Link: link, End: h.how,
		Title: fmt.Sprintf("%s went on as the holder of %s after its TTL ran out, until %s", worker, orUnnamed(h.key), h.how)}}
}

// keyChanges are the lines whose idempotency key differs from the first
// one the key's lines carried.
func keyChanges(rows []auditlogs.TimelineRow) map[int]bool {
	out := map[int]bool{}
	first := ""
	for i, r := range rows {
		switch r.Event {
		case "check", "claimed", "side_effect", "committed", "duplicate_caught":
		default:
			continue
		}
		k := detailKey(r.Detail)
		if k == "" {
			continue
		}
		if first == "" {
			first = k
		} else if k != first {
			out[i] = true
		}
	}
	return out
}

// lineMark is one line as a mark: its glyph by what it decides, its
// answer in a word or two, a ring when the cause rests on it.
func lineMark(r auditlogs.TimelineRow, worker string, decisive bool, foreign string) report.Mark {
	title := fmt.Sprintf("%s +%s: %s %s (%s)", worker, r.Offset, r.Event, r.Detail, r.Where)
	if !r.Time.IsZero() {
		title = fmt.Sprintf("%s +%s %s: %s %s (%s)", worker, r.Offset, r.Time.UTC().Format("15:04:05.000"), r.Event, r.Detail, r.Where)
	}
	m := report.Mark{At: ms(r.Offset), Kind: report.MarkOther, Title: title, Evidence: decisive}
	switch r.Event {
	case "side_effect":
		m.Kind = report.MarkEffect
		if r.Repeat {
			m.Kind, m.Title = report.MarkDuplicate, "SECOND SIDE EFFECT: "+title
		}
	case "received":
		if strings.Contains(r.Detail, "redelivered") {
			m.Kind, m.Label = report.MarkRedelivery, "redelivered"
		}
	case "lock_failed":
		m.Kind, m.Label = report.MarkLockFailed, "busy"
	case "lock_released":
		if foreign != "" {
			m.Kind, m.Label = report.MarkForeignDel, foreign
		}
	case "check", "duplicate_caught":
		m.Kind, m.Label = report.MarkCheck, checkWords(r)
		if strings.Contains(r.Detail, "from cache") {
			m.Kind = report.MarkCacheRead
		}
	case "crash":
		m.Kind = report.MarkCrash
	case "acked":
		m.Kind = report.MarkAck
	case "lock_lost":
		m.Kind, m.Label = report.MarkExpire, "lock lost"
	}
	return m
}

func checkWords(r auditlogs.TimelineRow) string {
	src := ""
	if strings.Contains(r.Detail, "from cache") {
		src = "cache: "
	}
	switch {
	case r.Event == "duplicate_caught":
		return "caught"
	case strings.Contains(r.Detail, "not found"):
		return src + "not found"
	case strings.Contains(r.Detail, "found"):
		return src + "found"
	}
	return src + "no answer logged"
}
