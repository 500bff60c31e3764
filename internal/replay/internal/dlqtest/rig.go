// Package dlqtest is the RabbitMQ rig of the dlq tests: an exchange, a
// work queue bound to it whose dead letters go to a DLQ, all uniquely
// named on the shared test broker and deleted after the test.
package dlqtest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Rig is one test's RabbitMQ topology: an exchange, a work queue bound to
// it whose dead letters go to a DLQ, all uniquely named and deleted after.
type Rig struct {
	T        *testing.T
	URL      string
	Conn     *amqp.Connection
	Ch       *amqp.Channel
	Exchange string
	Work     string
	DLQ      string
	Key      string
}

// NewRig declares a rig (queueType "" for the default, or classic or
// quorum) on the test broker.
func NewRig(t *testing.T, queueType string) *Rig {
	t.Helper()
	return NewRigAt(t, testenv.Need(t, testenv.AMQP), queueType)
}

// NewRigAt declares a rig through url (one node of a cluster: quorum
// queues get their leader there). Use moves it to another node.
func NewRigAt(t *testing.T, url, queueType string) *Rig {
	t.Helper()
	base := testenv.UniqueName("dlq")
	r := &Rig{T: t, URL: url, Exchange: base + ".x", Work: base + ".work", DLQ: base + ".dlq", Key: "job.created"}
	r.Use(url)
	t.Cleanup(func() {
		c, err := r.Conn.Channel()
		if err == nil {
			for _, q := range []string{r.Work, r.DLQ, r.DLQ + ".parked"} {
				_, _ = c.QueueDelete(q, false, false, false)
			}
			_ = c.ExchangeDelete(r.Exchange, false, false)
		}
		r.Conn.Close()
	})
	args := amqp.Table{}
	if queueType != "" {
		args["x-queue-type"] = queueType
	}
	ch := r.Ch
	Must(t, ch.ExchangeDeclare(r.Exchange, "direct", false, true, false, false, nil))
	_, err := ch.QueueDeclare(r.DLQ, true, false, false, false, args)
	Must(t, err)
	wargs := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": r.DLQ}
	for k, v := range args {
		wargs[k] = v
	}
	_, err = ch.QueueDeclare(r.Work, true, false, false, false, wargs)
	Must(t, err)
	Must(t, ch.QueueBind(r.Work, r.Key, r.Exchange, false, nil))
	return r
}

// Use makes the rig's own connection and channel (Count, DrainAll,
// DeadLetter...) go through url from now on: another node of a cluster,
// when the one it used is to be stopped. It does not change URL, which
// the rig's Dial uses.
func (r *Rig) Use(url string) {
	r.T.Helper()
	conn, err := amqp.Dial(url)
	Must(r.T, err)
	ch, err := conn.Channel()
	Must(r.T, err)
	if r.Conn != nil {
		r.Conn.Close()
	}
	r.Conn, r.Ch = conn, ch
}

// Must stops the test on an error.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Dial opens a connection named for its role, as dupctl names its own.
func (r *Rig) Dial(ctx context.Context, role string) (*amqp.Connection, error) {
	return amqp.DialConfig(r.URL, amqp.Config{Properties: amqp.Table{"connection_name": "dupctl-test " + role}})
}

// DeadLetter publishes msgs through the exchange and rejects them all from
// the work queue, so the broker dead-letters them into the DLQ with a real
// x-death.
func (r *Rig) DeadLetter(msgs []amqp.Publishing) {
	r.T.Helper()
	pch, err := r.Conn.Channel()
	Must(r.T, err)
	defer pch.Close()
	Must(r.T, pch.Confirm(false))
	for _, m := range msgs {
		dc, err := pch.PublishWithDeferredConfirm(r.Exchange, r.Key, true, false, m)
		Must(r.T, err)
		_ = dc
	}
	r.RejectAll(r.Work, len(msgs))
	r.WaitCount(r.DLQ, len(msgs))
}

// RejectAll rejects n messages of queue without requeueing them.
func (r *Rig) RejectAll(queue string, n int) {
	r.T.Helper()
	c, err := r.Conn.Channel()
	Must(r.T, err)
	defer c.Close()
	Must(r.T, c.Qos(1000, 0, false))
	d, err := c.Consume(queue, "", false, false, false, false, nil)
	Must(r.T, err)
	timeout := time.After(60 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case m := <-d:
			if i == n-1 || i%500 == 499 {
				Must(r.T, m.Nack(true, false))
			}
		case <-timeout:
			r.T.Fatalf("rejected only %d of %d", i, n)
		}
	}
}

// WaitCount waits until queue holds n ready messages.
func (r *Rig) WaitCount(queue string, n int) {
	r.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		q, err := r.Ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		Must(r.T, err)
		if q.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			r.T.Fatalf("queue %s has %d messages, want %d", queue, q.Messages, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Count is how many ready messages queue holds.
func (r *Rig) Count(queue string) int {
	r.T.Helper()
	q, err := r.Ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	Must(r.T, err)
	return q.Messages
}

// DrainAll takes every message off a queue (consuming with auto-ack: a
// basic.get per message is slow for 10,000) and returns them.
func (r *Rig) DrainAll(queue string) []amqp.Delivery {
	r.T.Helper()
	c, err := r.Conn.Channel()
	Must(r.T, err)
	defer c.Close()
	q, err := c.QueueDeclarePassive(queue, true, false, false, false, nil)
	Must(r.T, err)
	var out []amqp.Delivery
	if q.Messages == 0 {
		return out
	}
	Must(r.T, c.Qos(2000, 0, false))
	d, err := c.Consume(queue, "", false, false, false, false, nil)
	Must(r.T, err)
	timeout := time.After(60 * time.Second)
	for len(out) < q.Messages {
		select {
		case m := <-d:
			out = append(out, m)
			if len(out)%1000 == 0 || len(out) == q.Messages {
				Must(r.T, m.Ack(true))
			}
		case <-timeout:
			r.T.Fatalf("drained %d of %d from %s", len(out), q.Messages, queue)
		}
	}
	return out
}

// Jobs are n messages with ids, errors and idempotency keys.
func Jobs(n int) []amqp.Publishing {
	out := make([]amqp.Publishing, n)
	for i := range out {
		out[i] = amqp.Publishing{
			MessageId: fmt.Sprintf("m-%05d", i), ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-exception-message": fmt.Sprintf("order %d not found", i), "idempotency-key": fmt.Sprintf("payment:%d", i)},
			Body:    []byte(fmt.Sprintf(`{"orderId":%d,"type":"payment"}`, i)),
		}
	}
	return out
}

// MemFile is a journal or an export file in memory.
type MemFile struct{ bytes.Buffer }

// Sync implements the file interfaces (nothing to sync).
func (*MemFile) Sync() error { return nil }
