package classify

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dupctl/dupctl/internal/deadletter"
)

// BenchmarkAnalyze against BenchmarkOrigin: what classifying each message
// costs dlq replay --yes, which classifies every message it reads since
// it repeats the dry run's warnings (go test -bench 'Analyze|Origin').
func BenchmarkAnalyze(b *testing.B) { benchRead(b, (&Analyzer{}).Analyze) }

func BenchmarkOrigin(b *testing.B) { benchRead(b, (&Analyzer{}).Origin) }

func benchRead(b *testing.B, read func(*deadletter.Message) Info) {
	m := &deadletter.Message{Props: deadletter.Properties{MessageID: "m-1", Headers: amqp.Table{
		"x-exception-message": "validation failed: amount must be positive for order ord-41495",
		"x-death": []any{amqp.Table{"count": int64(1), "queue": "payments", "reason": "rejected", "exchange": "",
			"routing-keys": []any{"payments"}}},
	}}, Body: []byte(`{"orderId":"ord-41495"}`)}
	b.ReportAllocs()
	for b.Loop() {
		_ = read(m)
	}
}
