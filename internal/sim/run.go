package sim

import "slices"

// Violation is an invariant a run broke.
type Violation uint8

const (
	VDuplicate      Violation = 1 << iota // a business key's side effect ran more than once
	VLoss                                 // a job neither ran nor reached the DLQ
	VNonOwnerUnlock                       // a lock was released by a worker that did not hold it
	VLivelock                             // the run did not finish within MaxSteps
)

// Has reports whether v includes o.
func (v Violation) Has(o Violation) bool { return v&o != 0 }

func (v Violation) String() string {
	var out []string
	for _, x := range []struct {
		v Violation
		s string
	}{{VDuplicate, "duplicate"}, {VLoss, "loss"}, {VNonOwnerUnlock, "non-owner-unlock"}, {VLivelock, "livelock"}} {
		if v.Has(x.v) {
			out = append(out, x.s)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	s := out[0]
	for _, o := range out[1:] {
		s += "+" + o
	}
	return s
}

// Stats are what one run counted.
type Stats struct {
	Steps           int `json:"steps"`
	Deliveries      int `json:"deliveries"`
	Effects         int `json:"effects"`
	Duplicates      int `json:"duplicates"`
	Lost            int `json:"lost"`
	DeadLettered    int `json:"dead_lettered"`
	LockExpiries    int `json:"lock_expiries"`
	AckTimeouts     int `json:"ack_timeouts"`
	Renewals        int `json:"renewals"`
	Fenced          int `json:"fenced"`
	Caught          int `json:"caught_by_idempotency"`
	NonOwnerUnlocks int `json:"non_owner_unlocks"`
	Overwrites      int `json:"succeeded_overwritten"`
	LocksLost       int `json:"locks_lost_in_failover"`
}

func (e *engine) stats() Stats {
	s := &e.s
	st := Stats{Steps: int(s.Steps), Deliveries: int(s.Deliveries), Duplicates: int(s.Dups), LockExpiries: int(s.LockExpiries),
		AckTimeouts: int(s.AckTimeouts), Renewals: int(s.Renewals), Fenced: int(s.Fenced), Caught: int(s.Caught),
		NonOwnerUnlocks: int(s.NonOwnerUnlocks), Overwrites: int(s.Overwrites), LocksLost: int(s.LocksLost)}
	for _, n := range s.Effects {
		st.Effects += int(n)
	}
	for _, m := range s.Msgs {
		if m.State == msgDead {
			st.DeadLettered++
		}
	}
	return st
}

// violations are the invariants broken so far; terminal adds the loss
// check, which only makes sense once nothing more can happen.
func (e *engine) violations(terminal bool) Violation {
	var v Violation
	if e.s.Dups > 0 {
		v |= VDuplicate
	}
	if e.s.NonOwnerUnlocks > 0 {
		v |= VNonOwnerUnlock
	}
	if terminal && e.lost() > 0 {
		v |= VLoss
	}
	return v
}

// runRandom runs one schedule chosen by a PRNG seeded with seed. With
// stopOnDup it returns at the first duplicate (exploration); trace, when
// not nil, receives every action taken.
func (e *engine) runRandom(seed uint64, stopOnDup bool, trace *[]Action, buf []Action) (Violation, []Action) {
	e.reset(seed)
	r := newRNG(seed ^ 0x2545f4914f6cdd1d)
	maxSteps := int32(e.cfg.MaxSteps)
	for e.s.Steps < maxSteps {
		if e.s.calm() {
			// Most steps come after the faults are spent, and then the
			// choice needs no list.
			return e.runCalm(&r, stopOnDup, trace), buf
		}
		buf = e.enabled(buf[:0])
		if len(buf) == 0 {
			return e.violations(true), buf
		}
		// Draw only when there is a choice: a forced step costs no
		// random number (a third of all steps).
		a := buf[0]
		if len(buf) > 1 {
			a = buf[r.intn(len(buf))]
		}
		if a.Kind() == aStop {
			return e.violations(true), buf
		}
		if trace != nil {
			*trace = append(*trace, a)
		}
		e.apply(a)
		if stopOnDup && e.s.Dups > 0 {
			return e.violations(false), buf
		}
	}
	return e.violations(false) | VLivelock, buf
}

// runCalm finishes a random schedule from a calm state (no fault or
// duplicate left to offer) with the choices runRandom's draw over
// enabled's list would make: a worker's step (pickStep), else the tick to
// the next timer, the only action then, so no draw. The set of workers
// that can step is kept up to date rather than rebuilt: a step changes
// whether its own worker can step, and only a receive (it takes a ready
// message) changes it for others, idle ones; a tick can change anything.
// No calm step makes a message ready: a retry waits out its backoff, and
// requeues come from faults and ack deadlines (ticks).
// TestRandomFastPathMatchesEnabled holds this to the plain rule.
func (e *engine) runCalm(r *rng, stopOnDup bool, trace *[]Action) Violation {
	maxSteps := int32(e.cfg.MaxSteps)
	can, n := e.steppable()
	for e.s.Steps < maxSteps {
		if n == 0 {
			if !e.timerPending() {
				return e.violations(true)
			}
			if trace != nil {
				*trace = append(*trace, act(aTick, 0))
			}
			e.applyOther(act(aTick, 0))
			can, n = e.steppable()
			continue
		}
		w := pickStep(r, can, n)
		if trace != nil {
			*trace = append(*trace, act(aStep, w))
		}
		ws := &e.s.W[w] // a step does not move the workers' slice
		receive := ws.Msg < 0
		e.step(w, ws)
		if stopOnDup && e.s.Dups > 0 {
			return e.violations(false)
		}
		if receive {
			can, n = e.steppable()
		} else if ok, _ := e.canStep(ws, e.s.Now, readyUnasked); !ok {
			can &^= workerBit(w)
			n--
		}
	}
	return e.violations(false) | VLivelock
}

// replay re-runs a recorded schedule. Strict: every action must be
// possible when its turn comes (a replay token). Lenient (shrinking and
// counterfactuals): a step that is not possible is skipped; a fault fires
// as soon as its worker has done what preceded it in the schedule and is
// at the fault's named point (so "crash W1 before the ack" stays before
// the ack under a profile with fewer steps), or never; when the schedule
// runs out, the run is completed by the default policy: the first
// possible step, no new faults.
func (e *engine) replay(seed uint64, actions []Action, strict, stopOnDup bool) (Violation, []Action, bool) {
	e.reset(seed)
	r := &replayer{e: e, strict: strict, stopOnDup: stopOnDup}
	if strict {
		return r.inOrder(actions)
	}
	return r.byMeaning(actions)
}

// replayer plays a schedule on a reset engine, keeping what it applied.
type replayer struct {
	e                 *engine
	strict, stopOnDup bool
	buf, done         []Action
	faults            []pendingFault
}

type pendingFault struct {
	a     Action
	fired bool
}

// apply applies the enabled action that matches a, if any.
func (r *replayer) apply(a Action) bool {
	r.buf = r.e.enabled(r.buf[:0])
	b, ok := r.e.match(r.buf, a, r.strict)
	if !ok {
		return false
	}
	r.done = append(r.done, b)
	r.e.apply(b)
	return true
}

func (r *replayer) dup() bool { return r.stopOnDup && r.e.s.Dups > 0 }

// inOrder applies every action where it stands, and fails at the first
// that is not enabled.
func (r *replayer) inOrder(actions []Action) (Violation, []Action, bool) {
	e := r.e
	for _, a := range actions {
		if int(e.s.Steps) >= e.cfg.MaxSteps {
			return e.violations(false) | VLivelock, r.done, true
		}
		if a.Kind() == aStop {
			break
		}
		if !r.apply(a) {
			return 0, r.done, false
		}
		if r.dup() {
			return e.violations(false), r.done, true
		}
	}
	return e.violations(e.terminal()), r.done, true
}

// byMeaning fires faults by meaning, not position: on the same worker's
// same delivery, at the same named point; the other actions are applied
// where they match, and the run is completed with the default policy.
func (r *replayer) byMeaning(actions []Action) (Violation, []Action, bool) {
	e := r.e
	for _, a := range actions {
		if a.isFault() && a.Kind() != aDup {
			r.faults = append(r.faults, pendingFault{a: a})
		}
	}
	for _, a := range actions {
		if int(e.s.Steps) >= e.cfg.MaxSteps {
			return e.violations(false) | VLivelock, r.done, true
		}
		if a.Kind() == aStop {
			break
		}
		for r.fire() {
		}
		if r.dup() {
			return e.violations(false), r.done, true
		}
		if a.isFault() && a.Kind() != aDup {
			continue // fired by fire() when its worker gets there
		}
		r.apply(a)
		if r.dup() {
			return e.violations(false), r.done, true
		}
	}
	return r.complete()
}

// fire applies every pending fault that is enabled now.
func (r *replayer) fire() bool {
	fired := false
	for i := range r.faults {
		f := &r.faults[i]
		if !f.fired && r.apply(f.a) {
			f.fired, fired = true, true
		}
	}
	return fired
}

// complete runs on with the default policy until nothing can progress.
func (r *replayer) complete() (Violation, []Action, bool) {
	e := r.e
	for int(e.s.Steps) < e.cfg.MaxSteps {
		for r.fire() {
		}
		if r.dup() {
			return e.violations(false), r.done, true
		}
		r.buf = e.enabled(r.buf[:0])
		next := firstProgress(r.buf)
		if next == 0 {
			return e.violations(true), r.done, true
		}
		r.done = append(r.done, next)
		e.apply(next)
		if r.dup() {
			return e.violations(false), r.done, true
		}
	}
	return e.violations(false) | VLivelock, r.done, true
}

// terminal reports whether nothing but optional faults can happen.
func (e *engine) terminal() bool { return firstProgress(e.enabled(nil)) == 0 }

// firstProgress is the first worker step or clock tick among the actions
// (what the default policy takes), or 0 when only faults or a stop remain.
func firstProgress(buf []Action) Action {
	for _, a := range buf {
		if k := a.Kind(); k == aStep || k == aTick {
			return a
		}
	}
	return 0
}

// match finds a in the enabled actions. Strictly, only the identical
// action matches. Leniently, a crash or pause recorded at a named point
// matches the worker's crash or pause whenever the worker is at that
// point, whatever other points coincide with it under this profile.
func (e *engine) match(buf []Action, a Action, strict bool) (Action, bool) {
	if slices.Contains(buf, a) {
		return a, true
	}
	if strict || (a.Kind() != aCrash && a.Kind() != aPause && a.Kind() != aDrop && a.Kind() != aFail && a.Kind() != aFailover) {
		return 0, false
	}
	w := a.Arg()
	if w >= len(e.s.W) || e.s.W[w].Received != a.ordinal() || (a.point() != 0 && !e.s.W[w].At.Has(a.point())) {
		return 0, false
	}
	for _, b := range buf {
		if b.Kind() == a.Kind() && b.Arg() == w {
			return b, true
		}
	}
	return 0, false
}
