package sim

import "github.com/dupctl/dupctl/internal/worker"

// executor is the engine's side of worker.Observer: it carries out worker
// w's current operation on the in-memory state. exec makes one for each
// step; a value, so that it lives in registers and methods small enough
// inline into exec.
type executor struct {
	e    *engine
	w    int
	ws   *workerState
	fail bool // the side effect fails (a retryable error)
}

// The executor is an Observer: exec's switch calls its methods as
// worker.Interpret would, and TestExecMatchesInterpret holds it to that.
var _ worker.Observer = executor{}

func (x executor) Ack(st *worker.Step) error {
	st.Note = x.e.ack(x.w)
	return nil
}

func (x executor) Lock(st *worker.Step) error {
	e, s, ws := x.e, &x.e.s, x.ws
	l := &s.Locks[ws.LockID]
	if l.Token != 0 && l.Exp > s.Now {
		st.Result = worker.ResBusy
		return nil
	}
	s.NextToken++
	s.setLock(ws.LockID, lockEntry{Token: s.NextToken, Exp: s.Now + e.cfg.LockTTL, Holder: int8(x.w)})
	ws.Token = s.NextToken
	if e.cfg.Profile.Fence {
		s.FenceCtr[ws.LockID]++
		ws.Fence = s.FenceCtr[ws.LockID]
	}
	return nil
}

// UnlockBusy is defer unlock() on the busy path: a plain DEL of a lock
// this worker never held.
func (x executor) UnlockBusy(st *worker.Step) error {
	s, ws := &x.e.s, x.ws
	l := &s.Locks[ws.LockID]
	if l.Token != 0 {
		s.NonOwnerUnlocks++
		if x.e.rec != nil {
			st.Note = "deleted the lock of W" + itoa(int(l.Holder)+1)
		}
		s.clearLock(ws.LockID)
	}
	return nil
}

func (x executor) Retry(st *worker.Step) error {
	x.e.publishRetry(x.ws)
	st.Note = x.e.ack(x.w)
	return nil
}

func (x executor) Check(st *worker.Step) error {
	s, ws := &x.e.s, x.ws
	status := s.Ledger[ws.IdemKey]
	if x.e.cfg.Profile.StatusFrom != worker.StatusDB {
		status = s.Cache[ws.IdemKey].Visible // the cache, or the replica: config.lag
	}
	st.Note = statusNames[status]
	if status == stSucceeded {
		st.Result = worker.ResBusy
		s.Caught++
	}
	return nil
}

func (x executor) Claim(st *worker.Step) error {
	s, ws := &x.e.s, x.ws
	switch s.Ledger[ws.IdemKey] {
	case stAbsent, stFailed:
		x.e.writeStatus(ws.IdemKey, stProcessing)
	default:
		st.Note = statusNames[s.Ledger[ws.IdemKey]]
		st.Result = worker.ResBusy
		s.Caught++
	}
	return nil
}

func (x executor) Work(st *worker.Step) error {
	e, ws := x.e, x.ws
	d := e.cfg.Duration.draw(e.seed, uint64(ws.Delivery))
	ws.Until = e.s.Now + d
	if e.rec != nil {
		st.Note = fmtDur(d)
	}
	return nil
}

func (x executor) Effect(st *worker.Step) error {
	st.Result, st.Note = x.e.effect(x.w, st.Op == worker.OpEffectTxn, x.fail)
	return nil
}

func (x executor) Commit(*worker.Step) error {
	x.e.writeStatus(x.ws.IdemKey, stSucceeded)
	return nil
}

func (x executor) MarkFailed(st *worker.Step) error {
	s, k := &x.e.s, x.ws.IdemKey
	if x.e.cfg.Profile.StatusWrite == worker.StatusGuarded && s.Ledger[k] == stSucceeded {
		st.Note = "kept SUCCEEDED"
		return nil
	}
	if s.Ledger[k] == stSucceeded {
		s.Overwrites++
		st.Note = "overwrote SUCCEEDED"
	}
	x.e.writeStatus(k, stFailed)
	s.Attempts[k]++
	return nil
}

func (x executor) Unlock(st *worker.Step) error {
	s, ws := &x.e.s, x.ws
	del := x.e.cfg.Profile.Unlock == worker.UnlockDel
	l := &s.Locks[ws.LockID]
	switch {
	case l.Token == ws.Token && l.Token != 0:
		s.clearLock(ws.LockID)
	case del && l.Token != 0:
		s.NonOwnerUnlocks++
		st.Note = "deleted the lock of another holder"
		if x.e.rec != nil {
			st.Note = "deleted the lock of W" + itoa(int(l.Holder)+1)
		}
		s.clearLock(ws.LockID)
	case del:
		st.Note = "lock already gone"
		s.clearLock(ws.LockID)
	default:
		st.Note = "not ours any more: left alone"
	}
	return nil
}

func (x executor) DeadLetter(st *worker.Step) error {
	s, ws := &x.e.s, x.ws
	reason := reasonLockBusy
	switch {
	case ws.Flow.Fatal():
		reason = reasonFatal
	case ws.Flow.Failed():
		reason = reasonRetries
	}
	m := &s.Msgs[ws.Msg]
	s.Msgs = append(s.Msgs, message{Job: m.Job, Key: m.Key, Attempt: m.Attempt, State: msgDead, Worker: -1, Reason: reason,
		Dup: m.Dup, At: s.Now})
	st.Note = x.e.ack(x.w) // ack re-reads the message: the append may have moved the slice
	return nil
}
