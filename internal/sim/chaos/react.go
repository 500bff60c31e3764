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
// holds rec.mu, after recording the fault.
func (rec *recorder) await(lane string) {
	rec.awaiting = &awaited{lane: lane, until: time.Now().Add(reactWait)}
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
func (rec *recorder) noted(lane, kind string) {
	if a := rec.awaiting; a != nil && a.lane == lane && reacts(kind) {
		rec.awaiting = nil
	}
}

// unreacted says which copy's reaction is still awaited; "" none.
func (rec *recorder) unreacted(now time.Time) string {
	if a := rec.awaiting; a != nil && now.Before(a.until) {
		return a.lane + " has not reacted yet to the connection dupctl dropped"
	}
	return ""
}

// backInBroker names a key whose message went back to the broker - a
// delivery of it ended requeued, or returned with its connection - and
// has not been delivered again since, within reactWait of going back:
// the broker may be handing it to a worker right now, when the queue
// counts it as ready no more and no proxy has seen it yet. "" when none;
// one gone back longer ago was dropped or dead-lettered by the broker.
func backInBroker(ds []*delivery, now time.Time) string {
	back := map[string]int{}
	last := map[string]time.Time{}
	var keys []string
	for _, d := range ds {
		if _, ok := back[d.key]; !ok {
			keys = append(keys, d.key)
		}
		if d.redelivered {
			back[d.key]--
		}
		if d.end == "requeued" || d.end == "returned" {
			back[d.key]++
			if d.to.After(last[d.key]) {
				last[d.key] = d.to
			}
		}
	}
	for _, k := range keys {
		if back[k] > 0 && now.Sub(last[k]) < reactWait {
			return k
		}
	}
	return ""
}

// undelivered names a key with a message dupctl published that no worker
// has been delivered yet: more publishes of it than first deliveries (a
// redelivery is a message delivered before). The queue's count of ready
// messages does not cover one the broker is handing over. "" when none.
func undelivered(events []Event, ds []*delivery) string {
	n := map[string]int{}
	var keys []string
	for _, e := range events {
		if e.Kind == "publish" && e.Lane == "dupctl" {
			if n[e.Key] == 0 {
				keys = append(keys, e.Key)
			}
			n[e.Key]++
		}
	}
	for _, d := range ds {
		if !d.redelivered {
			n[d.key]--
		}
	}
	for _, k := range keys {
		if n[k] > 0 {
			return k
		}
	}
	return ""
}
