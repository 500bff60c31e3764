package worker

// Op is one operation of the consumer flow. Each is a single round trip to
// one system (Redis, PostgreSQL, RabbitMQ, the side-effect sink), which is
// the granularity at which the simulator interleaves workers.
type Op uint8

const (
	OpDone       Op = iota
	OpAckEarly      // basic.ack on receipt (ack=before)
	OpLock          // SET key token NX PX ttl (+ INCR fence)
	OpUnlockBusy    // the deferred unlock on the lock-busy path: plain DEL deletes the holder's lock
	OpRetryBusy     // lock busy: republish to the retry queue with backoff, ack the original
	OpCheck         // SELECT status (or GET from the cache)
	OpClaim         // INSERT ... PROCESSING ON CONFLICT DO NOTHING RETURNING
	OpWork          // the job's own work: takes the job's duration
	OpEffect        // the side effect (payment call, e-mail, ...)
	OpEffectTxn     // BEGIN; claim SUCCEEDED unless already; effect; COMMIT
	OpCommit        // UPDATE status = SUCCEEDED
	OpMarkFailed    // UPDATE status = FAILED, attempts + 1
	OpUnlock        // release: compare-and-delete or plain DEL
	OpAck           // basic.ack after the commit
	OpRetry         // republish with attempt + 1 after backoff, ack the original
	OpDeadLetter    // publish to the DLQ with context, ack the original
	NumOps          // the number of operations
)

var opNames = [NumOps]string{"done", "ack-early", "lock", "unlock-busy", "retry-busy", "check", "claim", "work", "effect", "effect-txn",
	"commit", "mark-failed", "unlock", "ack", "retry", "dead-letter"}

func (o Op) String() string {
	if o < NumOps {
		return opNames[o]
	}
	return "op?"
}

// Result is what an operation returned.
type Result uint8

const (
	ResOK        Result = iota
	ResBusy             // lock held by another; claim conflict; already SUCCEEDED
	ResRetryable        // the side effect failed with a temporary error
	ResFatal            // the side effect failed with a permanent error
	NumResults          // the number of results
)

// Point is a named place in the flow where a fault can be injected.
type Point uint8

const (
	PointNone         Point = iota
	PointAfterReceive       // delivered, nothing done yet
	PointAfterLock          // lock held, nothing checked
	PointAfterReserve       // status checked or claimed, work not started
	PointBeforeEffect       // work done, side effect not yet called (GC pause point)
	PointAfterEffect        // side effect done, status not committed
	PointAfterCommit        // status committed, lock not released
	PointBeforeAck          // lock released, ack not sent
	NumPoints
)

var pointNames = [NumPoints]string{"", "after-receive", "after-lock", "after-reserve", "before-effect", "after-effect", "after-commit",
	"before-ack"}

func (p Point) String() string {
	if p < NumPoints {
		return pointNames[p]
	}
	return "point?"
}

// ParsePoint reads a point name.
func ParsePoint(s string) (Point, bool) {
	for i := PointAfterReceive; i < NumPoints; i++ {
		if pointNames[i] == s {
			return i, true
		}
	}
	return PointNone, false
}

// PointNames lists the fault points in flow order.
func PointNames() []string { return pointNames[1:] }

// Flow is one delivery's progress through the consumer flow. It is a value
// (four bytes) so the simulator can copy and hash it freely.
type Flow struct {
	Attempt     uint8 // the application's attempt counter of this delivery (1-based)
	MaxAttempts uint8 // dead-letter when a retry would exceed this
	failed      bool  // on the failure path
	fatal       bool  // the failure was non-retryable
}

// Start returns the first operation for a delivery and the fault point the
// delivery is at.
func (f *Flow) Start(p *Profile) Op {
	if p.Ack == AckBefore {
		return OpAckEarly
	}
	return f.afterAckEarly(p)
}

func (f *Flow) afterAckEarly(p *Profile) Op {
	if p.Lock {
		return OpLock
	}
	return f.reserve(p)
}

func (f *Flow) reserve(p *Profile) Op {
	switch p.Idem {
	case IdemCheck:
		return OpCheck
	case IdemClaim:
		return OpClaim
	}
	return OpWork
}

// release is the tail of every path: unlock if locked, then ack (unless
// acked on receipt) or the failure's republish.
func (f *Flow) release(p *Profile) Op {
	if p.Lock {
		return OpUnlock
	}
	return f.afterUnlock(p)
}

func (f *Flow) afterUnlock(p *Profile) Op {
	if f.failed {
		if f.fatal || f.Attempt >= f.MaxAttempts {
			return OpDeadLetter
		}
		return OpRetry
	}
	if p.Ack == AckBefore {
		return OpDone
	}
	return OpAck
}

// retryBusy: a busy lock is not an error, but it is not free either: the
// message goes back with backoff, and to the DLQ once attempts run out, so
// contention can never loop forever.
func (f *Flow) retryBusy() Op {
	if f.Attempt >= f.MaxAttempts {
		return OpDeadLetter
	}
	return OpRetryBusy
}

// Next returns the operation after op, given its result.
func (f *Flow) Next(p *Profile, op Op, r Result) Op {
	switch op {
	case OpAckEarly:
		return f.afterAckEarly(p)
	case OpLock:
		if r == ResBusy {
			if p.Unlock == UnlockDel {
				return OpUnlockBusy
			}
			return f.retryBusy()
		}
		return f.reserve(p)
	case OpUnlockBusy:
		return f.retryBusy()
	case OpCheck, OpClaim:
		if r == ResBusy {
			return f.release(p) // already done (or claimed): skip the work
		}
		return OpWork
	case OpWork:
		if p.Idem == IdemTxn {
			return OpEffectTxn
		}
		return OpEffect
	case OpEffect, OpEffectTxn:
		switch r {
		case ResRetryable, ResFatal:
			f.failed, f.fatal = true, r == ResFatal
			if p.Idem != IdemNone {
				return OpMarkFailed
			}
			return f.release(p)
		case ResBusy: // the transaction found SUCCEEDED: rolled back, nothing done
			return f.release(p)
		}
		if p.Idem == IdemCheck || p.Idem == IdemClaim {
			return OpCommit
		}
		return f.release(p)
	case OpCommit, OpMarkFailed:
		return f.release(p)
	case OpUnlock:
		return f.afterUnlock(p)
	}
	return OpDone
}

// Points is a set of fault points: several names can describe one moment
// (without a ledger, "after the effect" is also "after the commit").
type Points uint16

// Has reports whether pt is in the set.
func (ps Points) Has(pt Point) bool { return ps&(1<<pt) != 0 }

// Of returns the set holding pts.
func Of(pts ...Point) Points {
	var ps Points
	for _, pt := range pts {
		ps |= 1 << pt
	}
	return ps
}

// Reached is the set of fault points a delivery is at after op returned r
// and the flow chose next.
func Reached(p *Profile, op Op, r Result, next Op) Points {
	var ps Points
	switch op {
	case OpAckEarly:
		ps = Of(PointAfterReceive)
	case OpLock:
		if r == ResOK {
			ps = Of(PointAfterLock)
		}
	case OpCheck, OpClaim:
		if r == ResOK {
			ps = Of(PointAfterReserve)
		}
	case OpWork:
		ps = Of(PointBeforeEffect)
	case OpEffect:
		if r == ResOK {
			ps = Of(PointAfterEffect)
			if p.Idem == IdemNone {
				ps |= Of(PointAfterCommit)
			}
		}
	case OpEffectTxn:
		if r == ResOK {
			ps = Of(PointAfterEffect, PointAfterCommit)
		}
	case OpCommit:
		ps = Of(PointAfterCommit)
	}
	if next == OpAck && ps != 0 || op == OpUnlock && next == OpAck {
		ps |= Of(PointBeforeAck)
	}
	return ps
}

// Bits packs the flow into one word, for hashing simulator states.
func (f Flow) Bits() uint32 {
	b := uint32(f.Attempt) | uint32(f.MaxAttempts)<<8
	if f.failed {
		b |= 1 << 16
	}
	if f.fatal {
		b |= 1 << 17
	}
	return b
}

// Failed reports whether the delivery is on the failure path, and Fatal
// whether that failure is permanent.
func (f Flow) Failed() bool { return f.failed }
func (f Flow) Fatal() bool  { return f.fatal }
