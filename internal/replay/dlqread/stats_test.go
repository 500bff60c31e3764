package dlqread

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/classify"
	amqp "github.com/rabbitmq/amqp091-go"
)

// poison is a dead letter with the headers RabbitMQ 3.10.8 writes when a
// quorum queue's delivery limit (x-delivery-limit 2, x-dead-letter-strategy
// at-least-once) dead-letters a message, as read from a quorum DLQ for the
// second time (x-delivery-count 1: the DLQ's own count).
func poison(id, errText string) *deadletter.Message {
	died := time.Date(2026, 12, 3, 14, 41, 10, 0, time.UTC)
	h := amqp.Table{
		"x-death": []any{amqp.Table{"count": int64(1), "exchange": "", "queue": "orders.work", "reason": "delivery_limit",
			"routing-keys": []any{"orders.work"}, "time": died}},
		"x-delivery-count": int64(1), "x-first-death-exchange": "", "x-first-death-queue": "orders.work",
		"x-first-death-reason": "delivery_limit",
	}
	if errText != "" {
		h["x-exception-message"] = errText
	}
	return &deadletter.Message{Props: deadletter.Properties{MessageID: id, Headers: h}, Body: []byte("boom")}
}

// TestDeliveryLimitGroups: poison messages are grouped by their reason,
// delivery_limit, and named: DLQ_DELIVERY_LIMIT_POISON for each group,
// and a permanent error requeued until the limit is a permanent error
// retried (one x-death, yet limit + 1 deliveries).
func TestDeliveryLimitGroups(t *testing.T) {
	ag := newAggregator(&classify.Analyzer{}, nil, "orders.dlq", "/")
	for i, e := range []string{"NullPointerException", "NullPointerException", "", "connection reset by peer"} {
		ag.add(poison(string(rune('a'+i)), e))
	}
	s := ag.done(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
	s.Read = Result{AtStart: QueueState{Messages: 4}, Target: 4, Read: 4, Settled: true, AtEnd: QueueState{Messages: 4}}
	if s.ByReason["delivery_limit"] != 4 || len(s.Groups) != 3 {
		t.Fatalf("by reason %v, %d groups", s.ByReason, len(s.Groups))
	}
	for _, g := range s.Groups {
		if g.Reason != "delivery_limit" || g.DeliveryLimited != g.Messages || g.DeathsMax != 1 {
			t.Errorf("group %+v", g)
		}
	}
	var codes []string
	var texts []string
	for _, f := range s.Report().Findings {
		codes = append(codes, f.Code)
		texts = append(texts, f.Message+" | "+strings.Join(f.Evidence, " | "))
	}
	slices.Sort(codes)
	want := []string{"DLQ_DELIVERY_LIMIT_POISON", "DLQ_DELIVERY_LIMIT_POISON", "DLQ_DELIVERY_LIMIT_POISON", "DLQ_NON_RETRYABLE_RETRIED",
		"DLQ_NO_ERROR_CONTEXT"}
	if !slices.Equal(codes, want) {
		t.Fatalf("findings %v, want %v:\n%s", codes, want, strings.Join(texts, "\n"))
	}
	for _, w := range []string{
		`2 messages failed with a permanent error (NullPointerException) and were requeued until queue "orders.work"'s ` +
			`delivery limit dead-lettered them`,
		`2 messages dead-lettered by queue "orders.work"'s delivery limit: each delivered limit + 1 times, ` +
			`the handler ran on every delivery | error: NullPointerException`,
		"the error column is empty: a crash or a consumer timeout?",
	} {
		if !strings.Contains(strings.Join(texts, "\n"), w) {
			t.Errorf("no finding says %q:\n%s", w, strings.Join(texts, "\n"))
		}
	}
}
