package sim

import (
	"fmt"

	"github.com/dupctl/dupctl/internal/worker"
)

// Event is one line of a timeline.
type Event struct {
	Step int    `json:"step"`
	T    int64  `json:"t_ms"`
	Lane string `json:"lane"` // W1..Wn, broker, redis, db
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Mark is set on the event the reader must see: the second side effect.
	Mark bool `json:"mark,omitempty"`
}

// Lease is one lock lease: from acquisition until it was released or
// expired, and until when its holder still believed it held it.
type Lease struct {
	Lock     string `json:"lock"`
	Worker   int    `json:"worker"`
	Token    uint32 `json:"token"`
	From     int64  `json:"from_ms"`
	Until    int64  `json:"until_ms"`    // the lease ended (release or expiry)
	Believed int64  `json:"believed_ms"` // the holder acted as owner until here
	// Ended says how the lease ended: released by its holder, expired, or
	// deleted by another worker's plain DEL; "" while it lasts.
	Ended string `json:"ended"`
	// stopped is set once the holder stopped acting as owner (it
	// released the lock or died): Believed is then set, even to 0.
	stopped bool
}

// Delivery is one message in one worker's hands.
type Delivery struct {
	Worker   int    `json:"worker"`
	Message  string `json:"message"`
	From     int64  `json:"from_ms"`
	To       int64  `json:"to_ms"`
	Deadline int64  `json:"deadline_ms,omitempty"` // the broker's ack deadline
	End      string `json:"end"`                   // ack, crash, requeued, retry, dead-letter, skipped
}

// EffectMark is one side effect on the sink.
type EffectMark struct {
	Worker int    `json:"worker"`
	Key    string `json:"key"`
	T      int64  `json:"t_ms"`
	N      int    `json:"n"` // 1 for the first effect on this key, 2 for the duplicate, ...
}

// Timeline is everything a run did, for people.
type Timeline struct {
	Workers    int          `json:"workers"`
	End        int64        `json:"end_ms"`
	Events     []Event      `json:"events"`
	Leases     []Lease      `json:"leases"`
	Deliveries []Delivery   `json:"deliveries"`
	Effects    []EffectMark `json:"effects"`
}

// recorder builds a Timeline while a run replays. It is nil during
// exploration, so exploration pays nothing for it.
type recorder struct {
	tl        Timeline
	openLease map[int32]int // lock id -> lease index
	openDeliv map[int]int   // worker -> delivery index
}

func newRecorder() *recorder { return &recorder{} }

func (r *recorder) start(e *engine) {
	r.tl = Timeline{Workers: e.cfg.Workers}
	r.openLease = map[int32]int{}
	r.openDeliv = map[int]int{}
}

func lane(w int) string { return "W" + itoa(w+1) }

func (r *recorder) add(e *engine, ln, kind, text string) *Event {
	r.tl.Events = append(r.tl.Events, Event{Step: int(e.s.Steps), T: e.s.Now, Lane: ln, Kind: kind, Text: text})
	return &r.tl.Events[len(r.tl.Events)-1]
}

// Names shown to people.
func jobName(j int32) string { return "job-" + itoa(int(j)+1) }
func keyName(k int32) string { return "order-" + itoa(int(k)+1) }
func msgName(i int) string   { return "msg " + itoa(i+1) }
func at(ms int64) string     { return "t=" + fmtDur(ms) }
func (e *engine) lockName(id int32) string {
	if int(id) >= e.cfg.Keys {
		return "lock:job:" + jobName(id-int32(e.cfg.Keys))
	}
	return "lock:payment:order:" + itoa(int(id)+1)
}

func (e *engine) idemName(ws *workerState) string {
	m := e.s.Msgs[ws.Msg]
	if e.cfg.Profile.Key == worker.KeyPerAttempt {
		return fmt.Sprintf("payment:%s:%d", keyName(m.Key), ws.Delivery)
	}
	return "payment:" + keyName(m.Key)
}

func (r *recorder) receive(e *engine, w int) {
	ws := &e.s.W[w]
	m := e.s.Msgs[ws.Msg]
	text := fmt.Sprintf("receive %s %s (%s, delivery %d, attempt %d", jobName(m.Job), keyName(m.Key), msgName(int(ws.Msg)),
		m.Deliveries, m.Attempt)
	if m.Redelivered {
		text += ", redelivered"
	}
	if m.Dup {
		text += ", publisher duplicate"
	}
	text += ")"
	r.add(e, lane(w), "receive", text)
	d := Delivery{Worker: w, Message: msgName(int(ws.Msg)), From: e.s.Now}
	if e.cfg.AckTimeout > 0 {
		d.Deadline = m.At
	}
	r.openDeliv[w] = len(r.tl.Deliveries)
	r.tl.Deliveries = append(r.tl.Deliveries, d)
}

func (r *recorder) endDelivery(e *engine, w int, how string) {
	if i, ok := r.openDeliv[w]; ok {
		r.tl.Deliveries[i].To, r.tl.Deliveries[i].End = e.s.Now, how
		delete(r.openDeliv, w)
	}
}

// endLease closes a lock's open lease. Only a release by the holder ends
// the holder's belief that it owns the lock.
func (r *recorder) endLease(e *engine, id int32, how string) {
	if i, ok := r.openLease[id]; ok {
		r.tl.Leases[i].Until, r.tl.Leases[i].Ended = e.s.Now, how
		if how == "released" {
			r.tl.Leases[i].Believed, r.tl.Leases[i].stopped = e.s.Now, true
		}
		delete(r.openLease, id)
	}
}

// stopBelieving ends the holder's belief that it owns lease token.
func (r *recorder) stopBelieving(e *engine, w int, token uint32) {
	for i := len(r.tl.Leases) - 1; i >= 0; i-- {
		l := &r.tl.Leases[i]
		if l.Worker == w && l.Token == token && !l.stopped {
			l.Believed, l.stopped = e.s.Now, true
			return
		}
	}
}

// exec writes worker w's operation st, which the engine just carried out.
func (r *recorder) exec(e *engine, w int, st *worker.Step) {
	_ = worker.Interpret(&lineWriter{r: r, e: e, w: w, ws: &e.s.W[w], ln: lane(w)}, st)
}

// lineWriter is the timeline's side of worker.Observer: it writes the line
// (and the lease, delivery and effect marks) of worker w's operation once
// the engine has carried it out.
type lineWriter struct {
	r  *recorder
	e  *engine
	w  int
	ws *workerState
	ln string // the worker's lane
}

// msg is the message the worker is handling.
func (lw *lineWriter) msg() message { return lw.e.s.Msgs[lw.ws.Msg] }

func (lw *lineWriter) add(kind, text string) *Event { return lw.r.add(lw.e, lw.ln, kind, text) }

func (lw *lineWriter) Ack(st *worker.Step) error {
	text := "basic.ack " + msgName(int(lw.ws.Msg))
	if st.Op == worker.OpAckEarly {
		text += " on receipt (before any work)"
	}
	if st.Note != "" {
		text += ": " + st.Note
	}
	lw.add("ack", text)
	if st.Note == "" {
		lw.r.endDelivery(lw.e, lw.w, "ack")
	}
	return nil
}

func (lw *lineWriter) Lock(st *worker.Step) error {
	e, ws := lw.e, lw.ws
	lk := e.lockName(ws.LockID)
	if st.Result == worker.ResBusy {
		l := e.s.Locks[ws.LockID]
		lw.add("lock", fmt.Sprintf("SET %s NX PX %s -> busy (held by W%d, token %d)", lk, fmtDur(e.cfg.LockTTL), l.Holder+1, l.Token))
		return nil
	}
	text := fmt.Sprintf("SET %s NX PX %s -> OK token=%d, expires %s", lk, fmtDur(e.cfg.LockTTL), ws.Token, at(e.s.Now+e.cfg.LockTTL))
	if e.cfg.Profile.Fence {
		text += fmt.Sprintf(", fencing token %d", ws.Fence)
	}
	lw.add("lock", text)
	lw.r.openLease[ws.LockID] = len(lw.r.tl.Leases)
	lw.r.tl.Leases = append(lw.r.tl.Leases, Lease{Lock: lk, Worker: lw.w, Token: ws.Token, From: e.s.Now})
	return nil
}

func (lw *lineWriter) UnlockBusy(st *worker.Step) error {
	text := "deferred unlock on the busy path: DEL " + lw.e.lockName(lw.ws.LockID)
	if st.Note != "" {
		text += " -> " + st.Note
		lw.r.endLease(lw.e, lw.ws.LockID, "deleted")
	} else {
		text += " -> nothing to delete"
	}
	lw.add("unlock", text)
	return nil
}

func (lw *lineWriter) Retry(st *worker.Step) error {
	why := "after the failure"
	if st.Op == worker.OpRetryBusy {
		why = "lock busy"
	}
	m := lw.msg()
	lw.add("retry", fmt.Sprintf("republish %s with attempt %d (%s, backoff), ack %s",
		jobName(m.Job), m.Attempt+1, why, msgName(int(lw.ws.Msg))))
	lw.r.endDelivery(lw.e, lw.w, "retry")
	return nil
}

func (lw *lineWriter) Check(st *worker.Step) error {
	src := "SELECT status FROM job_execution WHERE key=" + lw.e.idemName(lw.ws)
	switch lw.e.cfg.Profile.StatusFrom {
	case worker.StatusCache:
		src = "GET job:status:" + lw.e.idemName(lw.ws) + " (cache)"
	case worker.StatusReplica:
		src += " (on the replica)"
	}
	verdict := "proceed"
	if st.Result == worker.ResBusy {
		verdict = "already done: skip"
	}
	lw.add("check", fmt.Sprintf("%s -> %s: %s", src, st.Note, verdict))
	lw.skipped(st)
	return nil
}

func (lw *lineWriter) Claim(st *worker.Step) error {
	text := "INSERT " + lw.e.idemName(lw.ws) + " PROCESSING ON CONFLICT DO NOTHING -> inserted"
	if st.Result == worker.ResBusy {
		text = "INSERT " + lw.e.idemName(lw.ws) + " PROCESSING ON CONFLICT DO NOTHING -> conflict (" + st.Note + "): treated as done"
	}
	lw.add("claim", text)
	lw.skipped(st)
	return nil
}

// skipped marks the delivery as skipped when the idempotency layer found
// its job done.
func (lw *lineWriter) skipped(st *worker.Step) {
	if st.Result != worker.ResBusy {
		return
	}
	if i, ok := lw.r.openDeliv[lw.w]; ok {
		lw.r.tl.Deliveries[i].End = "skipped"
	}
}

func (lw *lineWriter) Work(st *worker.Step) error {
	lw.add("work", fmt.Sprintf("work %s (until %s)", st.Note, at(lw.ws.Until)))
	return nil
}

func (lw *lineWriter) Effect(st *worker.Step) error {
	e, m := lw.e, lw.msg()
	prefix := "SIDE EFFECT"
	if st.Op == worker.OpEffectTxn {
		prefix = "BEGIN; SIDE EFFECT + INSERT SUCCEEDED; COMMIT"
	}
	if st.Result != worker.ResOK {
		lw.add("effect", prefix+" "+keyName(m.Key)+" -> "+st.Note)
		return nil
	}
	n := int(e.s.Effects[m.Key])
	text := fmt.Sprintf("%s %s -> effects on %s = %d", prefix, keyName(m.Key), keyName(m.Key), n)
	if e.cfg.Profile.Fence {
		text += fmt.Sprintf(" (fencing token %d accepted)", lw.ws.Fence)
	}
	ev := lw.add("effect", text)
	if n > 1 {
		ev.Mark = true
		ev.Kind = "duplicate-effect"
		ev.Text += "   <- SECOND SIDE EFFECT"
	}
	lw.r.tl.Effects = append(lw.r.tl.Effects, EffectMark{Worker: lw.w, Key: keyName(m.Key), T: e.s.Now, N: n})
	return nil
}

func (lw *lineWriter) Commit(*worker.Step) error {
	text := "UPDATE job_execution SET status=SUCCEEDED WHERE key=" + lw.e.idemName(lw.ws)
	if c := lw.e.cfg; c.Profile.StatusFrom == worker.StatusReplica {
		text += " on the primary; the replica replays it at " + at(lw.e.s.Now+c.ReplicaLag)
	}
	lw.add("commit", text)
	return nil
}

func (lw *lineWriter) MarkFailed(st *worker.Step) error {
	text := "UPDATE job_execution SET status=FAILED, attempts=attempts+1 WHERE key=" + lw.e.idemName(lw.ws)
	if st.Note != "" {
		text += " -> " + st.Note
	}
	lw.add("mark-failed", text)
	return nil
}

func (lw *lineWriter) Unlock(st *worker.Step) error {
	e, ws := lw.e, lw.ws
	del := e.cfg.Profile.Unlock == worker.UnlockDel
	cmd := "EVAL compare-and-delete " + e.lockName(ws.LockID) + " token=" + itoa(int(ws.Token))
	if del {
		cmd = "DEL " + e.lockName(ws.LockID)
	}
	if st.Note == "" {
		lw.add("unlock", cmd+" -> released")
		lw.r.endLease(e, ws.LockID, "released")
		return nil
	}
	lw.add("unlock", cmd+" -> "+st.Note)
	lw.r.stopBelieving(e, lw.w, ws.Token)
	if del {
		lw.r.endLease(e, ws.LockID, "deleted")
	}
	return nil
}

func (lw *lineWriter) DeadLetter(*worker.Step) error {
	m := lw.msg()
	lw.add("dead-letter", fmt.Sprintf("dead-letter %s (jobId, businessKey %s, idempotencyKey %s, attempt %d, error, time), ack %s",
		jobName(m.Job), keyName(m.Key), lw.e.idemName(lw.ws), m.Attempt, msgName(int(lw.ws.Msg))))
	lw.r.endDelivery(lw.e, lw.w, "dead-letter")
	return nil
}

func (r *recorder) crash(e *engine, w int) {
	ws := &e.s.W[w]
	pt := pointName(ws.At & e.cfg.Faults.CrashAt)
	r.add(e, lane(w), "crash", "CRASH: the process dies ("+pt+")")
	if ws.Owned {
		r.add(e, "broker", "requeue", "connection closed: "+msgName(int(ws.Msg))+" requeued unacked (redelivered)")
	}
	r.endDelivery(e, w, "crash")
	if ws.Token != 0 {
		r.stopBelieving(e, w, ws.Token)
	}
}

func (r *recorder) pause(e *engine, w int) {
	r.add(e, lane(w), "pause", fmt.Sprintf("PAUSE %s (stop-the-world GC, VM stall) until %s (%s)", fmtDur(e.cfg.PauseFor), at(e.s.W[w].Until),
		pointName(e.s.W[w].At&e.cfg.Faults.PauseAt)))
}

func (r *recorder) failover(e *engine, w int) {
	ws := &e.s.W[w]
	l := e.s.Locks[ws.LockID]
	r.add(e, "redis", "failover", fmt.Sprintf("FAILOVER: the master fails over before %s (token %d of W%d) replicated; the promoted replica "+
		"does not have it: the key is free (%s)", e.lockName(ws.LockID), l.Token, w+1, pointName(ws.At&e.cfg.Faults.FailoverAt)))
	r.endLease(e, ws.LockID, "lost")
}

func (r *recorder) drop(e *engine, w int) {
	r.add(e, lane(w), "drop", "connection drops before the ack")
	r.add(e, "broker", "requeue", msgName(int(e.s.W[w].Msg))+" requeued unacked (redelivered)")
	r.endDelivery(e, w, "requeued")
}

func (r *recorder) dup(e *engine, j int) {
	r.add(e, "broker", "duplicate", fmt.Sprintf("publisher sends %s again (%s)", jobName(int32(j)), msgName(len(e.s.Msgs)-1)))
}

func (r *recorder) tick(e *engine) {
	r.add(e, "clock", "tick", "clock -> "+at(e.s.Now))
	r.tl.End = e.s.Now
}

func (r *recorder) expire(e *engine, id int32) {
	l := e.s.Locks[id]
	r.add(e, "redis", "expire", fmt.Sprintf("%s expired (token %d of W%d): the key is free", e.lockName(id), l.Token, l.Holder+1))
	r.endLease(e, id, "expired")
}

func (r *recorder) ackTimeout(e *engine, i int) {
	r.add(e, "broker", "ack-timeout", fmt.Sprintf("ack deadline of %s passed: channel of W%d closed, message requeued", msgName(i),
		e.s.Msgs[i].Worker+1))
	r.endDelivery(e, int(e.s.Msgs[i].Worker), "ack-timeout")
}

// finish closes what is still open at the end of the run, and drops clock
// ticks at which nothing visible happened (a cache refresh, say).
func (r *recorder) finish(e *engine) {
	evs := r.tl.Events[:0]
	for i, ev := range r.tl.Events {
		if ev.Kind == "tick" && (i+1 == len(r.tl.Events) || r.tl.Events[i+1].Kind == "tick") {
			continue
		}
		evs = append(evs, ev)
	}
	r.tl.Events = evs
	r.tl.End = max(r.tl.End, e.s.Now)
	for i := range r.tl.Leases {
		l := &r.tl.Leases[i]
		if l.Ended == "" {
			l.Until = r.tl.End
		}
		if !l.stopped {
			// Still held, or lost without its holder knowing: the holder
			// still acts as owner at the end of the run.
			l.Believed = r.tl.End
		}
	}
	for w := range r.openDeliv {
		r.endDelivery(e, w, "open")
	}
}

func pointName(ps worker.Points) string {
	for p := worker.PointAfterReceive; p < worker.NumPoints; p++ {
		if ps.Has(p) {
			return p.String()
		}
	}
	return ""
}
