package sim

import (
	"math"
	"math/bits"
	"slices"

	"github.com/dupctl/dupctl/internal/worker"
)

// Action is one thing that can happen next: a worker's step, a fault, a
// publisher duplicate, or the clock moving. kind<<24 | argument.
type Action uint32

// Action kinds.
const (
	aStep     = iota + 1 // worker w does its next operation (or receives)
	aFail                // worker w's side effect fails (retryable)
	aCrash               // worker w's process dies
	aPause               // worker w stops the world for PauseFor
	aDrop                // worker w's connection drops before its ack
	aDup                 // the publisher sends job j again
	aTick                // the clock jumps to the next timer
	aStop                // nothing more happens
	aFailover            // the Redis master fails over before worker w's lock replicated
)

func act(kind, arg int) Action { return Action(kind<<24 | arg) }

// Kind is the action's kind; Arg its worker or job.
func (a Action) Kind() int { return int(a >> 24) }
func (a Action) Arg() int  { return int(a & 0xff) }

// point is the fault point a crash or pause fired at (kept in the action
// so a replay under another profile fires it at the same named point).
func (a Action) point() worker.Point { return worker.Point(a >> 8 & 0xff) }

// job is a duplicate's job index.
func (a Action) job() int { return int(a & 0xffffff) }

// ordinal is the worker's delivery count when a fault fired: "the crash on
// W1's second delivery".
func (a Action) ordinal() uint8 { return uint8(a >> 16) }

// faultAt encodes a fault on worker w at the first point of at, on the
// worker's current delivery.
func (e *engine) faultAt(kind, w int, at worker.Points) Action {
	return act(kind, w|int(lowest(at))<<8|int(e.s.W[w].Received)<<16)
}

// lowest is the first point of a set, in flow order.
func lowest(ps worker.Points) worker.Point {
	if ps == 0 {
		return worker.PointNone
	}
	return worker.Point(bits.TrailingZeros16(uint16(ps)))
}

// isFault reports whether the action is an injected fault (what shrinking
// tries to drop first).
func (a Action) isFault() bool {
	switch a.Kind() {
	case aFail, aCrash, aPause, aDrop, aDup, aFailover:
		return true
	}
	return false
}

// Dead-letter reasons.
const (
	reasonNone uint8 = iota
	reasonLockBusy
	reasonRetries
	reasonFatal
	reasonDeliveryLimit
)

// engine is one simulation: the config, the state and an optional
// recorder. Exploration runs with rec == nil and does no formatting.
type engine struct {
	cfg  *Config
	s    State
	seed uint64
	rec  *recorder
	// nextAt caches nextTimer between enabled and the tick it enables; it
	// is valid for the state whose step count is nextSteps (exhaustive
	// search restores states, so a flag alone would go stale).
	nextAt    int64
	nextDue   uint8 // the timer sources due at nextAt
	nextSteps int32
	flow      *flowTable // the profile's flow as lookups
	// st is the operation just carried out, kept here for the recorder so
	// that a step allocates nothing.
	st worker.Step
}

func (e *engine) reset(seed uint64) {
	if e.flow == nil || e.flow.profile != e.cfg.Profile {
		e.flow = newFlowTable(e.cfg.Profile)
	}
	e.seed = seed
	e.s.reset(e.cfg)
	e.nextSteps = -1
	if e.rec != nil {
		e.rec.start(e)
	}
}

// firstReady is the broker's next message for a consumer: FIFO by publish
// order, requeued messages keep their place.
func (e *engine) firstReady() int {
	s := &e.s
	for i := int(s.readyLo); i < len(s.Msgs); i++ {
		if s.Msgs[i].State == msgReady {
			s.readyLo = int32(i)
			return i
		}
	}
	s.readyLo = int32(len(s.Msgs))
	return -1
}

// madeReady notes that message i became ready again (requeued, or its
// backoff ended) for firstReady's scan.
func (s *State) madeReady(i int) {
	s.readyLo = min(s.readyLo, int32(i))
}

// setLock and clearLock keep the list of held locks with the table.
func (s *State) setLock(id int32, l lockEntry) {
	if s.Locks[id].Token == 0 {
		s.held = append(s.held, id)
	}
	s.Locks[id] = l
}

func (s *State) clearLock(id int32) {
	if s.Locks[id].Token != 0 {
		s.held = remove(s.held, id)
	}
	s.Locks[id] = lockEntry{}
}

// remove deletes v from an unordered list.
func remove(list []int32, v int32) []int32 {
	for i, x := range list {
		if x == v {
			list[i] = list[len(list)-1]
			return list[:len(list)-1]
		}
	}
	return list
}

// enabled appends every action possible now to buf.
func (e *engine) enabled(buf []Action) []Action {
	s := &e.s
	faults := s.Crash > 0 || s.Pause > 0 || s.Drop > 0 || s.Fail > 0 || s.Failover > 0
	can, steps := e.steppable()
	for ; can != 0; can &= can - 1 {
		w := bits.TrailingZeros64(can)
		buf = append(buf, act(aStep, w))
		if faults && s.W[w].Msg >= 0 {
			buf = e.faults(buf, w)
		}
	}
	if s.Dup > 0 {
		for j := 0; j < e.cfg.Jobs; j++ {
			buf = append(buf, act(aDup, j))
		}
	}
	if steps == 0 {
		if e.timerPending() {
			buf = append(buf, act(aTick, 0))
		} else if len(buf) > 0 {
			buf = append(buf, act(aStop, 0))
		}
	}
	return buf
}

// canStep reports whether a worker can take its next step: an idle one
// when a message is ready, a busy one when its work or pause is over.
// ready caches firstReady across workers (readyUnasked: not asked yet).
func (e *engine) canStep(ws *workerState, now int64, ready int) (bool, int) {
	if ws.Msg >= 0 {
		return ws.Until <= now, ready
	}
	if ready == readyUnasked {
		ready = e.firstReady()
	}
	return ready >= 0, ready
}

// readyUnasked is canStep's ready before firstReady was asked (firstReady
// itself returns -1 for none).
const readyUnasked = -2

// calm reports whether no fault or duplicate can be offered any more, so
// that the only actions are worker steps, or a tick or stop when none can
// step.
func (s *State) calm() bool {
	return s.Crash <= 0 && s.Pause <= 0 && s.Drop <= 0 && s.Fail <= 0 && s.Dup <= 0 && s.Failover <= 0
}

// workerBit is worker w's bit in a set of workers: a config has at most
// MaxWorkers, a power of two no larger than 64 (the mask spares the shift
// a range check).
func workerBit(w int) uint64 { return 1 << (w & (MaxWorkers - 1)) }

// A set of workers is one uint64: MaxWorkers must stay within 64, and be a
// power of two for workerBit's mask.
var (
	_ = [64 - MaxWorkers]struct{}{}
	_ = [1 - MaxWorkers&(MaxWorkers-1)]struct{}{}
)

// steppable is the set of workers that can step now, in worker order as
// bits, and its size.
func (e *engine) steppable() (can uint64, n int) {
	workers, now := e.s.W, e.s.Now
	ready := readyUnasked
	for w := range workers {
		var ok bool
		if ok, ready = e.canStep(&workers[w], now, ready); ok {
			can |= workerBit(w)
			n++
		}
	}
	return can, n
}

// pickStep is a random schedule's choice among the n workers in can: the
// one a draw over enabled's list (the workers that can step, in order)
// would pick, without building the list; like runRandom, no draw when only
// one can step.
func pickStep(r *rng, can uint64, n int) int {
	if n > 1 {
		for k := r.intn(n); k > 0; k-- {
			can &= can - 1
		}
	}
	return bits.TrailingZeros64(can)
}

// timerPending finds the next timer for the tick that would move the clock
// to it, and reports whether there is one.
func (e *engine) timerPending() bool {
	e.nextAt, e.nextDue = e.nextTimer()
	e.nextSteps = e.s.Steps
	return e.nextAt != math.MaxInt64
}

// faults appends the faults that may fire on worker w, which can step.
func (e *engine) faults(buf []Action, w int) []Action {
	s := &e.s
	f := &e.cfg.Faults
	ws := &s.W[w]
	if ws.At != 0 {
		if s.Crash > 0 && ws.At&f.CrashAt != 0 {
			buf = append(buf, e.faultAt(aCrash, w, ws.At&f.CrashAt))
		}
		if s.Pause > 0 && ws.At&f.PauseAt != 0 {
			buf = append(buf, e.faultAt(aPause, w, ws.At&f.PauseAt))
		}
		if s.Drop > 0 && ws.Owned && ws.At.Has(worker.PointBeforeAck) {
			buf = append(buf, e.faultAt(aDrop, w, worker.Of(worker.PointBeforeAck)))
		}
		if s.Failover > 0 && ws.At&f.FailoverAt != 0 && e.holdsLock(ws) {
			buf = append(buf, e.faultAt(aFailover, w, ws.At&f.FailoverAt))
		}
	}
	if s.Fail > 0 && (ws.Op == worker.OpEffect || ws.Op == worker.OpEffectTxn) {
		buf = append(buf, e.faultAt(aFail, w, 0))
	}
	return buf
}

// Timer sources with lists to visit, as bits: the ones tick must visit (a
// timed duplicate is one field, checked on every tick).
const (
	dueWorkers uint8 = 1 << iota // work or a pause ending
	dueMsgs                      // a delayed retry, an ack deadline
	dueLocks                     // a lock lease
	dueCache                     // a cache write becoming visible
)

// nextTimer is the earliest pending deadline: work or pause ending, a
// delayed retry becoming ready, an ack deadline, a lock expiring, a cache
// write becoming visible. due says which sources have a deadline then.
func (e *engine) nextTimer() (next int64, due uint8) {
	s := &e.s
	const never = int64(math.MaxInt64)
	work, msgs, locks, cache, dup := never, never, never, never, never
	for i := range s.W {
		if s.W[i].Msg >= 0 && s.W[i].Until > s.Now {
			work = min(work, s.W[i].Until)
		}
	}
	if s.delayed > 0 || e.cfg.AckTimeout > 0 {
		for i := range s.Msgs {
			m := &s.Msgs[i]
			if m.State == msgDelayed || (m.State == msgUnacked && e.cfg.AckTimeout > 0) {
				msgs = min(msgs, m.At)
			}
		}
	}
	for _, id := range s.held {
		locks = min(locks, s.Locks[id].Exp)
	}
	for _, k := range s.pending {
		cache = min(cache, s.Cache[k].At)
	}
	if s.DupAt > 0 {
		dup = s.DupAt
	}
	next = min(work, msgs, locks, cache, dup)
	if next == never {
		return next, 0
	}
	if work == next {
		due |= dueWorkers
	}
	if msgs == next {
		due |= dueMsgs
	}
	if locks == next {
		due |= dueLocks
	}
	if cache == next {
		due |= dueCache
	}
	return next, due
}

// apply makes one action happen.
func (e *engine) apply(a Action) {
	if a.Kind() == aStep {
		// Most actions are a worker's next step: spare them the switch
		// over the rarer ones.
		w := a.Arg()
		e.step(w, &e.s.W[w])
		return
	}
	e.applyOther(a)
}

// step is worker w's next step: a receive when idle, else its operation.
// ws is &e.s.W[w], which the caller has at hand.
func (e *engine) step(w int, ws *workerState) {
	e.s.Steps++
	e.exec(w, ws, false)
}

// applyOther makes a fault, a duplicate or a tick happen.
func (e *engine) applyOther(a Action) {
	s := &e.s
	valid := e.nextSteps == s.Steps
	s.Steps++
	w := a.Arg()
	switch a.Kind() {
	case aFail: // offered only to a worker at its side effect
		e.exec(w, &s.W[w], true)
	case aCrash:
		s.Crash--
		e.crash(w)
	case aPause:
		s.Pause--
		ws := &s.W[w]
		ws.Until, ws.Paused = s.Now+e.cfg.PauseFor, true
		if e.rec != nil {
			e.rec.pause(e, w)
		}
		ws.At = 0
	case aDrop:
		s.Drop--
		ws := &s.W[w]
		e.requeue(int(ws.Msg))
		ws.Owned, ws.At = false, 0
		if e.rec != nil {
			e.rec.drop(e, w)
		}
	case aFailover:
		s.Failover--
		e.failover(w)
	case aDup:
		s.Dup--
		j := a.job()
		s.Msgs = append(s.Msgs, message{Job: int32(j), Key: int32(j % e.cfg.Keys), Attempt: 1, Worker: -1, Dup: true})
		if e.rec != nil {
			e.rec.dup(e, j)
		}
	case aTick:
		if !valid {
			e.nextAt, e.nextDue = e.nextTimer()
		}
		e.tick()
	}
}

func (e *engine) receive(w int) {
	s := &e.s
	i := e.firstReady()
	m := &s.Msgs[i]
	m.State, m.Worker = msgUnacked, int8(w)
	m.Deliveries++
	m.Redelivered = m.Deliveries > 1
	m.At = s.Now + e.cfg.AckTimeout
	s.Deliveries++
	ws := &s.W[w]
	ws.Msg = int32(i)
	ws.Flow = worker.Flow{Attempt: m.Attempt, MaxAttempts: e.cfg.MaxAttempts}
	ws.Op = ws.Flow.Start(&e.cfg.Profile)
	ws.At = worker.Of(worker.PointAfterReceive)
	ws.Owned, ws.Token, ws.Fence, ws.Paused, ws.Until = true, 0, 0, false, 0
	ws.LockID = e.cfg.lockID(m.Job, m.Key)
	ws.Delivery = s.Deliveries
	ws.Received++
	ws.IdemKey = m.Key
	if e.cfg.Profile.Key == worker.KeyPerAttempt {
		// A fresh key per delivery: nothing can recognise the duplicate.
		s.Ledger = append(s.Ledger, stAbsent)
		s.Attempts = append(s.Attempts, 0)
		s.Cache = append(s.Cache, cacheEntry{})
		ws.IdemKey = int32(len(s.Ledger) - 1)
	}
	if e.rec != nil {
		e.rec.receive(e, w)
	}
}

// exec is worker w's next step: its flow's current operation, or a receive
// when it is idle. ws is &e.s.W[w]; fail makes a side effect fail (a
// retryable error).
func (e *engine) exec(w int, ws *workerState, fail bool) {
	if ws.Msg < 0 {
		e.receive(w)
		return
	}
	op := ws.Op
	x := executor{e: e, w: w, ws: ws, fail: fail}
	st := worker.Step{Op: op}
	// worker.Interpret's switch, on the concrete executor: through the
	// Observer interface each step paid for Interpret's call, a dynamic
	// call and a method that could not inline (15% of a random schedule's
	// instructions). The engine's operations never fail.
	switch op {
	case worker.OpAckEarly, worker.OpAck:
		_ = x.Ack(&st)
	case worker.OpLock:
		_ = x.Lock(&st)
	case worker.OpUnlockBusy:
		_ = x.UnlockBusy(&st)
	case worker.OpRetry, worker.OpRetryBusy:
		_ = x.Retry(&st)
	case worker.OpCheck:
		_ = x.Check(&st)
	case worker.OpClaim:
		_ = x.Claim(&st)
	case worker.OpWork:
		_ = x.Work(&st)
	case worker.OpEffect, worker.OpEffectTxn:
		_ = x.Effect(&st)
	case worker.OpCommit:
		_ = x.Commit(&st)
	case worker.OpMarkFailed:
		_ = x.MarkFailed(&st)
	case worker.OpUnlock:
		_ = x.Unlock(&st)
	case worker.OpDeadLetter:
		_ = x.DeadLetter(&st)
	}
	r := st.Result
	next, at, ok := e.flow.lookup(&ws.Flow, op, r)
	if !ok {
		next, at = e.flow.slowStep(&ws.Flow, op, r)
	}
	if e.rec != nil {
		// The recorder hands the step on through an interface: the
		// engine's copy keeps the local one from escaping (allocating).
		e.st = st
		e.rec.exec(e, w, &e.st)
	}
	ws.At = at
	if next == worker.OpDone {
		ws.Msg, ws.Op, ws.At, ws.Token, ws.LockID, ws.IdemKey = -1, worker.OpDone, 0, 0, -1, -1
		return
	}
	ws.Op = next
}

// effect is the side effect: the sink counts it per business key. With a
// transaction the SUCCEEDED record is written in the same atomic step.
func (e *engine) effect(w int, txn, fail bool) (worker.Result, string) {
	s := &e.s
	ws := &s.W[w]
	m := &s.Msgs[ws.Msg]
	if txn && s.Ledger[ws.IdemKey] == stSucceeded {
		s.Caught++
		return worker.ResBusy, "SUCCEEDED already: rolled back"
	}
	if fail {
		return worker.ResRetryable, "failed (retryable)"
	}
	if e.cfg.Profile.Fence && ws.Fence < s.FenceMax[m.Key] {
		s.Fenced++
		if e.rec == nil {
			return worker.ResBusy, ""
		}
		return worker.ResBusy, "rejected: fencing token " + itoa(int(ws.Fence)) + " < " + itoa(int(s.FenceMax[m.Key]))
	}
	s.Effects[m.Key]++
	if s.Effects[m.Key] > 1 {
		s.Dups++
	}
	s.FenceMax[m.Key] = max(s.FenceMax[m.Key], ws.Fence)
	if txn {
		e.writeStatus(ws.IdemKey, stSucceeded)
	}
	return worker.ResOK, ""
}

func (e *engine) writeStatus(k int32, st uint8) {
	s := &e.s
	s.Ledger[k] = st
	c := &s.Cache[k]
	if lag := e.cfg.lag(); lag != 0 {
		if c.At == 0 {
			s.pending = append(s.pending, k)
		}
		c.Pending, c.At = st, s.Now+lag
	} else {
		c.Visible = st
	}
}

// ack acknowledges the worker's delivery, which fails when the broker has
// already taken it back (ack deadline passed, connection dropped).
func (e *engine) ack(w int) string {
	s := &e.s
	ws := &s.W[w]
	m := &s.Msgs[ws.Msg]
	if ws.Owned && m.State == msgUnacked && int(m.Worker) == w {
		m.State = msgAcked
		ws.Owned = false
		return ""
	}
	return "ack failed: the broker took the delivery back"
}

// publishRetry republishes the message with attempt + 1, ready after an
// exponential backoff with jitter.
func (e *engine) publishRetry(ws *workerState) {
	s := &e.s
	m := &s.Msgs[ws.Msg]
	back := e.cfg.BackoffBase << (m.Attempt - 1)
	if j := e.cfg.JitterPercent; j > 0 && back > 0 {
		span := back * j / 50 // +-j%
		back += int64(uniform(mix(e.seed^0x5bd1e995, uint64(ws.Delivery)))*float64(span+1)) - span/2
	}
	s.Msgs = append(s.Msgs, message{Job: m.Job, Key: m.Key, Attempt: m.Attempt + 1, State: msgDelayed, Worker: -1, Dup: m.Dup,
		At: s.Now + max(back, 1)})
	s.delayed++
}

// requeue gives an unacked delivery back to the queue, marked redelivered,
// or dead-letters it when it reached the queue's delivery limit (quorum
// queues' x-delivery-limit).
func (e *engine) requeue(i int) {
	m := &e.s.Msgs[i]
	if m.State != msgUnacked {
		return
	}
	m.Worker = -1
	if l := e.cfg.DeliveryLimit; l > 0 && m.Deliveries >= l {
		m.State, m.Reason, m.At = msgDead, reasonDeliveryLimit, e.s.Now
		if e.rec != nil {
			e.rec.add(e, "broker", "dead-letter", msgName(i)+" reached the delivery limit ("+itoa(int(l))+"): dead-lettered by the broker")
		}
		return
	}
	m.State = msgReady
	e.s.madeReady(i)
}

func (e *engine) crash(w int) {
	s := &e.s
	ws := &s.W[w]
	if e.rec != nil {
		e.rec.crash(e, w)
	}
	if ws.Owned {
		e.requeue(int(ws.Msg))
	}
	inst, recv := ws.Instance+1, ws.Received
	*ws = workerState{Msg: -1, LockID: -1, IdemKey: -1, Instance: inst, Received: recv}
}

// holdsLock reports whether the worker's lock is in Redis with its token.
func (e *engine) holdsLock(ws *workerState) bool {
	return ws.Token != 0 && ws.LockID >= 0 && e.s.Locks[ws.LockID].Token == ws.Token
}

// failover is the Redis master failing over right after worker w wrote
// its lock: replication is asynchronous, so the promoted replica never got
// the write and the key is free there; the fencing counter's INCR, in the
// same Redis, is gone with it. The worker is not told: it goes on as the
// holder, and its unlock and renewal find nothing of theirs.
func (e *engine) failover(w int) {
	s := &e.s
	ws := &s.W[w]
	if e.rec != nil {
		e.rec.failover(e, w)
	}
	if e.cfg.Profile.Fence && s.FenceCtr[ws.LockID] > 0 {
		s.FenceCtr[ws.LockID]--
	}
	s.clearLock(ws.LockID)
	s.LocksLost++
	ws.At = 0
}

// tick moves the clock to the next timer and fires everything due.
func (e *engine) tick() {
	s := &e.s
	s.Now = e.nextAt
	if e.rec != nil {
		e.rec.tick(e)
	}
	// Only the sources with a deadline now have anything to fire (nothing
	// fired here sets a deadline of now).
	due := e.nextDue
	if due&dueMsgs != 0 {
		e.fireMessages()
	}
	if due&dueLocks != 0 {
		e.expireLocks()
	}
	if due&dueWorkers != 0 {
		for i := range s.W {
			if s.W[i].Paused && s.W[i].Until <= s.Now {
				s.W[i].Paused = false
			}
		}
	}
	if due&dueCache != 0 {
		for i := len(s.pending) - 1; i >= 0; i-- {
			c := &s.Cache[s.pending[i]]
			if c.At <= s.Now {
				c.Visible, c.At = c.Pending, 0
				s.pending[i] = s.pending[len(s.pending)-1]
				s.pending = s.pending[:len(s.pending)-1]
			}
		}
	}
	if s.DupAt > 0 && s.DupAt <= s.Now {
		s.DupAt = 0
		s.Msgs = append(s.Msgs, message{Job: 0, Key: 0, Attempt: 1, Worker: -1, Dup: true})
		if e.rec != nil {
			e.rec.dup(e, 0)
		}
	}
}

// fireMessages readies the delayed retries due now and takes back the
// deliveries whose ack deadline passed.
func (e *engine) fireMessages() {
	s := &e.s
	for i := range s.Msgs {
		if s.delayed == 0 && e.cfg.AckTimeout == 0 {
			break
		}
		m := &s.Msgs[i]
		switch {
		case m.State == msgDelayed && m.At <= s.Now:
			m.State = msgReady
			s.delayed--
			s.madeReady(i)
		case m.State == msgUnacked && e.cfg.AckTimeout > 0 && m.At <= s.Now:
			// The broker's consumer timeout: the channel is closed and the
			// delivery requeued while the worker may still be running it.
			s.AckTimeouts++
			if e.rec != nil {
				e.rec.ackTimeout(e, i)
			}
			if w := int(m.Worker); w >= 0 && s.W[w].Msg == int32(i) {
				s.W[w].Owned = false
			}
			e.requeue(i)
		}
	}
}

// expireLocks ends the leases due now, or renews them, in lock id order so
// the timeline reads the same whatever order they were taken in.
func (e *engine) expireLocks() {
	s := &e.s
	var dueBuf [8]int32
	due := dueBuf[:0]
	for _, id := range s.held {
		if s.Locks[id].Exp <= s.Now {
			due = append(due, id)
		}
	}
	if len(due) > 1 {
		slices.Sort(due)
	}
	p := &e.cfg.Profile
	for _, id := range due {
		l := &s.Locks[id]
		h := &s.W[l.Holder]
		paused := h.Paused && h.Until > s.Now
		if p.Renew && h.Msg >= 0 && h.Token == l.Token && h.LockID == id && !paused && l.Renewals < e.cfg.MaxRenewals {
			// The holder's watchdog extends the lease: compare-and-pexpire
			// succeeds because the token is still its own.
			l.Exp = s.Now + e.cfg.LockTTL
			l.Renewals++
			s.Renewals++
			continue
		}
		s.LockExpiries++
		if e.rec != nil {
			e.rec.expire(e, id)
		}
		s.clearLock(id)
	}
}

// lost lists business keys whose job neither ran nor reached the DLQ: the
// "no job lost" invariant, checked when the run is over.
func (e *engine) lost() int {
	s := &e.s
	n := 0
	for k := 0; k < e.cfg.Keys; k++ {
		if s.Effects[k] > 0 {
			continue
		}
		dead := false
		for i := range s.Msgs {
			if s.Msgs[i].Key == int32(k) && s.Msgs[i].State == msgDead {
				dead = true
				break
			}
		}
		if !dead {
			n++
		}
	}
	return n
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
