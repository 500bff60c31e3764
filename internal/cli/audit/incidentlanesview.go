package audit

import (
	"fmt"
	"strings"
	"time"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

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
	holds, foreign := auditlogs.LockHolds(rows, len(tl.Workers))
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
					m.Kind, m.Label = report.MarkKeyChanged, "key "+r.Key()
				} else {
					lines.Marks = append(lines.Marks, report.Mark{At: m.At, Kind: report.MarkKeyChanged, Label: "key " + r.Key(),
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

// lockRows are a worker's lock holds, one row per lock key, each bar
// named by its key: the lease while its logged TTL lasted, then, if the
// holder went on past it, the span it acted as holder with no lock,
// hatched; after a crash, the key left until its TTL, dashed.
func lockRows(holds []auditlogs.LockHold, rows []auditlogs.TimelineRow, lane int, worker string, end int64, n int) []report.LaneRow {
	var out []report.LaneRow
	byKey := map[string]int{}
	for _, h := range holds {
		if h.Lane != lane {
			continue
		}
		i, ok := byKey[h.Key]
		if !ok {
			i = len(out)
			byKey[h.Key] = i
			out = append(out, report.LaneRow{Label: orUnnamed(h.Key)})
		}
		out[i].Bars = append(out[i].Bars, holdBars(h, rows[h.FromRow], worker, end, lineAnchor(n, h.FromRow))...)
	}
	return out
}

func orUnnamed(k string) string {
	if k == "" {
		return "(no key logged)"
	}
	return k
}

func holdBars(h auditlogs.LockHold, acquired auditlogs.TimelineRow, worker string, end int64, link string) []report.Bar {
	from, to, key := ms(h.From), ms(h.To), orUnnamed(h.Key)
	lease := report.Bar{From: from, To: to, Kind: report.BarLease, Label: key, End: h.How, Link: link,
		Title: fmt.Sprintf("%s held %s from +%s to +%s: %s", worker, key, acquired.Offset, time.Duration(to)*time.Millisecond,
			h.How)}
	if h.TTL == 0 {
		return []report.Bar{lease}
	}
	ttl := h.TTL
	expiry := from + ttl.Milliseconds()
	if h.Crashed && expiry > to {
		return []report.Bar{lease, {From: to, To: min(expiry, end), Kind: report.BarOrphan, Link: link,
			Title: fmt.Sprintf("%s stayed locked after %s crashed, until its TTL of %s (+%s)", key, worker, ttl,
				time.Duration(expiry)*time.Millisecond)}}
	}
	if expiry >= to {
		return []report.Bar{lease}
	}
	lease.To, lease.End = expiry, "TTL "+ttl.String()+" ran out"
	lease.Title = fmt.Sprintf("%s's lock %s from +%s, TTL %s: it expired at +%s", worker, key, acquired.Offset, ttl,
		time.Duration(expiry)*time.Millisecond)
	return []report.Bar{lease, {From: expiry, To: to, Kind: report.BarBelieved, Link: link, End: h.How,
		Title: fmt.Sprintf("%s went on as the holder of %s after its TTL ran out, until %s", worker, key, h.How)}}
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
		k := r.Key()
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
