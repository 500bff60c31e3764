package consume

import (
	"context"
	"errors"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	amqp "github.com/rabbitmq/amqp091-go"
)

// StartState waits (at most wait; 0 is 5 s) until the queue has no
// consumer, so an earlier reader's messages are back and in the count,
// and returns the queue's state then. When a consumer stays, it returns
// the state with that consumer: the caller reports it.
func StartState(ctx context.Context, conn *amqp.Connection, queue string, wait time.Duration) (QueueState, error) {
	if wait <= 0 {
		wait = defaultStartWait
	}
	st, _, err := waitQueue(ctx, conn, queue, wait, func(s QueueState) bool { return s.Consumers == 0 })
	return st, err
}

// AwaitIdle waits (at most wait) for a reading of the queue it can trust
// with no consumer beyond the others attached before the read, and
// reports whether one came: after a node of a cluster was lost, the queue
// answers so once a quorum queue has a leader again and the lost consumer
// is gone (its messages back).
func AwaitIdle(ctx context.Context, conn *amqp.Connection, queue string, others int, wait time.Duration) (QueueState, bool, error) {
	return waitQueue(ctx, conn, queue, wait, func(s QueueState) bool { return s.Consumers <= others })
}

// Window keeps the prefetch w (500 when unset) no larger than what will
// be read, so a peek of 5 messages does not take 500 off the queue for
// its duration.
func Window(w, target int) int {
	if w <= 0 {
		w = 500
	}
	return max(1, min(w, target))
}

// IsNotFound reports whether err says the queue does not exist.
func IsNotFound(err error) bool { return errors.Is(err, errQueueNotFound) }

// QueueError makes a missing queue bad input about the Queue option (the
// name or the vhost is wrong); other errors pass through.
func QueueError(queue string, err error) error {
	if !IsNotFound(err) {
		return err
	}
	return &problem.Input{Field: "Queue", Value: queue, Quote: true, Why: "queue not found",
		Hint: "check the name and the vhost in {AMQPURL}", Err: err}
}

// AwaitNode dials (through dial, which tries the nodes still up first)
// until a node answers for the queue with a reading it can trust and no
// consumer on it - a lost reader's consumer gone and its messages back, a
// quorum queue's leader elected again - and returns that node's address;
// "" when none did within wait. A quorum queue without a leader answers
// late with "0 messages, 0 consumers", which a read must not take for its
// count.
func AwaitNode(ctx context.Context, dial func(context.Context) (*amqp.Connection, error), queue string, others int,
	wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		if node := probeNode(ctx, dial, queue, others, time.Until(deadline)); node != "" {
			return node
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ""
		case <-t.C:
		}
		if !time.Now().Before(deadline) {
			return ""
		}
	}
}

func probeNode(ctx context.Context, dial func(context.Context) (*amqp.Connection, error), queue string, others int,
	budget time.Duration) string {
	if budget <= 0 {
		return ""
	}
	dctx, cancel := context.WithTimeout(ctx, budget)
	conn, err := dial(dctx)
	cancel()
	if err != nil {
		return ""
	}
	defer conn.Close()
	if _, ok, err := AwaitIdle(ctx, conn, queue, others, budget); err != nil || !ok {
		return ""
	}
	return conn.RemoteAddr().String()
}
