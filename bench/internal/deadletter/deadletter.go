// Package deadletter fills a queue with dead letters as RabbitMQ leaves
// them, for the dlq benchmarks (bench/dlq-replay, bench/dlq-large).
package deadletter

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Fill publishes n messages into dlq: msg(i), made persistent and given an
// x-death naming dest (rejected from it, through the default exchange).
// Publisher confirms are awaited every 1,000 messages or 64 MiB, so a
// fill of large messages does not sit unconfirmed in the broker's memory.
func Fill(conn *amqp.Connection, dlq, dest string, n int, msg func(i int) amqp.Publishing) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	death := amqp.Table{"count": int64(1), "exchange": "", "queue": dest, "reason": "rejected", "routing-keys": []any{dest},
		"time": time.Now()}
	var pending []*amqp.DeferredConfirmation
	unconfirmed := 0
	for i := 0; i < n; i++ {
		p := msg(i)
		p.DeliveryMode = amqp.Persistent
		if p.Headers == nil {
			p.Headers = amqp.Table{}
		}
		p.Headers["x-death"] = []any{death}
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", dlq, false, false, p)
		if err != nil {
			return err
		}
		pending = append(pending, dc)
		unconfirmed += len(p.Body)
		if len(pending) == 1000 || unconfirmed >= 64<<20 || i == n-1 {
			for _, dc := range pending {
				if !dc.Wait() {
					return fmt.Errorf("fill %s: publish nacked", dlq)
				}
			}
			pending, unconfirmed = pending[:0], 0
		}
	}
	return nil
}
