package replay

import (
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/classify"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestRewriteMovesDeathHistory(t *testing.T) {
	h := amqp.Table{"x-death": []any{amqp.Table{"queue": "work"}}, "x-first-death-queue": "work", "retry-count": int16(5),
		"x-exception-message": "boom", deadletter.HeaderReplayCount: int64(1),
		deadletter.HeaderDeath: []any{amqp.Table{"x-death": "older"}}, "tenant": "acme"}
	m := &deadletter.Message{Props: deadletter.Properties{Headers: h, MessageID: "m", CorrelationID: "c", UserID: "someone"}}
	rw := Rewrite{Run: "r1", ResetAttempts: "retry-count", User: "guest", Now: time.Unix(0, 0)}
	p := rw.replayed(m, 7, classify.Target{RoutingKey: "work"})
	for _, k := range []string{"x-death", "x-first-death-queue", "x-exception-message"} {
		if _, ok := p.Headers[k]; ok {
			t.Errorf("%s was copied", k)
		}
	}
	hist := p.Headers[deadletter.HeaderDeath].([]any)
	if len(hist) != 2 || hist[0].(amqp.Table)["x-first-death-queue"] != "work" || hist[1].(amqp.Table)["x-death"] != "older" {
		t.Fatalf("history: %#v", hist)
	}
	if p.Headers[deadletter.HeaderReplayCount] != int64(2) || p.Headers[deadletter.HeaderReplayRun] != "r1" ||
		p.Headers[deadletter.HeaderReplayID] != "r1-7" ||
		p.Headers["retry-count"] != int16(0) || p.Headers["tenant"] != "acme" {
		t.Fatalf("headers: %#v", p.Headers)
	}
	if p.MessageId != "m" || p.CorrelationId != "c" || p.UserId != "" || p.DeliveryMode != amqp.Persistent {
		t.Fatalf("properties: %+v", p)
	}
	if _, ok := m.Props.Headers["x-death"]; !ok {
		t.Fatal("the source message's headers were modified")
	}
}

// A recoverer-style message (Spring's x-exception-message) replayed once
// and dead-lettered again by the broker keeps its error and class: the
// replay moved the exception headers into dupctl-death, and the broker
// added only x-death (issue 21).
func TestReplayedRecovererMessageKeepsItsClass(t *testing.T) {
	m := &deadletter.Message{Props: deadletter.Properties{Headers: amqp.Table{"x-exception-message": "order 17 not found",
		"x-original-exchange": "orders", "x-original-routingKey": "order.created"}}}
	rw := Rewrite{Run: "r1", Now: time.Unix(0, 0)}
	p := rw.replayed(m, 1, classify.Target{Exchange: "orders", RoutingKey: "order.created"})
	p.Headers["x-death"] = []any{amqp.Table{"queue": "orders.work", "reason": "rejected", "count": int64(1)}}
	again := &deadletter.Message{Props: deadletter.Properties{Headers: p.Headers}}
	in := (&classify.Analyzer{}).Analyze(again)
	if in.Error != "order 17 not found" || in.Class != classify.NonRetryable {
		t.Fatalf("after one replay: error %q class %s (%s)", in.Error, in.Class, in.ClassRule)
	}
}
