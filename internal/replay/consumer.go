package replay

import (
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Dialer opens one AMQP connection. The role ("read", "consume",
// "publish") goes into the connection name, so an operator can tell
// dupctl's two connections apart in the management UI and close one.
type Dialer func(ctx context.Context, role string) (*amqp.Connection, error)

// QueueState is what a passive queue.declare says.
type QueueState struct {
	Messages  int `json:"messages"`
	Consumers int `json:"consumers"`
}

// ErrQueueNotFound is returned when the queue does not exist.
var ErrQueueNotFound = errors.New("queue not found")

// InspectQueue reads a queue's message and consumer counts without
// changing it (passive declare on a channel of its own, since a missing
// queue closes the channel).
func InspectQueue(conn *amqp.Connection, queue string) (QueueState, error) {
	ch, err := conn.Channel()
	if err != nil {
		return QueueState{}, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.NotFound {
			return QueueState{}, fmt.Errorf("queue %q: %w", queue, ErrQueueNotFound)
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

// Consumer reads a queue with a prefetch window and holds what it does
// not settle. Messages held (left in the queue for now) occupy the
// consumer's prefetch window, so when half the window is held the consumer
// is cancelled and a fresh one started: held messages stay unacked on the
// channel and are requeued together at the end (in their original order on
// classic queues). Nothing is requeued mid-run, which would hand the same
// message straight back.
type Consumer struct {
	ch        *amqp.Channel
	queue     string
	window    int
	exclusive bool
	tagBase   string

	gen     int
	tag     string
	gens    chan generation
	out     chan Delivery
	heldNow int
	maxTag  uint64
	maxHeld uint64
	closed  chan *amqp.Error
	stopped bool

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

// Delivery is one message as the consumer hands it over.
type Delivery struct {
	*amqp.Delivery
	gen int
}

// NewConsumer starts consuming queue on a new channel of conn.
func NewConsumer(conn *amqp.Connection, queue string, window int, exclusive bool, tag string) (*Consumer, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	c := &Consumer{ch: ch, queue: queue, window: max(window, 1), exclusive: exclusive, tagBase: tag,
		closed: ch.NotifyClose(make(chan *amqp.Error, 1)),
		gens:   make(chan generation, 1<<16), out: make(chan Delivery),
		settled: map[uint64]bool{}, pending: map[uint64]bool{}}
	// One goroutine forwards each consumer generation in turn, so the
	// reader sees one ordered stream whatever restarts happened.
	go func() {
		defer close(c.out)
		for g := range c.gens {
			for d := range g.ch {
				c.out <- Delivery{Delivery: &d, gen: g.n}
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
	if err := c.ch.Qos(c.window, 0, false); err != nil {
		return fmt.Errorf("set prefetch %d: %w", c.window, err)
	}
	c.gen++
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

// C is the stream of deliveries; it closes after Stop once every delivery
// already sent has come out, or when the channel closes.
func (c *Consumer) C() <-chan Delivery { return c.out }

// Closed fires when the channel or its connection closes: every
// unsettled delivery is then back in the queue.
func (c *Consumer) Closed() <-chan *amqp.Error { return c.closed }

// Seen records a delivery taken from C (for ReleaseAll and AckAll).
func (c *Consumer) Seen(d Delivery) { c.maxTag = max(c.maxTag, d.DeliveryTag) }

// Hold leaves d unacked until ReleaseAll; when half the window is held, a
// fresh consumer takes over so the window never fills with held messages.
func (c *Consumer) Hold(d Delivery) error {
	c.maxHeld = max(c.maxHeld, d.DeliveryTag)
	if d.gen != c.gen || c.stopped {
		return nil
	}
	c.heldNow++
	if c.heldNow < max(c.window/2, 1) {
		return nil
	}
	if err := c.ch.Cancel(c.tag, false); err != nil {
		return fmt.Errorf("restart consumer: %w", err)
	}
	return c.start()
}

// Ack settles one delivery.
func (c *Consumer) Ack(tag uint64) error { return c.ch.Ack(tag, false) }

// AckMany settles confirmed deliveries with as few frames as it safely
// can: one multiple ack up to the highest tag below which every delivery
// is settled (tags are consecutive on a channel), and single acks above a
// gap (a held message, or one still waiting for its confirm: a multiple
// ack must never cover those).
func (c *Consumer) AckMany(tags []uint64) error {
	for _, t := range tags {
		c.pending[t] = true
	}
	n, top := c.floor, uint64(0)
	for c.pending[n+1] || c.settled[n+1] {
		n++
		if c.pending[n] {
			top = n
		}
		delete(c.pending, n)
		delete(c.settled, n)
	}
	c.floor = n
	if top > 0 {
		// Only a tag not yet acked may end a multiple ack: RabbitMQ
		// closes the channel on an unknown tag.
		if err := c.ch.Ack(top, true); err != nil {
			return err
		}
	}
	for t := range c.pending {
		delete(c.pending, t)
		if err := c.ch.Ack(t, false); err != nil {
			return err
		}
		c.settled[t] = true
	}
	return nil
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
	return c.ch.Cancel(c.tag, false)
}

// Rest stops the consumer and returns the deliveries that were on their
// way (unacked: hold or settle them).
func (c *Consumer) Rest() []Delivery {
	_ = c.Stop()
	var out []Delivery
	for d := range c.out {
		c.Seen(d)
		c.maxHeld = max(c.maxHeld, d.DeliveryTag)
		out = append(out, d)
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
// is synced).
func (c *Consumer) AckUpTo(tag uint64) error {
	if tag == 0 {
		return nil
	}
	return c.ch.Ack(tag, true)
}

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
