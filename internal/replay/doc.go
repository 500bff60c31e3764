// Package replay is `dupctl dlq replay`: dead letters republished under
// control. A dry run by default; with Yes, publisher confirms and
// mandatory on a connection of its own, the DLQ message acked only after
// its republish is confirmed and not returned, a journal to resume and
// audit, loop guards and an idempotency skip.
//
// Its parts, each a package of its own:
//
//	dlqread            reading a DLQ: stats, peek and export
//	classify           what a dead letter says: fields, error class, stats group, filters, origin routing
//	journal            the replay journal, and what a resumed run may settle without publishing
//	internal/consume   the consumer both read with (prefetch bounded in messages and bytes,
//	                   held messages, batched acks) and the waits for a queue to settle
//
// The message, its death history and its export-file record are
// internal/deadletter, shared with keys unstable. Rules gathers every dlq
// rule for the catalog.
package replay
