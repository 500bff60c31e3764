package worker

import "fmt"

// Step is one operation of the flow as it happens. The observer that
// carries it out (the simulator's engine on its in-memory state, Core on
// real systems) sets Result and Note; the observers that record it (the
// timelines) read them.
type Step struct {
	Op     Op
	Result Result
	// Note is what a timeline shows beside the operation ("token 7",
	// "lock already gone"); "" when there is nothing to add.
	Note string
}

// Observer is told each operation of the flow, one method per kind of
// operation; Interpret picks the method. Operations that share a method
// tell themselves apart by s.Op: Ack is OpAckEarly or OpAck, Retry is
// OpRetry or OpRetryBusy, Effect is OpEffect or OpEffectTxn.
type Observer interface {
	Ack(s *Step) error
	Lock(s *Step) error
	UnlockBusy(s *Step) error
	Retry(s *Step) error
	Check(s *Step) error
	Claim(s *Step) error
	Work(s *Step) error
	Effect(s *Step) error
	Commit(s *Step) error
	MarkFailed(s *Step) error
	Unlock(s *Step) error
	DeadLetter(s *Step) error
}

// Interpret calls o's method for s.Op: the one place an operation is
// mapped to what is done (or recorded) for it.
func Interpret(o Observer, s *Step) error {
	switch s.Op {
	case OpAckEarly, OpAck:
		return o.Ack(s)
	case OpLock:
		return o.Lock(s)
	case OpUnlockBusy:
		return o.UnlockBusy(s)
	case OpRetry, OpRetryBusy:
		return o.Retry(s)
	case OpCheck:
		return o.Check(s)
	case OpClaim:
		return o.Claim(s)
	case OpWork:
		return o.Work(s)
	case OpEffect, OpEffectTxn:
		return o.Effect(s)
	case OpCommit:
		return o.Commit(s)
	case OpMarkFailed:
		return o.MarkFailed(s)
	case OpUnlock:
		return o.Unlock(s)
	case OpDeadLetter:
		return o.DeadLetter(s)
	}
	return fmt.Errorf("unknown operation %d", s.Op)
}

// Advance carries out s.Op with o and returns what follows: the next
// operation, and the fault points the delivery is at once s.Op is done.
// It is one step of the walk Core makes through a delivery; the simulator
// takes the same steps one scheduler action at a time.
func (f *Flow) Advance(p *Profile, o Observer, s *Step) (next Op, at Points, err error) {
	if err := Interpret(o, s); err != nil {
		return OpDone, 0, err
	}
	next = f.Next(p, s.Op, s.Result)
	return next, Reached(p, s.Op, s.Result, next), nil
}
