package replay

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// rig is one test's RabbitMQ topology: an exchange, a work queue bound to
// it whose dead letters go to a DLQ, all uniquely named and deleted after.
type rig struct {
	t        *testing.T
	url      string
	conn     *amqp.Connection
	ch       *amqp.Channel
	Exchange string
	Work     string
	DLQ      string
	Key      string
}

func newRig(t *testing.T, queueType string) *rig {
	t.Helper()
	url := testenv.Need(t, testenv.AMQP)
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	base := testenv.UniqueName("dlq")
	r := &rig{t: t, url: url, conn: conn, ch: ch, Exchange: base + ".x", Work: base + ".work", DLQ: base + ".dlq", Key: "job.created"}
	t.Cleanup(func() {
		c, err := conn.Channel()
		if err == nil {
			for _, q := range []string{r.Work, r.DLQ, r.DLQ + ".parked"} {
				_, _ = c.QueueDelete(q, false, false, false)
			}
			_ = c.ExchangeDelete(r.Exchange, false, false)
		}
		conn.Close()
	})
	args := amqp.Table{}
	if queueType != "" {
		args["x-queue-type"] = queueType
	}
	must(t, ch.ExchangeDeclare(r.Exchange, "direct", false, true, false, false, nil))
	_, err = ch.QueueDeclare(r.DLQ, true, false, false, false, args)
	must(t, err)
	wargs := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": r.DLQ}
	for k, v := range args {
		wargs[k] = v
	}
	_, err = ch.QueueDeclare(r.Work, true, false, false, false, wargs)
	must(t, err)
	must(t, ch.QueueBind(r.Work, r.Key, r.Exchange, false, nil))
	return r
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) dial(ctx context.Context, role string) (*amqp.Connection, error) {
	return amqp.DialConfig(r.url, amqp.Config{Properties: amqp.Table{"connection_name": "dupctl-test " + role}})
}

// deadLetter publishes msgs through the exchange and rejects them all from
// the work queue, so the broker dead-letters them into the DLQ with a real
// x-death.
func (r *rig) deadLetter(msgs []amqp.Publishing) {
	r.t.Helper()
	pch, err := r.conn.Channel()
	must(r.t, err)
	defer pch.Close()
	must(r.t, pch.Confirm(false))
	for _, m := range msgs {
		dc, err := pch.PublishWithDeferredConfirm(r.Exchange, r.Key, true, false, m)
		must(r.t, err)
		_ = dc
	}
	r.rejectAll(r.Work, len(msgs))
	r.waitCount(r.DLQ, len(msgs))
}

func (r *rig) rejectAll(queue string, n int) {
	r.t.Helper()
	c, err := r.conn.Channel()
	must(r.t, err)
	defer c.Close()
	must(r.t, c.Qos(1000, 0, false))
	d, err := c.Consume(queue, "", false, false, false, false, nil)
	must(r.t, err)
	timeout := time.After(60 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case m := <-d:
			if i == n-1 || i%500 == 499 {
				must(r.t, m.Nack(true, false))
			}
		case <-timeout:
			r.t.Fatalf("rejected only %d of %d", i, n)
		}
	}
}

// waitCount waits until queue holds n ready messages.
func (r *rig) waitCount(queue string, n int) {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		q, err := r.ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		must(r.t, err)
		if q.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("queue %s has %d messages, want %d", queue, q.Messages, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) count(queue string) int {
	r.t.Helper()
	q, err := r.ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	must(r.t, err)
	return q.Messages
}

// drainAll takes every message off a queue (consuming with auto-ack: a
// basic.get per message is slow for 10,000) and returns them.
func (r *rig) drainAll(queue string) []amqp.Delivery {
	r.t.Helper()
	c, err := r.conn.Channel()
	must(r.t, err)
	defer c.Close()
	q, err := c.QueueDeclarePassive(queue, true, false, false, false, nil)
	must(r.t, err)
	var out []amqp.Delivery
	if q.Messages == 0 {
		return out
	}
	must(r.t, c.Qos(2000, 0, false))
	d, err := c.Consume(queue, "", false, false, false, false, nil)
	must(r.t, err)
	timeout := time.After(60 * time.Second)
	for len(out) < q.Messages {
		select {
		case m := <-d:
			out = append(out, m)
			if len(out)%1000 == 0 || len(out) == q.Messages {
				must(r.t, m.Ack(true))
			}
		case <-timeout:
			r.t.Fatalf("drained %d of %d from %s", len(out), q.Messages, queue)
		}
	}
	return out
}

func jobs(n int) []amqp.Publishing {
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
