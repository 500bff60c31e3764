package logs

import (
	"testing"
	"time"
)

var benchFields = Fields(EventName, Message, BusinessKey, IdempotencyKey, JobID, MessageID, JobType, Destination, Attempt, RetryCount,
	Duration, ErrorType, Result)

// BenchmarkLine is the scanner's cost on one typical worker log line.
func BenchmarkLine(b *testing.B) {
	benchLine(b, `{"ts":"2026-11-03T09:00:00.002Z","level":"info","event":"lock_acquired","jobId":"job-00000001",`+
		`"messageId":"msg-8707a01d","orderId":"ord-0000001","jobType":"payment","idempotencyKey":"payment:ord-0000001",`+
		`"lockKey":"lock:payment:order:ord-0000001","lockToken":"e9f053f6524af940","lockTtlMs":30000,"attempt":1,"redelivered":false,`+
		`"consumerInstanceId":"worker-5"}`)
}

// BenchmarkMessageLine is the same line with the step only in a
// 100-character message (issue 16's shape): the verdict comes from the
// template cache.
func BenchmarkMessageLine(b *testing.B) {
	benchLine(b, `{"time":"2026-11-03T09:00:00.002Z","level":"INFO","msg":"side_effect: payment capture sent for order, `+
		`provider=stripe see span 4bf92f3577b34da6 for details","jobId":"job-00000001","messageId":"msg-8707a01d","orderId":"ord-0000001",`+
		`"jobType":"payment","idempotencyKey":"payment:ord-0000001","attempt":1,"redelivered":false,"consumerInstanceId":"worker-5"}`)
}

func benchLine(b *testing.B, s string) {
	line := []byte(s)
	x := &extractor{m: Default(), only: benchFields}
	var ev Event
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := x.line(line, &ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTemplateHash is the cache key of a message with an id in it.
func BenchmarkTemplateHash(b *testing.B) {
	msg := []byte("side_effect: payment capture sent for order, provider=stripe see span 4bf92f3577b34da6 for details")
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		templateHash(msg)
	}
}

// BenchmarkParseRFC3339 is the fast path every timestamp takes;
// BenchmarkTimeParse is time.Parse on the same text, what it saves.
func BenchmarkParseRFC3339(b *testing.B) {
	for b.Loop() {
		if _, ok := parseRFC3339("2026-11-03T09:00:00.002+01:00"); !ok {
			b.Fatal("not read")
		}
	}
}

func BenchmarkTimeParse(b *testing.B) {
	for b.Loop() {
		if _, err := time.Parse(time.RFC3339Nano, "2026-11-03T09:00:00.002+01:00"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTimestampLen is the timestamp scan at the start of every
// console line, over four of the layouts it knows.
func BenchmarkTimestampLen(b *testing.B) {
	lines := [][]byte{
		[]byte("2025-05-10T01:34:33.608Z  INFO 88909 --- [myapp] [           main] o.s.b.d.f.logexample.MyApplication : Starting"),
		[]byte("09:07:50.215 [main] INFO  c.e.PaymentListener - message"),
		[]byte("Dec  2 09:07:50 worker-3 payments[412]: lock acquired"),
		[]byte("2026/11/03 09:00:00 lock acquired order=ord-1"),
	}
	for b.Loop() {
		for _, l := range lines {
			if timestampLen(l) == 0 {
				b.Fatalf("no timestamp in %q", l)
			}
		}
	}
}
