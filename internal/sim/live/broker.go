package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Topology is the live run's own exchanges and queues, all named from one
// prefix and deleted at the end:
//
//	<p>.work  exchange -> <p>.work queue (x-dead-letter-exchange <p>.dlx)
//	<p>.retry exchange -> <p>.retry queue (per-message TTL = the backoff;
//	                      dead-letters back to <p>.work when it expires)
//	<p>.dlx   exchange -> <p>.dlq queue
type Topology struct{ Prefix string }

func (t Topology) Work() string  { return t.Prefix + ".work" }
func (t Topology) Retry() string { return t.Prefix + ".retry" }
func (t Topology) DLX() string   { return t.Prefix + ".dlx" }
func (t Topology) DLQ() string   { return t.Prefix + ".dlq" }

const routingKey = "job"

// Declare creates the topology.
func (t Topology) Declare(ch *amqp.Channel) error {
	for _, ex := range []string{t.Work(), t.Retry(), t.DLX()} {
		if err := ch.ExchangeDeclare(ex, "direct", false, false, false, false, nil); err != nil {
			return fmt.Errorf("declare exchange %s: %w", ex, err)
		}
	}
	queues := []struct {
		name, exchange string
		args           amqp.Table
	}{
		{t.Work(), t.Work(), amqp.Table{"x-dead-letter-exchange": t.DLX()}},
		{t.Retry(), t.Retry(), amqp.Table{"x-dead-letter-exchange": t.Work(), "x-dead-letter-routing-key": routingKey}},
		{t.DLQ(), t.DLX(), nil},
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name, false, false, false, false, q.args); err != nil {
			return fmt.Errorf("declare queue %s: %w", q.name, err)
		}
		if err := ch.QueueBind(q.name, routingKey, q.exchange, false, nil); err != nil {
			return fmt.Errorf("bind queue %s: %w", q.name, err)
		}
	}
	return nil
}

// Delete removes the topology (best effort: it runs on every exit path).
func (t Topology) Delete(ch *amqp.Channel) error {
	var errs []error
	for _, q := range []string{t.Work(), t.Retry(), t.DLQ()} {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ex := range []string{t.Work(), t.Retry(), t.DLX()} {
		if err := ch.ExchangeDelete(ex, false, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Job is a message body.
type Job struct {
	JobID       string `json:"jobId"`
	BusinessKey string `json:"orderId"`
}

// Publisher publishes with confirms on its own channel.
type Publisher struct {
	ch       *amqp.Channel
	confirms chan amqp.Confirmation
	returns  chan amqp.Return
}

// NewPublisher opens a confirm-mode channel on conn.
func NewPublisher(conn *amqp.Connection) (*Publisher, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("confirm mode: %w", err)
	}
	return &Publisher{ch: ch, confirms: ch.NotifyPublish(make(chan amqp.Confirmation, 1)),
		returns: ch.NotifyReturn(make(chan amqp.Return, 1))}, nil
}

// Publish sends one message (mandatory) and waits for the broker's
// confirm; an unroutable message is an error, not a silent drop.
func (p *Publisher) Publish(ctx context.Context, exchange string, j Job, attempt int, headers amqp.Table, expiration time.Duration) error {
	body, _ := json.Marshal(j)
	h := amqp.Table{"jobId": j.JobID, "orderId": j.BusinessKey, "attempt": int32(attempt)}
	for k, v := range headers {
		h[k] = v
	}
	msg := amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, MessageId: j.JobID, Headers: h, Body: body}
	if expiration > 0 {
		msg.Expiration = strconv.FormatInt(max(expiration.Milliseconds(), 1), 10)
	}
	if err := p.ch.PublishWithContext(ctx, exchange, routingKey, true, false, msg); err != nil {
		return fmt.Errorf("publish to %s: %w", exchange, err)
	}
	select {
	case r := <-p.returns:
		<-p.confirms
		return fmt.Errorf("publish to %s: returned unroutable (%s)", exchange, r.ReplyText)
	case c, ok := <-p.confirms:
		if !ok {
			return fmt.Errorf("publish to %s: channel closed before the confirm", exchange)
		}
		if !c.Ack {
			return fmt.Errorf("publish to %s: nacked by the broker", exchange)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the publisher's channel.
func (p *Publisher) Close() error { return p.ch.Close() }
