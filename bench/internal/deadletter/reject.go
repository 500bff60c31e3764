package deadletter

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Reject fills dlq the way a consumer's failures do: it publishes n
// messages msg(i) (made persistent) into dest, whose dead letters must go
// to dlq (x-dead-letter-exchange "" and x-dead-letter-routing-key dlq),
// rejects them all without requeueing, and waits until dlq holds n. The
// x-death header is the broker's own - which matters on quorum queues,
// whose dead-lettering (and x-death) differs from a classic queue's.
func Reject(conn *amqp.Connection, dlq, dest string, n int, msg func(i int) amqp.Publishing) error {
	if err := publish(conn, dest, n, msg); err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Qos(1000, 0, false); err != nil {
		return err
	}
	d, err := ch.Consume(dest, "", false, false, false, false, nil)
	if err != nil {
		return err
	}
	timeout := time.After(10 * time.Minute)
	for i := 0; i < n; i++ {
		select {
		case m := <-d:
			// One multiple nack per 500 keeps the prefetch window moving.
			if i == n-1 || i%500 == 499 {
				if err := m.Nack(true, false); err != nil {
					return fmt.Errorf("reject from %s: %w", dest, err)
				}
			}
		case <-timeout:
			return fmt.Errorf("rejected only %d of %d from %s", i, n, dest)
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		q, err := ch.QueueDeclarePassive(dlq, true, false, false, false, nil)
		if err != nil {
			return err
		}
		if q.Messages == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s holds %d dead letters, want %d", dlq, q.Messages, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// publish puts n persistent messages into queue through the default
// exchange, awaiting the confirms every 1,000.
func publish(conn *amqp.Connection, queue string, n int, msg func(i int) amqp.Publishing) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	pending := make([]*amqp.DeferredConfirmation, 0, 1000)
	for i := 0; i < n; i++ {
		p := msg(i)
		p.DeliveryMode = amqp.Persistent
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, true, false, p)
		if err != nil {
			return err
		}
		pending = append(pending, dc)
		if len(pending) == cap(pending) || i == n-1 {
			for _, dc := range pending {
				if !dc.Wait() {
					return fmt.Errorf("publish to %s nacked", queue)
				}
			}
			pending = pending[:0]
		}
	}
	return nil
}
