package dlqread

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestDeliveryLimitPoison: on the test broker, poison messages dead-lettered
// by a quorum queue's delivery limit show in stats and peek as such.
func TestDeliveryLimitPoison(t *testing.T) {
	deliveryLimitPoison(t, testenv.Need(t, testenv.AMQP))
}

// TestRabbitClusterDeliveryLimitPoison: the same on the 3-node cluster,
// read through the URL naming every node.
func TestRabbitClusterDeliveryLimitPoison(t *testing.T) {
	deliveryLimitPoison(t, testenv.NeedRabbitCluster(t).URL)
}

// deliveryLimitPoison declares a quorum work queue with x-delivery-limit 2
// that dead-letters at-least-once (x-dead-letter-strategy, which needs
// x-overflow reject-publish) into a quorum DLQ; a consumer returns every
// delivery (basic.nack, requeue) until the broker dead-letters them. Then
// stats groups them by reason delivery_limit and names them poison, and
// peek - the DLQ's second read - sees the DLQ's own x-delivery-count.
func deliveryLimitPoison(t *testing.T, url string) {
	ctx := t.Context()
	conn, err := connect.AMQP(ctx, url)
	must(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	must(t, err)
	base := testenv.UniqueName("poison")
	work, dlq := base+".work", base+".dlq"
	t.Cleanup(func() {
		if c, err := connect.AMQP(context.Background(), url); err == nil {
			if ch, err := c.Channel(); err == nil {
				_, _ = ch.QueueDelete(work, false, false, false)
				_, _ = ch.QueueDelete(dlq, false, false, false)
			}
			c.Close()
		}
	})
	_, err = ch.QueueDeclare(dlq, true, false, false, false, amqp.Table{"x-queue-type": "quorum"})
	must(t, err)
	_, err = ch.QueueDeclare(work, true, false, false, false, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq,
		"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"})
	must(t, err)
	must(t, ch.Confirm(false))
	const n = 5
	for i := range n {
		p := amqp.Publishing{MessageId: fmt.Sprintf("poison-%d", i), DeliveryMode: amqp.Persistent, Body: []byte(`{"orderId":7}`)}
		if i < 3 {
			p.Headers = amqp.Table{"x-exception-message": "java.lang.NullPointerException: order.customer"}
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", work, false, false, p)
		must(t, err)
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish not confirmed: %v", err)
		}
	}
	deliveries := returnUntilDeadLettered(t, ch, work, dlq, n)
	t.Logf("%d deliveries of %d poison messages before the delivery limit (2) dead-lettered them", deliveries, n)
	if deliveries != 3*n {
		t.Errorf("%d deliveries, want %d (limit + 1 each)", deliveries, 3*n)
	}
	dial := func(ctx context.Context, role string) (*amqp.Connection, error) { return connect.AMQP(ctx, url) }
	s, err := Stats(ctx, Deps{Dial: dial}, StatsOptions{Read: Options{Queue: dlq}})
	must(t, err)
	if s.Messages != n || s.ByReason[deadletter.ReasonDeliveryLimit] != n || len(s.Groups) != 2 {
		t.Fatalf("stats: %d messages, by reason %v, %d groups", s.Messages, s.ByReason, len(s.Groups))
	}
	for _, g := range s.Groups {
		if g.Reason != deadletter.ReasonDeliveryLimit || g.Queue != work || g.DeliveryLimited != g.Messages {
			t.Errorf("group %s: reason %q died in %q, %d of %d delivery-limited", g.ID, g.Reason, g.Queue, g.DeliveryLimited, g.Messages)
		}
	}
	var codes []string
	for _, f := range s.Report().Findings {
		codes = append(codes, f.Code)
	}
	for _, want := range []string{"DLQ_DELIVERY_LIMIT_POISON", "DLQ_NON_RETRYABLE_RETRIED"} {
		if !slices.Contains(codes, want) {
			t.Errorf("stats findings %v lack %s", codes, want)
		}
	}
	p, err := Peek(ctx, Deps{Dial: dial}, PeekOptions{Read: Options{Queue: dlq, Limit: n}})
	must(t, err)
	if len(p.Messages) != n || !p.Read.Quorum || p.Read.MaxDeliveryCount < 1 {
		t.Fatalf("peek: %d messages, quorum %v, highest x-delivery-count %d", len(p.Messages), p.Read.Quorum, p.Read.MaxDeliveryCount)
	}
	for _, m := range p.Messages {
		if m.Reason != deadletter.ReasonDeliveryLimit || m.Deaths != 1 {
			t.Errorf("peek %s: reason %q, %d deaths", m.Msg.Props.MessageID, m.Reason, m.Deaths)
		}
	}
}

// returnUntilDeadLettered consumes work and returns every delivery
// (requeue) until the DLQ holds n messages; it reports the deliveries.
func returnUntilDeadLettered(t *testing.T, ch *amqp.Channel, work, dlq string, n int) int {
	t.Helper()
	d, err := ch.Consume(work, "", false, false, false, false, nil)
	must(t, err)
	deliveries := 0
	deadline := time.After(60 * time.Second)
	for {
		select {
		case m := <-d:
			deliveries++
			must(t, m.Nack(false, true))
			continue
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatalf("after %d deliveries the DLQ does not hold %d messages", deliveries, n)
		}
		q, err := ch.QueueDeclarePassive(dlq, true, false, false, false, nil)
		must(t, err)
		if q.Messages == n {
			return deliveries
		}
	}
}
