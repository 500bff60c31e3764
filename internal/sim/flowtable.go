package sim

import "github.com/dupctl/dupctl/internal/worker"

// flowTable is one profile's consumer flow as lookups, built once per
// profile: exploration asks "what comes after op returned r" on every step,
// and a table answers without worker.Flow's branches. Transitions that
// depend on the delivery's attempt counter or put it on the failure path
// are marked dynamic and left to worker.Flow, as is every transition of a
// delivery already on the failure path.
type flowTable struct {
	profile worker.Profile
	cells   [worker.NumOps][worker.NumResults]flowCell
	// at is worker.Reached by op, result and whether the next operation
	// is the ack (the only thing Reached asks of it), for dynamic cells.
	at [worker.NumOps][worker.NumResults][2]worker.Points
}

// flowCell is what follows one operation's result when it is static.
type flowCell struct {
	next worker.Op
	at   worker.Points
}

const dynamic = worker.Op(255)

func newFlowTable(p worker.Profile) *flowTable {
	t := &flowTable{profile: p}
	for op := worker.Op(0); op < worker.NumOps; op++ {
		for r := worker.Result(0); r < worker.NumResults; r++ {
			t.at[op][r][0] = worker.Reached(&p, op, r, worker.OpDone)
			t.at[op][r][1] = worker.Reached(&p, op, r, worker.OpAck)
			// Probe with the first and the last attempt: a transition that
			// gives the same answer for both and leaves the flow as it was
			// depends on neither.
			first := worker.Flow{Attempt: 1, MaxAttempts: 255}
			last := worker.Flow{Attempt: 255, MaxAttempts: 255}
			a, b := first.Next(&p, op, r), last.Next(&p, op, r)
			c := &t.cells[op][r]
			c.next = dynamic
			if a == b && !first.Failed() && !last.Failed() {
				c.next, c.at = a, t.reached(op, r, a)
			}
		}
	}
	return t
}

// step returns the operation after op and the fault points reached (exec
// writes it out as lookup, then slowStep, to inline the lookup).
func (t *flowTable) step(f *worker.Flow, op worker.Op, r worker.Result) (worker.Op, worker.Points) {
	if next, at, ok := t.lookup(f, op, r); ok {
		return next, at
	}
	return t.slowStep(f, op, r)
}

// lookup is step for a static transition, small enough to be inlined into
// every worker step; ok is false when slowStep must decide.
func (t *flowTable) lookup(f *worker.Flow, op worker.Op, r worker.Result) (worker.Op, worker.Points, bool) {
	c := t.cells[op%worker.NumOps][r%worker.NumResults]
	return c.next, c.at, c.next != dynamic && !f.Failed()
}

// slowStep asks worker.Flow: for transitions that depend on the attempt
// counter or the failure path.
func (t *flowTable) slowStep(f *worker.Flow, op worker.Op, r worker.Result) (worker.Op, worker.Points) {
	next := f.Next(&t.profile, op, r)
	return next, t.reached(op, r, next)
}

// reached is the fault points op's result r reaches when next follows.
func (t *flowTable) reached(op worker.Op, r worker.Result, next worker.Op) worker.Points {
	ack := 0
	if next == worker.OpAck {
		ack = 1
	}
	return t.at[op][r][ack]
}
