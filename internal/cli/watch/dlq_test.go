package watch_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestWatchDLQByReason dead-letters messages for real on RabbitMQ - three
// rejected by a consumer of one queue, two expired in another - and sees
// the dlq check count them by the queue they died in and why.
func TestWatchDLQByReason(t *testing.T) {
	url := testenv.Need(t, testenv.AMQP)
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	dlq, work, ttl := testenv.UniqueName("watch_dlq"), testenv.UniqueName("watch_work"), testenv.UniqueName("watch_ttl")
	t.Cleanup(func() {
		for _, q := range []string{dlq, work, ttl} {
			_, _ = ch.QueueDelete(q, false, false, false)
		}
	})
	dead := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}
	declare := func(name string, args amqp.Table) {
		if _, err := ch.QueueDeclare(name, false, false, false, false, args); err != nil {
			t.Fatal(err)
		}
	}
	declare(dlq, nil)
	declare(work, dead)
	ttlArgs := amqp.Table{"x-message-ttl": int32(1)}
	for k, v := range dead {
		ttlArgs[k] = v
	}
	declare(ttl, ttlArgs)
	ctx := context.Background()
	publish := func(q string, n int) {
		for range n {
			if err := ch.PublishWithContext(ctx, "", q, false, false, amqp.Publishing{Body: []byte(`{"orderId":"o-1"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(work, 3)
	publish(ttl, 2)
	for range 3 {
		var d amqp.Delivery
		var ok bool
		for deadline := time.Now().Add(5 * time.Second); !ok; {
			if d, ok, err = ch.Get(work, false); err != nil || time.Now().After(deadline) {
				t.Fatalf("getting from %s: ok %v, %v", work, ok, err)
			}
		}
		if err := d.Nack(false, false); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		q, err := ch.QueueDeclarePassive(dlq, false, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Messages == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the DLQ holds %d messages, want 5", q.Messages)
		}
	}
	addr := runWatch(t, "--amqp-url", url, "--dlq", dlq, "--check-interval", "dlq=1s")
	body := scrape(t, addr, "the DLQ counted by origin and reason", func(m string) bool {
		return value(m, `dupctl_dlq_messages{dlq="`+dlq+`",queue="`+work+`",reason="rejected"}`) == 3 &&
			value(m, `dupctl_dlq_messages{dlq="`+dlq+`",queue="`+ttl+`",reason="expired"}`) == 2
	})
	if value(body, `dupctl_check_runs_total{check="dlq",result="ok"}`) < 1 {
		t.Error("no ok run of the dlq check counted")
	}
}
