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
	return StartStateWith(ctx, conn, queue, 0, wait)
}

// StartStateWith is StartState for a command that goes on after a lost
// node: up to others consumers may stay counted (the lost connection's,
// Expect.Ghosts).
func StartStateWith(ctx context.Context, conn *amqp.Connection, queue string, others int, wait time.Duration) (QueueState, error) {
	if wait <= 0 {
		wait = defaultStartWait
	}
	st, _, err := waitQueue(ctx, conn, queue, wait, func(s QueueState) bool { return s.Consumers <= others })
	return st, err
}

// AwaitMessages waits (at most wait) for a trusted reading of the queue
// with no consumer beyond others and at least atLeast messages, and
// reports whether one came; it returns the last reading either way.
func AwaitMessages(ctx context.Context, conn *amqp.Connection, queue string, others, atLeast int,
	wait time.Duration) (QueueState, bool, error) {
	return waitQueue(ctx, conn, queue, wait, func(s QueueState) bool { return s.Consumers <= others && s.Messages >= atLeast })
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

// NodeDown is the broker's answer when err says the queue's node is down
// (a classic queue, which no other node can serve until that one is
// back); "" otherwise.
func NodeDown(err error) string {
	var down *nodeDown
	if errors.As(err, &down) {
		return down.reason
	}
	return ""
}

// QueueError makes a missing queue bad input about the Queue option (the
// name or the vhost is wrong), and a queue whose node is down the broker's
// failure (exit 3); other errors pass through.
func QueueError(queue string, err error) error {
	if NodeDown(err) != "" {
		return problem.System(err, "a classic queue lives on one node: no other node can serve it until that node is back")
	}
	if !IsNotFound(err) {
		return err
	}
	return &problem.Input{Field: "Queue", Value: queue, Quote: true, Why: "queue not found",
		Hint: "check the name and the vhost in {AMQPURL}", Err: err}
}
