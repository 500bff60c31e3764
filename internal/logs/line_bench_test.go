package logs

import "testing"

// BenchmarkLine is the scanner's cost on one typical worker log line.
func BenchmarkLine(b *testing.B) {
	line := []byte(`{"ts":"2026-11-03T09:00:00.002Z","level":"info","event":"lock_acquired","jobId":"job-00000001","messageId":"msg-8707a01d","orderId":"ord-0000001","jobType":"payment","idempotencyKey":"payment:ord-0000001","lockKey":"lock:payment:order:ord-0000001","lockToken":"e9f053f6524af940","lockTtlMs":30000,"attempt":1,"redelivered":false,"consumerInstanceId":"worker-5"}`)
	x := &extractor{m: Default(), only: Fields(EventName, Message, BusinessKey, IdempotencyKey, JobID, MessageID, JobType, Destination, Attempt, RetryCount, Duration, ErrorType, Result)}
	var ev Event
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := x.line(line, &ev); err != nil {
			b.Fatal(err)
		}
	}
}
