// Package dlqread reads a RabbitMQ dead-letter queue without losing or
// consuming anything: `dupctl dlq stats` (what is in it and why, by
// group), `dlq peek` (the first messages in full) and `dlq export` (every
// message to a lossless file, optionally draining the queue once the file
// is synced).
//
// A read is non-destructive: it counts the queue at its start (after an
// earlier reader's messages are back), consumes with a prefetch window
// bounded in messages and bytes (internal/consume), holds every message
// unacked and requeues them together at the end, then waits until the
// queue shows them back (internal/consume/settle.go says why closing at
// once is not enough). What reading still changes: the redelivered flag,
// and on quorum queues the delivery count and the order (docs/dlq.md).
package dlqread
