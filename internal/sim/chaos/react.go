package chaos

import "time"

// A copy whose connection the fault dropped - its PostgreSQL connection
// at after-write or before-commit, its AMQP connection at before-ack -
// lives on and reacts: it retries its write, requeues, reconnects, or
// dies. The run does not settle before that reaction is on record (a
// quiet spell is no proof on a loaded machine, where the reaction can
// come later than any quiet period), for reactWait at the most: a copy
// that swallows the error and does nothing is not waited for longer.

// reactWait bounds the wait for a copy's reaction to a dropped connection.
const reactWait = 5 * time.Second

// awaited is a copy whose reaction to a dropped connection is awaited.
type awaited struct {
	lane  string
	until time.Time
}

// await starts waiting for the reaction of the copy on lane; the caller
// holds r.mu, after recording the fault.
func (r *run) await(lane string) {
	r.awaiting = &awaited{lane: lane, until: time.Now().Add(reactWait)}
}

// reacts reports whether an event of the awaited copy is its reaction:
// anything it did, or its exit, but not dupctl's own records of the drop
// (the fault, the commit it withheld the reply of, the deliveries its
// closed connection returned).
func reacts(kind string) bool {
	return kind != "fault" && kind != "commit" && kind != "returned"
}

// noted clears the wait once the awaited copy reacted; the caller holds
// r.mu.
func (r *run) noted(lane, kind string) {
	if a := r.awaiting; a != nil && a.lane == lane && reacts(kind) {
		r.awaiting = nil
	}
}

// unreacted says which copy's reaction is still awaited; "" none.
func (r *run) unreacted(now time.Time) string {
	if a := r.awaiting; a != nil && now.Before(a.until) {
		return a.lane + " has not reacted yet to the connection dupctl dropped"
	}
	return ""
}
