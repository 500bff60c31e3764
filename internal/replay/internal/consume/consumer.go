// Package consume is the consumer every read of a DLQ and every replay
// reads with: a prefetch window bounded in messages and bytes, messages
// held unacked and given back together, batched acks that never cover a
// held message, and the waits for the broker to show a queue settled
// (settle.go).
package consume

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	amqp "github.com/rabbitmq/amqp091-go"
)

// QueueState is what a passive queue.declare says.
type QueueState struct {
	Messages  int `json:"messages"`
	Consumers int `json:"consumers"`
}

// errQueueNotFound is returned when the queue does not exist.
var errQueueNotFound = errors.New("queue not found")

// nodeDown is the broker's answer (reason) when the queue's node is down:
// RabbitMQ answers a declare of a classic queue whose node is stopped
// with 404 "home node '...' of durable queue '...' is down or
// inaccessible" - not that the queue does not exist. No other node can
// serve that queue until its own is back.
type nodeDown struct{ reason string }

func (e *nodeDown) Error() string { return e.reason }

// InspectQueue reads a queue's message and consumer counts without
// changing it (passive declare on a channel of its own, since a missing
// queue closes the channel). A queue whose node is down is an error of its
// own (QueueError), not a missing one.
func InspectQueue(conn *amqp.Connection, queue string) (QueueState, error) {
	ch, err := conn.Channel()
	if err != nil {
		return QueueState{}, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		var ae *amqp.Error
		switch {
		case errors.As(err, &ae) && ae.Code == amqp.NotFound && strings.Contains(ae.Reason, "down or inaccessible"):
			return QueueState{}, fmt.Errorf("queue %q: %w", queue, &nodeDown{reason: ae.Reason})
		case errors.As(err, &ae) && ae.Code == amqp.NotFound:
			return QueueState{}, fmt.Errorf("queue %q: %w", queue, errQueueNotFound)
		}
		return QueueState{}, fmt.Errorf("queue %q: %w", queue, err)
	}
	return QueueState{Messages: q.Messages, Consumers: q.Consumers}, nil
}

// ExchangeExists reports whether an exchange exists (the default exchange
// always does).
func ExchangeExists(conn *amqp.Connection, name string) (bool, error) {
	if name == "" {
		return true, nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return false, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	err = ch.ExchangeDeclarePassive(name, "direct", false, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false, nil
	}
	return err == nil, err
}

// DefaultWindowBytes bounds what a consumer lets the broker push ahead of
// it, in bytes: the prefetch window counts messages, and a window of 1,000
// messages of 8 MiB would be 8 GB in this process.
const DefaultWindowBytes = 64 << 20

// prefetchFor is the prefetch count that keeps about budget bytes in
// flight at the average message size seen, never above window.
func prefetchFor(window int, budget, avg int64) int {
	if budget <= 0 {
		return window
	}
	return int(max(1, min(int64(window), budget/max(avg, 1))))
}

// Consumer reads a queue with a prefetch window and holds what it does
// not settle. With a byte budget it starts with a prefetch of one, and
// sets the window from the average size of what it has seen (after the
// first message and every 256 after that), restarting the consumer as
// held messages do: RabbitMQ applies a new basic.qos only to new
// consumers. Messages held (left in the queue for now) occupy the
// consumer's prefetch window, so when half the window is held the consumer
// is cancelled and a fresh one started: held messages stay unacked on the
// channel and are requeued together at the end (in their original order on
// classic queues). Nothing is requeued mid-run, which would hand the same
// message straight back.
type Consumer struct {
	conn      *amqp.Connection
	ch        *amqp.Channel
	queue     string
	window    int   // the most messages asked for at once
	prefetch  int   // the current basic.qos: window, or fewer for large messages
	budget    int64 // bytes; 0: no byte budget
	seenN     int64
	seenBytes int64
	exclusive bool
	tagBase   string

	gen int
	tag string
	// perGen counts the deliveries seen of each generation, and prefetchOf
	// the prefetch each started with (Stranded).
	perGen     map[int]int
	prefetchOf map[int]int
	gens       chan generation
	out        chan Item
	heldNow    int
	maxTag     uint64
	maxHeld    uint64
	acked      int // deliveries acked (the others go back to the queue)
	closed     chan *amqp.Error
	stopped    bool
	// cancelled: Stop's basic.cancel left (on a channel already lost it
	// did not, and the broker still has the consumer as active).
	cancelled bool

	// Batched acks: every tag <= floor is settled; settled holds tags
	// above it acked one by one, pending the ones to ack now.
	floor   uint64
	settled map[uint64]bool
	pending map[uint64]bool
}

type generation struct {
	n  int
	ch <-chan amqp.Delivery
}

// deliveryBuffer is how many decoded deliveries may wait for the reader,
// so it takes a burst in one go instead of one hand-off per message (all
// of them count toward the prefetch window either way).
const deliveryBuffer = 256

// Delivery is one message as the consumer hands it over.
type Delivery struct {
	*amqp.Delivery
	gen int
}

// New starts consuming queue on a new channel of conn, with at most
// window messages and about budget bytes in flight (0: DefaultWindowBytes;
// negative: no byte bound).
func New(conn *amqp.Connection, queue string, window int, budget int64, exclusive bool, tag string) (*Consumer, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	if budget == 0 {
		budget = DefaultWindowBytes
	}
	window = max(window, 1)
	prefetch := window
	if budget > 0 {
		prefetch = 1 // until a message says how large they are
	}
	c := &Consumer{conn: conn, ch: ch, queue: queue, window: window, prefetch: prefetch, budget: max(budget, 0),
		exclusive: exclusive, tagBase: tag,
		closed: ch.NotifyClose(make(chan *amqp.Error, 1)),
		gens:   make(chan generation, 1<<16), out: make(chan Item, deliveryBuffer),
		settled: map[uint64]bool{}, pending: map[uint64]bool{}, perGen: map[int]int{}, prefetchOf: map[int]int{}}
	// One goroutine forwards each consumer generation in turn, so the
	// reader sees one ordered stream whatever restarts happened; it also
	// decodes each message, off the reader's goroutine.
	go func() {
		defer close(c.out)
		for g := range c.gens {
			for d := range g.ch {
				c.out <- Item{Msg: deadletter.FromDelivery(&d), Delivery: Delivery{Delivery: &d, gen: g.n}}
			}
		}
	}()
	if err := c.start(); err != nil {
		close(c.gens)
		ch.Close()
		return nil, err
	}
	return c, nil
}

func (c *Consumer) start() error {
	if err := c.ch.Qos(c.prefetch, 0, false); err != nil {
		return fmt.Errorf("set prefetch %d: %w", c.prefetch, err)
	}
	c.gen++
	c.prefetchOf[c.gen] = c.prefetch
	c.tag = fmt.Sprintf("%s-%d", c.tagBase, c.gen)
	d, err := c.ch.Consume(c.queue, c.tag, false, c.exclusive, false, false, nil)
	if err != nil {
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.AccessRefused {
			return fmt.Errorf("consume %q: another consumer holds the queue (%s): stop it first", c.queue, ae.Reason)
		}
		return fmt.Errorf("consume %q: %w", c.queue, err)
	}
	c.heldNow = 0
	c.gens <- generation{n: c.gen, ch: d}
	return nil
}

// Item is one message a Consumer hands over: decoded, with its delivery
// (zero for a message read from a file).
type Item struct {
	Msg      *deadletter.Message
	Delivery Delivery
}

// Deliveries is the stream of deliveries, decoded; it closes after Stop
// once every delivery already sent has come out, or when the channel
// closes.
func (c *Consumer) Deliveries() <-chan Item { return c.out }

// Closed fires when the channel or its connection closes: every
// unsettled delivery is then back in the queue.
func (c *Consumer) Closed() <-chan *amqp.Error { return c.closed }

// Seen records a delivery taken from deliveries (for ReleaseAll and
// AckAll) and its size, which may change the prefetch window.
func (c *Consumer) Seen(d Delivery) error {
	c.maxTag = max(c.maxTag, d.DeliveryTag)
	c.perGen[d.gen]++
	if c.budget == 0 || c.stopped {
		return nil
	}
	c.seenN++
	c.seenBytes += int64(len(d.Body))
	if c.seenN != 1 && c.seenN%256 != 0 {
		return nil
	}
	want := prefetchFor(c.window, c.budget, c.seenBytes/c.seenN)
	// After the first message, only a change by half or double is worth
	// a restart.
	if want == c.prefetch || c.seenN > 1 && want < 2*c.prefetch && 2*want > c.prefetch {
		return nil
	}
	c.prefetch = want
	return c.restart()
}

// prefetchWindow is the current prefetch window.
func (c *Consumer) prefetchWindow() int { return c.prefetch }

// Hold leaves d unacked until ReleaseAll; when half the window is held, a
// fresh consumer takes over so the window never fills with held messages.
func (c *Consumer) Hold(d Delivery) error {
	c.maxHeld = max(c.maxHeld, d.DeliveryTag)
	if d.gen != c.gen || c.stopped {
		return nil
	}
	c.heldNow++
	if c.heldNow < max(c.prefetch/2, 1) {
		return nil
	}
	return c.restart()
}

// restart cancels the consumer and starts a fresh one with the current
// prefetch. What the old one delivered stays unacked on the channel.
func (c *Consumer) restart() error {
	if err := c.ch.Cancel(c.tag, false); err != nil {
		return fmt.Errorf("restart consumer: %w", err)
	}
	return c.start()
}

// Ack settles one delivery.
func (c *Consumer) Ack(tag uint64) error {
	c.acked++
	return c.ch.Ack(tag, false)
}

// AckMany settles confirmed deliveries with as few frames as it safely
// can: one multiple ack up to the highest tag below which every delivery
// is settled (tags are consecutive on a channel), and single acks above a
// gap (a held message, or one still waiting for its confirm: a multiple
// ack must never cover those). On an error it also returns the tags whose
// ack certainly never left (refused on a closed channel, or never tried):
// their deliveries are back in the queue when the channel goes.
func (c *Consumer) AckMany(tags []uint64) (unsent []uint64, err error) {
	c.acked += len(tags)
	for _, t := range tags {
		c.pending[t] = true
	}
	n, top := c.floor, uint64(0)
	var covered []uint64
	for c.pending[n+1] || c.settled[n+1] {
		n++
		if c.pending[n] {
			top = n
			covered = append(covered, n)
		}
		delete(c.pending, n)
		delete(c.settled, n)
	}
	c.floor = n
	rest := func() []uint64 {
		for t := range c.pending {
			delete(c.pending, t)
			unsent = append(unsent, t)
		}
		return unsent
	}
	if top > 0 {
		// Only a tag not yet acked may end a multiple ack: RabbitMQ
		// closes the channel on an unknown tag.
		if err := c.ch.Ack(top, true); err != nil {
			if errors.Is(err, amqp.ErrClosed) {
				unsent = covered
			}
			return rest(), err
		}
	}
	for t := range c.pending {
		delete(c.pending, t)
		if err := c.ch.Ack(t, false); err != nil {
			if errors.Is(err, amqp.ErrClosed) {
				unsent = append(unsent, t)
			}
			return rest(), err
		}
		c.settled[t] = true
	}
	return nil, nil
}

// Requeue returns one delivery to the queue now.
func (c *Consumer) Requeue(tag uint64) error { return c.ch.Nack(tag, false, true) }

// Stop cancels the consumer. Deliveries already on their way still come
// out of C, which then closes.
func (c *Consumer) Stop() error {
	if c.stopped {
		return nil
	}
	c.stopped = true
	defer close(c.gens)
	err := c.ch.Cancel(c.tag, false)
	c.cancelled = err == nil
	return err
}

// Rest stops the consumer and returns the deliveries that were on their
// way (unacked: hold or settle them).
func (c *Consumer) Rest() []Delivery {
	_ = c.Stop()
	var out []Delivery
	for si := range c.out {
		c.maxTag = max(c.maxTag, si.Delivery.DeliveryTag)
		c.maxHeld = max(c.maxHeld, si.Delivery.DeliveryTag)
		out = append(out, si.Delivery)
	}
	return out
}

// ReleaseAll requeues every delivery held. Call it only when nothing is
// waiting for a publish confirm: multiple=true covers every unacked tag up
// to the highest held (which must itself be unacked: RabbitMQ closes the
// channel on an unknown tag).
func (c *Consumer) ReleaseAll() error {
	if c.maxHeld == 0 {
		return nil
	}
	// basic.nack (not reject): on RabbitMQ 4.3+ quorum queues nack does not
	// count toward the delivery limit.
	return c.ch.Nack(c.maxHeld, true, true)
}

// AckUpTo acks every delivery up to tag (export --drain, after the file
// is synced; nothing was acked before it).
func (c *Consumer) AckUpTo(tag uint64) error {
	if tag == 0 {
		return nil
	}
	c.acked = int(tag) // delivery tags on a channel are 1, 2, 3, ...
	return c.ch.Ack(tag, true)
}

// Settle waits, the channel still open, until the queue shows every
// delivery of this consumer settled: no consumer beyond others, and (when
// nobody else consumes) the messages counted at the start back but for
// those acked. See settle.go for why closing at once is not enough. It
// returns the last reading and whether the queue got there within budget.
func (c *Consumer) Settle(ctx context.Context, others, atStart int, budget time.Duration) (QueueState, bool, error) {
	return AwaitSettled(ctx, c.conn, c.queue, others, atStart-c.acked, budget)
}

// Probe reads the queue's counts (false: no answer to trust).
func (c *Consumer) Probe() (QueueState, bool) {
	st, ok, err := probeQueue(c.conn, c.queue)
	return st, ok && err == nil
}

// Generations is how many consumers this one started on the queue (each
// restart is another; a killed node's quorum queue may keep counting
// them, failover.go's Expect.Ghosts).
func (c *Consumer) Generations() int { return c.gen }

// Stranded bounds the deliveries a killed node can strand, given how many
// of this consumer's generations the queue still counted afterwards: a
// quorum queue gives back the messages of an active consumer on a node it
// lost (and goes on counting it, suspected down), but not those of a
// consumer that was cancelled (a restart, or the stop at the end) with
// messages still checked out - it keeps that consumer, counted, and its
// messages until the node is back or the queue's leader changes (RabbitMQ
// 3.10's rabbit_fifo returns only an active consumer's on noconnection). A
// cancelled one with nothing checked out is gone. So when the count shows
// no cancelled generation, nothing is stranded; else it is every delivery
// of a cancelled generation, acked or not (an ack may not have been
// applied), and while the active one has delivered nothing, the prefetch
// of the one before (what may still have been on its way).
func (c *Consumer) Stranded(counted int) int {
	cancelled := counted
	if !c.cancelled {
		cancelled-- // the active one, counted and holding nothing
	}
	if cancelled <= 0 {
		return 0
	}
	n := 0
	for g, k := range c.perGen {
		if g < c.gen || c.cancelled {
			n += k
		}
	}
	if c.gen > 1 && c.perGen[c.gen] == 0 {
		n += c.prefetchOf[c.gen-1]
	}
	return n
}

// Acked is how many deliveries were acked (removed from the queue).
func (c *Consumer) Acked() int { return c.acked }

// Taken is how many deliveries the consumer has seen (delivery tags are
// consecutive on its channel).
func (c *Consumer) Taken() int { return int(c.maxTag) }

// Close closes the channel (the broker requeues anything unsettled).
func (c *Consumer) Close() error {
	if !c.stopped {
		c.stopped = true
		close(c.gens)
	}
	return c.ch.Close()
}

// ErrChannelClosed means the channel or connection went away; every
// unsettled delivery is back in the queue.
var ErrChannelClosed = errors.New("consumer channel closed")
