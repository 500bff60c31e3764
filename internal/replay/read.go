package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	amqp "github.com/rabbitmq/amqp091-go"
)

// ReadDeps are what the read verbs (stats, peek, export) use: the broker,
// the clock and a progress meter.
type ReadDeps struct {
	Dial     Dialer
	Now      func() time.Time // nil: time.Now
	Progress progress.Meter   // nil: none
}

func (d *ReadDeps) defaults() {
	if d.Now == nil {
		d.Now = time.Now
	}
	d.Progress = progress.Or(d.Progress)
}

// ReadOptions shape a non-destructive read of a queue (stats, peek,
// export, replay --dry-run).
type ReadOptions struct {
	Queue  string
	Limit  int // 0: every message counted at the start
	Window int // prefetch
	// WindowBytes bounds the prefetch in bytes: 0 is DefaultWindowBytes,
	// a negative value no bound.
	WindowBytes int64
	// Idle ends the read when no message arrives for this long (the queue
	// held fewer messages than it said, or another consumer took them).
	Idle time.Duration
	// StartWait bounds the wait for the queue to have no consumer before
	// the count is taken (an earlier read's messages coming back); 0 is
	// DefaultStartWait. SettleWait bounds the wait at the end for this
	// read's messages to be back (settle.go); 0 is DefaultSettleWait.
	StartWait  time.Duration
	SettleWait time.Duration
}

// ReadResult says what a read saw.
type ReadResult struct {
	AtStart QueueState `json:"at_start"`
	// Target is how many messages the read meant to read: the count at
	// the start, or --limit when lower.
	Target int `json:"target"`
	Read   int `json:"read"`
	// Settled is false when the messages the read took were not all back
	// in the queue (or, with drain, gone from it) when it ended.
	Settled bool `json:"settled"`
	// AtEnd is the queue once the read's messages were back (or the last
	// reading when they were not); Acked are those a drain removed.
	AtEnd QueueState `json:"at_end"`
	Acked int        `json:"acked"`
	// Redelivered counts messages that were already marked redelivered
	// when read: someone (or an earlier peek) read them before.
	Redelivered int `json:"redelivered"`
	// Quorum is true when a message carried x-delivery-count: the queue is
	// a quorum queue and reading counts toward its delivery limit.
	Quorum bool `json:"quorum"`
	// MaxDeliveryCount is the highest x-delivery-count seen.
	MaxDeliveryCount int64 `json:"max_delivery_count"`
	// Malformed counts messages whose death headers had the wrong shape.
	Malformed int `json:"malformed_headers"`
}

// readQueue reads up to the count at the start (or Limit) messages and
// calls fn for each. Every message is held and, at the end, requeued with
// one basic.nack; with drain, commit runs first and the messages fn saw
// are acked only when it succeeds (export --drain: ack after fsync).
func readQueue(ctx context.Context, d ReadDeps, o ReadOptions, fn func(*Message) error, drain bool, commit func() error) (ReadResult, error) {
	var res ReadResult
	d.defaults()
	conn, err := d.Dial(ctx, "read")
	if err != nil {
		return res, err
	}
	defer conn.Close()
	st, err := startState(ctx, conn, o.Queue, o.StartWait)
	if err != nil {
		return res, queueError(o.Queue, err)
	}
	res.AtStart = st
	target := st.Messages
	if o.Limit > 0 && o.Limit < target {
		target = o.Limit
	}
	res.Target = target
	meter := d.Progress
	defer meter.Done()
	meter.SetTotal(int64(target))
	if target == 0 {
		res.Settled, res.AtEnd = true, st
		return res, commitIf(commit)
	}
	c, err := NewConsumer(conn, o.Queue, readWindow(o.Window, target), o.WindowBytes, false, "dupctl-read-"+NewRunID())
	if err != nil {
		return res, err
	}
	defer c.Close()
	idle := o.Idle
	if idle <= 0 {
		idle = 3 * time.Second
	}
	var lastTag uint64
	timer := time.NewTimer(idle)
	defer timer.Stop()
	var readErr error
loop:
	for res.Read < target {
		select {
		case si, ok := <-c.deliveries():
			if !ok {
				readErr = fmt.Errorf("read %q: %w", o.Queue, ErrChannelClosed)
				break loop
			}
			if err := c.Seen(si.d); err != nil {
				readErr = err
				break loop
			}
			lastTag = si.d.DeliveryTag
			res.Read++
			meter.Add(1)
			m := si.m
			res.note(m)
			if err := fn(m); err != nil {
				readErr = err
				break loop
			}
			if err := c.Hold(si.d); err != nil {
				readErr = err
				break loop
			}
			timer.Reset(idle)
		case <-timer.C:
			break loop
		case <-ctx.Done():
			readErr = ctx.Err()
			break loop
		}
	}
	c.Rest() // prefetched beyond the target: requeued with the rest
	if err := giveBack(c, readErr == nil && drain, lastTag, commit); err != nil {
		if readErr == nil {
			readErr = err
		}
	} else if readErr == nil && !drain {
		readErr = commitIf(commit)
	}
	sctx, budget := settleContext(ctx, o.SettleWait)
	end, ok, err := c.Settle(sctx, st.Consumers, st.Messages, budget)
	res.Settled, res.AtEnd, res.Acked = ok && err == nil, end, c.Acked()
	return res, readErr
}

// startState waits (at most wait) until the queue has no consumer, so an
// earlier reader's messages are back and in the count, and returns the
// queue's state then. When a consumer stays, it returns the state with
// that consumer: the caller reports it.
func startState(ctx context.Context, conn *amqp.Connection, queue string, wait time.Duration) (QueueState, error) {
	if wait <= 0 {
		wait = DefaultStartWait
	}
	st, _, err := waitQueue(ctx, conn, queue, wait, func(s QueueState) bool { return s.Consumers == 0 })
	return st, err
}

// giveBack requeues every message the read holds - or, with drain, runs
// commit and acks those up to lastTag (requeuing what was prefetched past
// it) once commit succeeded.
func giveBack(c *Consumer, drain bool, lastTag uint64, commit func() error) error {
	if drain && lastTag > 0 {
		if err := commitIf(commit); err != nil {
			if rerr := c.ReleaseAll(); rerr != nil {
				return fmt.Errorf("%w (and requeue read messages: %v)", err, rerr)
			}
			return err
		}
		// Requeue what came after the last message written, then ack
		// everything up to it in one frame.
		for tag := c.maxTag; tag > lastTag; tag-- {
			if err := c.Requeue(tag); err != nil {
				return fmt.Errorf("requeue: %w", err)
			}
		}
		if err := c.AckUpTo(lastTag); err != nil {
			return fmt.Errorf("ack exported messages: %w", err)
		}
		return nil
	}
	if err := c.ReleaseAll(); err != nil {
		return fmt.Errorf("requeue read messages: %w", err)
	}
	if drain {
		return commitIf(commit)
	}
	return nil
}

func commitIf(commit func() error) error {
	if commit == nil {
		return nil
	}
	return commit()
}

// readWindow keeps the prefetch no larger than what will be read, so a
// peek of 5 messages does not take 500 off the queue for its duration.
func readWindow(w, target int) int {
	if w <= 0 {
		w = 500
	}
	return max(1, min(w, target))
}

func (r *ReadResult) note(m *Message) {
	if m.Redelivered {
		r.Redelivered++
	}
	if v, ok := m.Props.Headers["x-delivery-count"]; ok {
		r.Quorum = true
		if n, ok := asInt(v); ok {
			r.MaxDeliveryCount = max(r.MaxDeliveryCount, n)
		}
	}
	if len(ReadOrigin(m.Props.Headers).Malformed) > 0 {
		r.Malformed++
	}
}

// IsNotFound reports whether err says the queue does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrQueueNotFound) }

// queueError makes a missing queue bad input about the Queue option (the
// name or the vhost is wrong); other errors pass through.
func queueError(queue string, err error) error {
	if !IsNotFound(err) {
		return err
	}
	return &problem.Input{Field: "Queue", Value: queue, Quote: true, Why: "queue not found",
		Hint: "check the name and the vhost in {AMQPURL}", Err: err}
}
