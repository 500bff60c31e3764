package consume

import (
	"context"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A read or a replay takes messages off the queue (unacked) and, at the
// end, acks them or gives them back. The broker applies both
// asynchronously, and a passive queue.declare right after the channel
// closed does not see them yet: a classic queue answers the declare ahead
// of the requeue it is still working through, and a quorum queue returns
// a closed channel's messages only when its Raft leader has applied that.
// Five reads of 20,000 dead letters back to back counted 20,000 then 3,501
// (classic) or 97 (quorum) when each read closed at once and the next took
// its count at once (TestBackToBackReadsCountTheSame). Quorum channels
// also stash acks and requeues client-side while more than 32 of their
// commands are unapplied (rabbit_fifo_client's soft limit), and drop the
// stash when they close without a basic.cancel first: 3,000 single acks
// then a close left 474 to 2,967 of them back in the queue here.
//
// So a read or a replay cancels its consumer, gives back what it holds and
// then, with the channel still open, waits until the queue shows every
// message it took settled; and it starts by waiting for an earlier
// reader's consumer to be gone, or its count at the start misses that
// reader's messages. A quorum queue keeps a cancelled consumer (and
// counts it) until every message it was given is settled or returned, so
// "no consumer" means "nothing outstanding" there; a classic queue drops a
// cancelled consumer at once, so its ready count must be back as well.

// probeSlow is when a reading of "empty, no consumer" stops being
// believable: a quorum queue's passive declare answers {0 messages,
// 0 consumers} when its leader does not reply within 250 ms
// (rabbit_quorum_queue:stat/2), the same answer as a truly empty queue.
const probeSlow = 200 * time.Millisecond

// Default waits for the broker to settle a queue.
const (
	// defaultStartWait bounds the wait for an earlier reader's messages
	// before a read starts.
	defaultStartWait = 5 * time.Second
	// defaultSettleWait bounds the wait, at the end, for this read's
	// acks and requeues to be applied.
	defaultSettleWait = 30 * time.Second
	// interruptedSettle bounds that wait after Ctrl-C or --timeout.
	interruptedSettle = 5 * time.Second
)

// probeQueue reads the queue's counts and says whether to trust them.
func probeQueue(conn *amqp.Connection, queue string) (QueueState, bool, error) {
	t := time.Now()
	st, err := InspectQueue(conn, queue)
	if err != nil {
		return st, false, err
	}
	trusted := time.Since(t) < probeSlow || st.Messages > 0 || st.Consumers > 0
	return st, trusted, nil
}

// waitQueue reads the queue until ok holds on a trusted reading or budget
// has passed (at least one reading either way). It returns the last
// reading and whether ok held.
func waitQueue(ctx context.Context, conn *amqp.Connection, queue string, budget time.Duration,
	ok func(QueueState) bool) (QueueState, bool, error) {
	deadline := time.Now().Add(budget)
	pause := 5 * time.Millisecond
	for {
		st, trusted, err := probeQueue(conn, queue)
		if err != nil {
			return st, false, err
		}
		if trusted && ok(st) {
			return st, true, nil
		}
		if !time.Now().Before(deadline) {
			return st, false, nil
		}
		t := time.NewTimer(min(pause, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return st, false, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// SettleContext is the context for the wait at the end: it outlives an
// interrupt (the messages must still be settled before the channel
// closes), but then waits only briefly.
func SettleContext(ctx context.Context, budget time.Duration) (context.Context, time.Duration) {
	if budget <= 0 {
		budget = defaultSettleWait
	}
	if ctx.Err() != nil {
		budget = min(budget, interruptedSettle)
	}
	return context.WithoutCancel(ctx), budget
}

// AwaitSettled reads the queue through conn until it shows a reader's
// messages settled - no consumer beyond others and, when nobody else
// consumes, at least back messages in it - or budget has passed; it
// returns the last reading and whether it got there.
func AwaitSettled(ctx context.Context, conn *amqp.Connection, queue string, others, back int,
	budget time.Duration) (QueueState, bool, error) {
	return waitQueue(ctx, conn, queue, budget, settled(others, back))
}

// settled reports whether a reading shows a queue with everything this
// reader took settled: no consumer beyond the others attached at the
// start, and, when nobody else consumes, at least back the messages it
// requeued.
func settled(others, back int) func(QueueState) bool {
	return func(s QueueState) bool {
		return s.Consumers <= others && (others > 0 || s.Messages >= back)
	}
}
