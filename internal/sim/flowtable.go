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
	next    [worker.NumOps][worker.NumResults]worker.Op
	// at is worker.Reached by op, result and whether the next operation
	// is the ack (the only thing Reached asks of it).
	at [worker.NumOps][worker.NumResults][2]worker.Points
}

const dynamic = worker.Op(255)

func newFlowTable(p worker.Profile) *flowTable {
	t := &flowTable{profile: p}
	for op := worker.Op(0); op < worker.NumOps; op++ {
		for r := worker.Result(0); r < worker.NumResults; r++ {
			// Probe with the first and the last attempt: a transition that
			// gives the same answer for both and leaves the flow as it was
			// depends on neither.
			first := worker.Flow{Attempt: 1, MaxAttempts: 255}
			last := worker.Flow{Attempt: 255, MaxAttempts: 255}
			a, b := first.Next(&p, op, r), last.Next(&p, op, r)
			if a == b && !first.Failed() && !last.Failed() {
				t.next[op][r] = a
			} else {
				t.next[op][r] = dynamic
			}
			t.at[op][r][0] = worker.Reached(&p, op, r, worker.OpDone)
			t.at[op][r][1] = worker.Reached(&p, op, r, worker.OpAck)
		}
	}
	return t
}

// step returns the operation after op and the fault points reached.
func (t *flowTable) step(f *worker.Flow, op worker.Op, r worker.Result) (worker.Op, worker.Points) {
	next := t.next[op][r]
	if next == dynamic || f.Failed() {
		next = f.Next(&t.profile, op, r)
	}
	ack := 0
	if next == worker.OpAck {
		ack = 1
	}
	return next, t.at[op][r][ack]
}
