// Package replay is `dupctl dlq`: what is in a RabbitMQ dead-letter queue
// and why (stats, peek, export), and a replay under control: dry run by
// default, publisher confirms and mandatory on a connection of its own, the
// DLQ message acked only after its republish is confirmed and not returned,
// a journal to resume and audit, loop guards and an idempotency skip.
//
// Reading a queue here is non-destructive: messages are consumed with a
// prefetch window, held unacked and requeued together at the end (see
// docs/dlq.md for what reading still changes: the redelivered flag, and on
// quorum queues the delivery count and the order).
package replay

import "github.com/dupctl/dupctl/internal/platform/findings"

// The dlq rules.
var (
	RuleNonRetryableRetried = findings.Rule{
		Code: "DLQ_NON_RETRYABLE_RETRIED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a permanent error was retried before it was dead-lettered",
		Doc: `These dead letters failed with an error the rules classify as
non-retryable (invalid payload, entity missing, contract violation), yet
they died more than once: they went round the retry loop. A permanent error
fails the same way every time, so each retry only repeats whatever partial
side effects the handler did before failing (an e-mail, a reservation, a
charge without its status row): retries of permanent errors are a source
of duplicates and load, never of success.`,
		Fix: "Classify errors in the consumer: send non-retryable ones straight to the DLQ (reject without requeue, or throw Spring's AmqpRejectAndDontRequeueException) and retry only temporary ones, with backoff and an attempt limit. Fix the payload or the code before replaying this group.",
	}
	RuleReplayedBefore = findings.Rule{
		Code: "DLQ_REPLAYED_BEFORE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "dead letters that were already replayed and died again",
		Doc: `These messages carry dupctl-replay-count: an earlier replay sent them back
and they failed again. Replaying without fixing the cause turns the DLQ into a
loop in which every lap runs the handler (and its side effects) once more.`,
		Fix: "Find and fix the failure first (the error column groups them); replay with --max-replays to park messages that keep coming back.",
	}
	RuleNoIdentity = findings.Rule{
		Code: "DLQ_NO_IDENTITY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "dead letters with neither a message id nor an idempotency key",
		Doc: `A replay, like any redelivery, may reach a consumer that already did the
work. Without a message id or an idempotency key, nothing downstream can
recognise the second copy, and nothing (not dupctl's --skip-succeeded
either) can tell whether the job already succeeded.`,
		Fix: "Have producers set message_id and an idempotency key derived from the business key (payment:<orderId>); the consumer records it with a unique constraint before the side effect.",
	}
	RuleNoErrorContext = findings.Rule{
		Code: "DLQ_NO_ERROR_CONTEXT", Severity: findings.Info, Since: "v0.1.0",
		Title: "dead letters without an error message",
		Doc: `The messages do not say why they failed (no x-exception-message, error or
similar header; --error-field names yours). Without it nobody can tell a
temporary failure, worth replaying, from a permanent one, which would only
fail again.`,
		Fix: "Dead-letter with context: jobId, business key, idempotency key, attempt count, a short error message and the time of the last failure (Spring's RepublishMessageRecoverer adds x-exception-message).",
	}
	RuleNoOrigin = findings.Rule{
		Code: "DLQ_NO_ORIGIN", Severity: findings.Warn, Since: "v0.1.0",
		Title: "dead letters that do not say where they came from",
		Doc: `No x-death (broker dead-lettering) and no x-original-exchange /
x-original-routingKey (Spring's recoverer): a replay cannot route them home
by itself, and guessing the routing key sends them to the wrong consumers or
nowhere.`,
		Fix: "Replay them with an explicit --to EXCHANGE[:ROUTING-KEY] (check the routing preview of the dry run first).",
	}
	RuleHasConsumers = findings.Rule{
		Code: "DLQ_HAS_CONSUMERS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "something consumes the dead-letter queue",
		Doc: `The DLQ has consumers. An automatic DLQ consumer that republishes turns
every permanent failure into an endless loop (each lap runs the handler
again), and a replay racing it can move the same message twice.`,
		Fix: "Stop the DLQ consumer; reprocess dead letters deliberately with 'dupctl dlq replay', which refuses to run while another consumer is attached.",
	}
	RuleQuorumReads = findings.Rule{
		Code: "DLQ_READ_COUNTS_DELIVERIES", Severity: findings.Info, Since: "v0.1.0",
		Title: "reading this quorum queue counts toward its delivery limit",
		Doc: `The messages carry x-delivery-count: the DLQ is a quorum queue. Every
non-destructive read (consume, then requeue) increments the count and moves
the message behind the others; past the queue's delivery-limit (20 by
default since RabbitMQ 4.0, and before 4.3 every requeue counts) the broker
drops or dead-letters it - the DLQ's own messages can be lost by peeking.`,
		Fix: "Read a quorum DLQ sparingly (peek -n, one export instead of repeated peeks), raise or remove its delivery-limit, or use a stream for dead letters you want to read often.",
	}
	RuleMalformed = findings.Rule{
		Code: "DLQ_MALFORMED_HEADERS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "death headers of the wrong type",
		Doc: `x-death, x-original-* or dupctl-replay-count were present but not of the
type RabbitMQ or Spring write (a client copied or rewrote them). dupctl
ignores what it cannot read, so origin routing and loop guards may not see
these messages' history.`,
		Fix: "Find the client that rewrites the headers; never set x- headers yourself (RabbitMQ 4 ignores client x-death); replay these with --to.",
	}
	RuleReadIncomplete = findings.Rule{
		Code: "DLQ_READ_INCOMPLETE", Severity: findings.Warn, Since: "v0.2.0",
		Title: "the read may not match what the queue held at its start",
		Doc: `A read counts the queue at its start (after waiting for an earlier
reader's messages to come back) and reads that many. This one could not
vouch for its count: fewer messages arrived than were counted (another
consumer took them, or they expired), the messages it read were not all
back in the queue when it ended, or new dead letters arrived meanwhile
(they are not in the count). A partial count is never reported as if it
were the queue.`,
		Fix: "Read again once nothing else consumes or feeds the DLQ (stop the other consumers; 'rabbitmqctl list_consumers' names them).",
	}
	RuleExportIncomplete = findings.Rule{
		Code: "DLQ_EXPORT_INCOMPLETE", Severity: findings.Error, Since: "v0.2.0",
		Title: "the export file holds fewer messages than the queue did",
		Doc: `The export wrote fewer messages than the queue held at its start (or
--limit asked for): the file is not the queue. An archive or a replay made
from it would silently miss the rest.`,
		Fix: "Export again once nothing else consumes the DLQ; compare the count with 'dupctl dlq stats'.",
	}

	RuleInDoubt = findings.Rule{
		Code: "DLQ_REPLAY_IN_DOUBT", Severity: findings.Error, Since: "v0.1.0",
		Title: "a replayed message may or may not have reached its destination",
		Doc: `The connection went away (or the broker nacked a publish to an exchange)
after the message was published and before its confirm arrived. It is still
in the DLQ, and it may also be at the destination: replaying it again could
run the job twice. dupctl never retries these silently; the journal lists
them.`,
		Fix: "Check the destination (or the consumer's idempotency table) for these message ids; then resume with --resume JOURNAL --retry-in-doubt if they are missing, or remove them from the DLQ if they arrived.",
	}
	RuleReturned = findings.Rule{
		Code: "DLQ_REPLAY_RETURNED", Severity: findings.Error, Since: "v0.1.0",
		Title: "a replayed message was unroutable and stayed in the DLQ",
		Doc: `The broker returned the publish (mandatory flag): no queue is bound for its
exchange and routing key. Without mandatory it would have been dropped
silently and acked from the DLQ: lost. dupctl requeued it in the DLQ.`,
		Fix: "Check the destination in the dry run's routing preview: bind a queue, or replay with --to naming an exchange and key that route.",
	}
	RuleNacked = findings.Rule{
		Code: "DLQ_REPLAY_NACKED", Severity: findings.Error, Since: "v0.1.0",
		Title: "the broker refused a replayed message",
		Doc: `The broker nacked the publish (an internal error, or a full destination
with overflow reject-publish). The message stayed in the DLQ.`,
		Fix: "Check the destination queue's length limit and the broker log, then replay again.",
	}
	RuleBounced = findings.Rule{
		Code: "DLQ_REPLAY_BOUNCED", Severity: findings.Error, Since: "v0.1.0",
		Title: "messages of this replay came back to the DLQ",
		Doc: `Replayed messages failed again and were dead-lettered back into the DLQ
during the run: the failure is not fixed, and going on would only loop.
The run watches the DLQ's depth while it replays: when it gains more
messages than --max-bounces allows (default 0), the run stops; messages
read that carry this run's id are never replayed again by it, and after
the count at its start the run reads what arrived to confirm which are
its own. New dead letters from elsewhere would also make the DLQ grow: the
finding says how many arrived and how many were seen to be this run's.`,
		Fix: "Fix the consumer (see the error group in 'dupctl dlq stats'), then replay; --max-replays parks messages that keep failing.",
	}
	RuleParked = findings.Rule{
		Code: "DLQ_REPLAY_PARKED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "messages were moved to the parking queue",
		Doc: `These messages were replayed --max-replays times already (or their
idempotency key is already SUCCEEDED and --succeeded park was given): they
were published to the parking queue, confirmed, and only then removed from
the DLQ.`,
		Fix: "Inspect the parking queue with 'dupctl dlq peek --queue PARKED'; these need a code or data fix, not another replay.",
	}
	RuleNoDestination = findings.Rule{
		Code: "DLQ_REPLAY_NO_DESTINATION", Severity: findings.Warn, Since: "v0.1.0",
		Title: "messages without a destination were left in the DLQ",
		Doc: `No x-death and no x-original-* headers say where these came from (or they
name the DLQ itself), and no --to was given. They were not replayed.`,
		Fix: "Replay them with --to EXCHANGE[:ROUTING-KEY].",
	}
	RuleAckLost = findings.Rule{
		Code: "DLQ_REPLAY_ACK_LOST", Severity: findings.Warn, Since: "v0.1.0",
		Title: "replayed messages are at their destination and back in the DLQ",
		Doc: `The publish was confirmed, then the DLQ connection went away before the ack
reached the broker, so the DLQ copy was requeued. The journal records the
confirm: a --resume run acks these without publishing them again.`,
		Fix: "Run the same replay with --resume JOURNAL.",
	}
	RuleSkippedSucceeded = findings.Rule{
		Code: "DLQ_REPLAY_SKIPPED_SUCCEEDED", Severity: findings.Info, Since: "v0.1.0",
		Title: "messages whose job already succeeded were not replayed",
		Doc: `Their idempotency key is SUCCEEDED in the source of truth: replaying them
would run a finished job again - the very duplicate a replay must not cause.`,
		Fix: "Nothing to replay; remove them from the DLQ (--succeeded park) once you have checked a few.",
	}
	RuleNoKey = findings.Rule{
		Code: "DLQ_REPLAY_NO_IDEMPOTENCY_KEY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "--skip-succeeded could not check messages without an idempotency key",
		Doc: `With --skip-succeeded, messages without an idempotency key (see
--idempotency-key) cannot be checked against the database, so they were
replayed unchecked.`,
		Fix: "Name the header or body field holding the key with --idempotency-key, or have producers set one.",
	}
	RuleFanout = findings.Rule{
		Code: "DLQ_REPLAY_TO_EXCHANGE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the replay publishes to an exchange, not to the queue the message died in",
		Doc: `Publishing to an exchange routes the message to every queue bound for its
key: consumers that already processed it successfully get it again. Origin
routing through the queue it died in (the default) reaches only that queue.`,
		Fix: "Replay without --origin exchange / --to EXCHANGE unless every bound consumer is idempotent; the dry run lists the destinations.",
	}
	RuleDestMissing = findings.Rule{
		Code: "DLQ_REPLAY_DESTINATION_MISSING", Severity: findings.Error, Since: "v0.1.0",
		Title: "a replay destination does not exist",
		Doc: `A destination queue or exchange does not exist. The dry run reports it; a
replay checks each destination before its first publish and does not
publish into a missing one (a missing exchange makes the broker close the
channel, a missing queue returns every message): those messages stay in
the DLQ and the run stops with exit status 2. --create-destination lets it
declare a missing queue (durable); a missing exchange is never created.`,
		Fix: "Create the queue or exchange, pass --create-destination for a queue, or choose another destination with --to.",
	}
	RuleReplayNonRetryable = findings.Rule{
		Code: "DLQ_REPLAY_NON_RETRYABLE", Severity: findings.Warn, Since: "v0.2.0",
		Title: "the dry run would replay messages whose error is permanent",
		Doc: `Some of the messages the replay would send back failed with an error the
rules classify as non-retryable (invalid payload, entity missing, contract
violation). Unless the data or the code was fixed since, they fail the same
way again - and repeat whatever partial side effects the handler did.`,
		Fix: "Fix the cause first, or leave them out (--reason, --group, --where); 'dlq stats' shows the groups and their class.",
	}
	RuleGroupUnmatched = findings.Rule{
		Code: "DLQ_REPLAY_GROUP_UNMATCHED", Severity: findings.Warn, Since: "v0.2.0",
		Title: "a --group id matched no message",
		Doc: `No message read belongs to this stats group: a mistyped id, a group from
another queue, or one already replayed. Everything else was filtered out,
so the replay did nothing for it.`,
		Fix: "Take the id from 'dupctl dlq stats --queue QUEUE' of this queue.",
	}
	RuleConnectionLost = findings.Rule{
		Code: "DLQ_REPLAY_CONNECTION_LOST", Severity: findings.Error, Since: "v0.2.0",
		Title: "a connection to RabbitMQ was lost during the replay",
		Doc: `The consumer or the publisher connection went away mid-run. Nothing is
lost: unconfirmed publishes are in doubt and left in the DLQ, and the
journal records every outcome. The run exits with status 3.`,
		Fix: "Run the same replay with --resume JOURNAL (add --retry-in-doubt once the in-doubt messages are checked).",
	}
)

// Rules are every rule of the dlq commands, for the catalog.
func Rules() []findings.Rule {
	return []findings.Rule{
		RuleNonRetryableRetried, RuleReplayedBefore, RuleNoIdentity, RuleNoErrorContext, RuleNoOrigin,
		RuleHasConsumers, RuleQuorumReads, RuleMalformed, RuleReadIncomplete, RuleExportIncomplete,
		RuleInDoubt, RuleReturned, RuleNacked, RuleBounced, RuleParked, RuleNoDestination, RuleAckLost,
		RuleSkippedSucceeded, RuleNoKey, RuleFanout, RuleDestMissing, RuleReplayNonRetryable, RuleGroupUnmatched,
		RuleConnectionLost,
	}
}

// StatsChecks are the rules `dlq stats` evaluates.
var StatsChecks = []string{RuleNonRetryableRetried.Code, RuleReplayedBefore.Code, RuleNoIdentity.Code,
	RuleNoErrorContext.Code, RuleNoOrigin.Code, RuleHasConsumers.Code, RuleQuorumReads.Code, RuleMalformed.Code,
	RuleReadIncomplete.Code}

// ReplayChecks are the rules `dlq replay` evaluates.
var ReplayChecks = []string{RuleInDoubt.Code, RuleReturned.Code, RuleNacked.Code, RuleBounced.Code, RuleParked.Code,
	RuleNoDestination.Code, RuleAckLost.Code, RuleSkippedSucceeded.Code, RuleNoKey.Code, RuleFanout.Code,
	RuleDestMissing.Code, RuleReplayNonRetryable.Code, RuleGroupUnmatched.Code, RuleConnectionLost.Code,
	RuleHasConsumers.Code, RuleQuorumReads.Code, RuleMalformed.Code, RuleReadIncomplete.Code}
