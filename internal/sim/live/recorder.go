package live

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
)

// recorder builds the same Timeline as the simulator's, from the live
// run's events, in virtual time (real elapsed / scale).
type recorder struct {
	r  *run
	mu sync.Mutex
	tl sim.Timeline

	effects   map[string]int // business key -> effects seen
	nonOwner  bool
	openLease map[string]int // lock key -> lease index
	openDeliv map[string]int // worker lane -> delivery index
	tokens    uint32
}

func newRecorder(r *run) *recorder {
	return &recorder{r: r, tl: sim.Timeline{Workers: r.cfg.Workers}, effects: map[string]int{}, openLease: map[string]int{},
		openDeliv: map[string]int{}}
}

func (rec *recorder) now() int64 {
	return int64(time.Since(rec.r.start) * 1000 / rec.r.o.Scale)
}

func (rec *recorder) add(lane, kind, text string) *sim.Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.addLocked(lane, kind, text)
}

func (rec *recorder) addLocked(lane, kind, text string) *sim.Event {
	t := rec.now()
	rec.tl.Events = append(rec.tl.Events, sim.Event{Step: len(rec.tl.Events) + 1, T: t, Lane: lane, Kind: kind, Text: text})
	rec.tl.End = max(rec.tl.End, t)
	return &rec.tl.Events[len(rec.tl.Events)-1]
}

func workerIndex(lane string) int {
	var n int
	fmt.Sscanf(strings.TrimPrefix(lane, "W"), "%d", &n)
	return n - 1
}

// op records one operation of the worker core.
func (rec *recorder) op(lane string, m worker.Message, st *worker.Step) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	_ = worker.Interpret(&opWriter{rec: rec, lane: lane, m: m}, st)
}

// opWriter is the live timeline's side of worker.Observer: it writes the
// line of one operation a worker's core carried out, under rec.mu.
type opWriter struct {
	rec  *recorder
	lane string
	m    worker.Message
}

// add writes the operation's line, of the operation's own kind.
func (w *opWriter) add(st *worker.Step, text string) { w.rec.addLocked(w.lane, st.Op.String(), text) }

func (w *opWriter) Ack(st *worker.Step) error {
	w.rec.endDelivery(w.lane, "ack")
	w.add(st, "basic.ack")
	return nil
}

func (w *opWriter) Lock(st *worker.Step) error {
	if st.Result == worker.ResBusy {
		w.add(st, "SET lock NX PX -> busy")
		return nil
	}
	rec, now := w.rec, w.rec.now()
	if i, ok := rec.openLease[w.m.BusinessKey]; ok {
		// Another worker got the lock, so the old lease is gone: Redis
		// expires keys silently, at the end of their TTL.
		l := &rec.tl.Leases[i]
		l.Until, l.Ended = min(now, l.From+rec.r.cfg.LockTTL), "expired"
	}
	rec.tokens++
	rec.openLease[w.m.BusinessKey] = len(rec.tl.Leases)
	rec.tl.Leases = append(rec.tl.Leases, sim.Lease{Lock: w.m.BusinessKey, Worker: workerIndex(w.lane), Token: rec.tokens, From: now})
	w.add(st, "SET lock NX PX -> OK ("+st.Note+")")
	return nil
}

func (w *opWriter) UnlockBusy(st *worker.Step) error {
	text := "deferred unlock on the busy path: DEL"
	if st.Note != "" {
		text += " -> " + w.rec.deleteOthers(w.lane, w.m.BusinessKey)
		w.rec.nonOwner = true
	}
	w.add(st, text)
	return nil
}

func (w *opWriter) Retry(st *worker.Step) error {
	w.rec.endDelivery(w.lane, "retry")
	w.add(st, fmt.Sprintf("republish with attempt %d to the retry queue (backoff), ack", w.m.Attempt+1))
	return nil
}

func (w *opWriter) Check(st *worker.Step) error {
	text := "check status -> " + orAbsent(st.Note)
	if st.Result == worker.ResBusy {
		text += ": skip"
	}
	w.add(st, text)
	return nil
}

func (w *opWriter) Claim(st *worker.Step) error {
	text := "claim PROCESSING -> inserted"
	if st.Result == worker.ResBusy {
		text = "claim PROCESSING -> conflict: treated as done"
	}
	w.add(st, text)
	return nil
}

// Work writes nothing: the work's line is written when it starts.
func (w *opWriter) Work(*worker.Step) error { return nil }

func (w *opWriter) Effect(st *worker.Step) error {
	rec, key := w.rec, w.m.BusinessKey
	if st.Result != worker.ResOK {
		w.add(st, st.Op.String()+" -> "+st.Note)
		return nil
	}
	rec.effects[key]++
	n := rec.effects[key]
	text := fmt.Sprintf("SIDE EFFECT %s -> effects on %s = %d", key, key, n)
	if st.Op == worker.OpEffectTxn {
		text = "BEGIN; " + text + " + SUCCEEDED; COMMIT"
	}
	ev := rec.addLocked(w.lane, "effect", text)
	if n > 1 {
		ev.Mark, ev.Kind = true, "duplicate-effect"
		ev.Text += "   <- SECOND SIDE EFFECT"
	}
	rec.tl.Effects = append(rec.tl.Effects, sim.EffectMark{Worker: workerIndex(w.lane), Key: key, T: ev.T, N: n})
	return nil
}

func (w *opWriter) Commit(st *worker.Step) error {
	w.add(st, "UPDATE status = SUCCEEDED")
	return nil
}

func (w *opWriter) MarkFailed(st *worker.Step) error {
	w.add(st, "UPDATE status = FAILED")
	return nil
}

func (w *opWriter) Unlock(st *worker.Step) error {
	rec, key := w.rec, w.m.BusinessKey
	text := "unlock -> released"
	if st.Note != "" {
		text = "unlock -> " + st.Note
	}
	if i, ok := rec.openLease[key]; ok && rec.tl.Leases[i].Worker != workerIndex(w.lane) && rec.r.cfg.Profile.Unlock == worker.UnlockDel {
		text = "DEL -> " + rec.deleteOthers(w.lane, key)
		rec.nonOwner = true
	}
	rec.stopBelieving(w.lane, key, st.Note == "")
	w.add(st, text)
	return nil
}

func (w *opWriter) DeadLetter(st *worker.Step) error {
	w.rec.endDelivery(w.lane, "dead-letter")
	w.add(st, "publish to the DLQ with its context, ack")
	return nil
}

// deleteOthers ends another worker's open lease on key: deleted now.
func (rec *recorder) deleteOthers(lane, key string) string {
	i, ok := rec.openLease[key]
	if !ok {
		return "deleted another worker's lock"
	}
	l := &rec.tl.Leases[i]
	l.Until, l.Ended = rec.now(), "deleted"
	delete(rec.openLease, key)
	return fmt.Sprintf("deleted the lock of W%d", l.Worker+1)
}

// stopBelieving ends this worker's latest lease on key: released (the
// lease ends now) or found taken (it ended earlier; the belief ends now).
func (rec *recorder) stopBelieving(lane, key string, released bool) {
	now := rec.now()
	for i := len(rec.tl.Leases) - 1; i >= 0; i-- {
		l := &rec.tl.Leases[i]
		if l.Lock != key || l.Worker != workerIndex(lane) || l.Believed != 0 {
			continue
		}
		l.Believed = now
		if l.Ended == "" {
			l.Until, l.Ended = now, "released"
			if !released {
				l.Until, l.Ended = min(now, l.From+rec.r.cfg.LockTTL), "expired"
			}
			delete(rec.openLease, key)
		}
		return
	}
}

// receive opens a delivery bar; end closes it.
func (rec *recorder) receive(lane string, msg string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.openDeliv[lane] = len(rec.tl.Deliveries)
	rec.tl.Deliveries = append(rec.tl.Deliveries, sim.Delivery{Worker: workerIndex(lane), Message: msg, From: rec.now()})
}

func (rec *recorder) end(lane, how string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.endDelivery(lane, how)
}

func (rec *recorder) endDelivery(lane, how string) {
	if i, ok := rec.openDeliv[lane]; ok {
		rec.tl.Deliveries[i].To, rec.tl.Deliveries[i].End = rec.now(), how
		delete(rec.openDeliv, lane)
	}
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

func (rec *recorder) violations() sim.Violation {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.nonOwner {
		return sim.VNonOwnerUnlock
	}
	return 0
}

func (rec *recorder) finish() sim.Timeline {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i := range rec.tl.Leases {
		l := &rec.tl.Leases[i]
		if l.Ended == "" {
			l.Until = rec.tl.End
		}
		if l.Believed == 0 {
			l.Believed = rec.tl.End
		}
	}
	for lane := range rec.openDeliv {
		rec.endDelivery(lane, "open")
	}
	sort.SliceStable(rec.tl.Events, func(i, j int) bool { return rec.tl.Events[i].T < rec.tl.Events[j].T })
	for i := range rec.tl.Events {
		rec.tl.Events[i].Step = i + 1
	}
	return rec.tl
}
