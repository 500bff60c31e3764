package dlqread

import "github.com/dupctl/dupctl/internal/platform/findings"

// The rules of the reading verbs (and of every read, replay included).
var (
	ruleNonRetryableRetried = findings.Rule{
		Code: "DLQ_NON_RETRYABLE_RETRIED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a permanent error was retried before it was dead-lettered",
		Doc: `These dead letters failed with an error the rules classify as
non-retryable (invalid payload, entity missing, contract violation), yet
they died more than once: they went round the retry loop. A permanent error
fails the same way every time, so each retry only repeats whatever partial
side effects the handler did before failing (an e-mail, a reservation, a
charge without its status row): retries of permanent errors are a source
of duplicates and load, never of success.`,
		Fix: "Classify errors in the consumer: send non-retryable ones straight to the DLQ (reject without requeue, or throw " +
			"Spring's AmqpRejectAndDontRequeueException) and retry only temporary ones, with backoff and an attempt limit. Fix " +
			"the payload or the code before replaying this group.",
	}
	ruleDeliveryLimit = findings.Rule{
		Code: "DLQ_DELIVERY_LIMIT_POISON", Severity: findings.Warn, Since: "v0.3.0",
		Title: "poison messages: dead-lettered by a quorum queue's delivery limit",
		Doc: `These dead letters died of their queue's delivery limit (x-death reason
delivery_limit): a quorum queue delivered each of them limit + 1 times
(x-delivery-limit, or a delivery-limit policy) and every delivery ended in a
requeue - a consumer that failed and returned it, crashed, or outlived the
consumer timeout. x-death counts one death, but the handler ran on every
delivery: whatever side effect it did before failing (a charge, an e-mail, a
reservation) may have happened that many times. A replay delivers them again,
up to the limit each.`,
		Fix: "Find why they fail (the error column; a crash or a consumer timeout leaves none); check their side effects for " +
			"duplicates and make them idempotent before replaying; reject a permanent failure at once instead of requeueing it " +
			"until the limit.",
	}
	ruleReplayedBefore = findings.Rule{
		Code: "DLQ_REPLAYED_BEFORE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "dead letters that were already replayed and died again",
		Doc: `These messages carry dupctl-replay-count: an earlier replay sent them back
and they failed again. Replaying without fixing the cause turns the DLQ into a
loop in which every lap runs the handler (and its side effects) once more.`,
		Fix: "Find and fix the failure first (the error column groups them); replay with {MaxReplays} to park messages that keep coming back.",
	}
	ruleNoIdentity = findings.Rule{
		Code: "DLQ_NO_IDENTITY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "dead letters with neither a message id nor an idempotency key",
		Doc: `A replay, like any redelivery, may reach a consumer that already did the
work. Without a message id or an idempotency key, nothing downstream can
recognise the second copy, and nothing (not dupctl's {SkipSucceeded}
either) can tell whether the job already succeeded.`,
		Fix: "Have producers set message_id and an idempotency key derived from the business key (payment:<orderId>); the " +
			"consumer records it with a unique constraint before the side effect.",
	}
	ruleNoErrorContext = findings.Rule{
		Code: "DLQ_NO_ERROR_CONTEXT", Severity: findings.Info, Since: "v0.1.0",
		Title: "dead letters without an error message",
		Doc: `The messages do not say why they failed (no x-exception-message, error or
similar header; {ErrorField} names yours). Without it nobody can tell a
temporary failure, worth replaying, from a permanent one, which would only
fail again.`,
		Fix: "Dead-letter with context: jobId, business key, idempotency key, attempt count, a short error message and the time " +
			"of the last failure (Spring's RepublishMessageRecoverer adds x-exception-message).",
	}
	ruleNoOrigin = findings.Rule{
		Code: "DLQ_NO_ORIGIN", Severity: findings.Warn, Since: "v0.1.0",
		Title: "dead letters that do not say where they came from",
		Doc: `No x-death (broker dead-lettering) and no x-original-exchange /
x-original-routingKey (Spring's recoverer): a replay cannot route them home
by itself, and guessing the routing key sends them to the wrong consumers or
nowhere.`,
		Fix: "Replay them with an explicit {To} EXCHANGE[:ROUTING-KEY] (check the routing preview of the dry run first).",
	}
	ruleHasConsumers = findings.Rule{
		Code: "DLQ_HAS_CONSUMERS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "something consumes the dead-letter queue",
		Doc: `The DLQ has consumers. An automatic DLQ consumer that republishes turns
every permanent failure into an endless loop (each lap runs the handler
again), and a replay racing it can move the same message twice.`,
		Fix: "Stop the DLQ consumer; reprocess dead letters deliberately with 'dupctl dlq replay', which refuses to run while " +
			"another consumer is attached.",
	}
	ruleQuorumReads = findings.Rule{
		Code: "DLQ_READ_COUNTS_DELIVERIES", Severity: findings.Info, Since: "v0.1.0",
		Title: "reading this quorum queue counts toward its delivery limit",
		Doc: `The messages carry x-delivery-count: the DLQ is a quorum queue. Every
non-destructive read (consume, then requeue) increments the count and moves
the message behind the others; past the queue's delivery-limit (20 by
default since RabbitMQ 4.0, and before 4.3 every requeue counts) the broker
drops or dead-letters it - the DLQ's own messages can be lost by peeking.`,
		Fix: "Read a quorum DLQ sparingly (peek -n, one export instead of repeated peeks), raise or remove its delivery-limit, " +
			"or use a stream for dead letters you want to read often.",
	}
	ruleMalformed = findings.Rule{
		Code: "DLQ_MALFORMED_HEADERS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "death headers of the wrong type",
		Doc: `x-death, x-original-* or dupctl-replay-count were present but not of the
type RabbitMQ or Spring write (a client copied or rewrote them). dupctl
ignores what it cannot read, so origin routing and loop guards may not see
these messages' history.`,
		Fix: "Find the client that rewrites the headers; never set x- headers yourself (RabbitMQ 4 ignores client x-death); " +
			"replay these with {To}.",
	}
	RuleReadIncomplete = findings.Rule{
		Code: "DLQ_READ_INCOMPLETE", Severity: findings.Warn, Since: "v0.2.0",
		Title: "the read may not match what the queue held at its start",
		Doc: `A read counts the queue at its start (after waiting for an earlier
reader's messages to come back) and reads that many. This one could not
vouch for its count: fewer messages arrived than were counted (another
consumer took them, or they expired), the messages it read were not all
back in the queue when it ended, or new dead letters arrived meanwhile
(they are not in the count). After a lost node, a read that was given a
message twice (seen on a quorum queue right after its leader's node
stopped, with as many others not delivered) counts and shows it once and
says how many were not read. A partial count is never reported as if it
were the queue.`,
		Fix: "Read again once nothing else consumes or feeds the DLQ (stop the other consumers; 'rabbitmqctl list_consumers' names them).",
	}
	ruleExportIncomplete = findings.Rule{
		Code: "DLQ_EXPORT_INCOMPLETE", Severity: findings.Error, Since: "v0.2.0",
		Title: "the export file holds fewer messages than the queue did",
		Doc: `The export wrote fewer messages than the queue held at its start (or
{Limit} asked for): the file is not the queue. An archive or a replay made
from it would silently miss the rest.`,
		Fix: "Export again once nothing else consumes the DLQ; compare the count with 'dupctl dlq stats'.",
	}
	ruleReadLost = findings.Rule{
		Code: "DLQ_READ_CONNECTION_LOST", Severity: findings.Error, Since: "v0.3.0",
		Title: "the connection was lost mid-read: what is shown is only what was read before",
		Doc: `The connection to the node the read went through was lost before the read
ended, and the queue could not be read again through another node: {AMQPURL}
names one address, no other node answered for the queue (a classic queue
lives on one node: with that node down nobody can serve it), or an export
went to a stream, which cannot take back the records it already holds.
Nothing was removed from the queue (the broker gives a dead channel's
messages back), but the output - the peek's messages, the export's records,
the stats - covers only the messages read before the loss; the finding says
how many were not read and why no other node read them, and an export's file
keeps its .partial name.`,
		Fix: "Run the command again once a node answers for the queue (it dials every address the URL names); " +
			"for a classic queue, once its node is back.",
	}
	ruleReadFailover = findings.Rule{
		Code: "DLQ_READ_FAILOVER", Severity: findings.Info, Since: "v0.3.0",
		Title: "a node was lost mid-read and the queue was read again through another",
		Doc: `The connection to one node of the cluster was lost during the read. The
messages it held went back to the queue, and the whole queue was read again
through the next node of {AMQPURL} that answered for it: the figures, the
peek's messages and the export's records are that second read's, never a sum
of two halves (an export's file is emptied first), so no message is counted
or written twice. The cost: on a quorum queue each message the lost read
took was delivered once more. When the node was lost once every message had
been read, nothing is read again: the queue's count is checked through
another node instead.`,
		Fix: "Check the lost node.",
	}
)

// Rules are the rules of stats, peek and export, for the catalog
// (replay.Rules lists them first).
func Rules() []findings.Rule {
	return []findings.Rule{
		ruleNonRetryableRetried, ruleDeliveryLimit, ruleReplayedBefore, ruleNoIdentity, ruleNoErrorContext, ruleNoOrigin,
		ruleHasConsumers, ruleQuorumReads, ruleMalformed, RuleReadIncomplete, ruleExportIncomplete, ruleReadLost, ruleReadFailover,
	}
}

// ReadChecks are the rules every read evaluates (Findings).
var ReadChecks = []string{ruleHasConsumers.Code, ruleQuorumReads.Code, ruleMalformed.Code, RuleReadIncomplete.Code}

// statsChecks are the rules `dlq stats` evaluates.
var statsChecks = append([]string{ruleNonRetryableRetried.Code, ruleDeliveryLimit.Code, ruleReplayedBefore.Code, ruleNoIdentity.Code,
	ruleNoErrorContext.Code, ruleNoOrigin.Code, ruleReadLost.Code, ruleReadFailover.Code}, ReadChecks...)
