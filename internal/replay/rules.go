package replay

import (
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
)

// The rules of a replay.
var (
	ruleInDoubt = findings.Rule{
		Code: "DLQ_REPLAY_IN_DOUBT", Severity: findings.Error, Since: "v0.1.0",
		Title: "a replayed message may or may not have reached its destination",
		Doc: `The connection went away (or the broker nacked a publish to an exchange)
after the message was published and before its confirm arrived. It is still
in the DLQ, and it may also be at the destination: replaying it again could
run the job twice. dupctl never retries these silently; the journal lists
them.`,
		Fix: "Check the destination (or the consumer's idempotency table) for these message ids; " +
			"then resume with {Resume} JOURNAL {RetryInDoubt} if they are missing, or remove them from the DLQ if they arrived.",
	}
	ruleReturned = findings.Rule{
		Code: "DLQ_REPLAY_RETURNED", Severity: findings.Error, Since: "v0.1.0",
		Title: "a replayed message was unroutable and stayed in the DLQ",
		Doc: `The broker returned the publish (mandatory flag): no queue is bound for its
exchange and routing key. Without mandatory it would have been dropped
silently and acked from the DLQ: lost. dupctl requeued it in the DLQ.`,
		Fix: "Check the destination in the dry run's routing preview: bind a queue, or replay with {To} naming an exchange and key that route.",
	}
	ruleNacked = findings.Rule{
		Code: "DLQ_REPLAY_NACKED", Severity: findings.Error, Since: "v0.1.0",
		Title: "the broker refused a replayed message",
		Doc: `The broker nacked the publish (an internal error, or a full destination
with overflow reject-publish). The message stayed in the DLQ.`,
		Fix: "Check the destination queue's length limit and the broker log, then replay again.",
	}
	ruleBounced = findings.Rule{
		Code: "DLQ_REPLAY_BOUNCED", Severity: findings.Error, Since: "v0.1.0",
		Title: "messages of this replay came back to the DLQ",
		Doc: `Replayed messages failed again and were dead-lettered back into the DLQ
during the run: the failure is not fixed, and going on would only loop.
The run watches the DLQ's depth while it replays: when it gains more
messages than {MaxBounces} allows (default 0), the run stops; messages
read that carry this run's id are never replayed again by it, and after
the count at its start the run reads what arrived to confirm which are
its own. New dead letters from elsewhere would also make the DLQ grow: the
finding says how many arrived and how many were seen to be this run's.`,
		Fix: "Fix the consumer (see the error group in 'dupctl dlq stats'), then replay; {MaxReplays} parks messages that keep failing.",
	}
	ruleParked = findings.Rule{
		Code: "DLQ_REPLAY_PARKED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "messages were moved to the parking queue",
		Doc: `These messages were replayed {MaxReplays} times already (or their
idempotency key is already SUCCEEDED and {Succeeded} park was given): they
were published to the parking queue, confirmed, and only then removed from
the DLQ.`,
		Fix: "Inspect the parking queue with 'dupctl dlq peek --queue PARKED'; these need a code or data fix, not another replay.",
	}
	ruleNoDestination = findings.Rule{
		Code: "DLQ_REPLAY_NO_DESTINATION", Severity: findings.Warn, Since: "v0.1.0",
		Title: "messages without a destination were left in the DLQ",
		Doc: `No x-death and no x-original-* headers say where these came from (or they
name the DLQ itself), and no {To} was given. They were not replayed.`,
		Fix: "Replay them with {To} EXCHANGE[:ROUTING-KEY].",
	}
	ruleAckLost = findings.Rule{
		Code: "DLQ_REPLAY_ACK_LOST", Severity: findings.Warn, Since: "v0.1.0",
		Title: "replayed messages are at their destination and back in the DLQ",
		Doc: `The publish was confirmed, then the DLQ ack was lost: the connection went away
before it reached the broker, or the broker dropped it (a quorum queue whose
leader moved under the channel), so the DLQ copy was requeued. The journal
records the confirm: a {Resume} run acks a copy whose ack never left without
publishing it again, and holds one whose ack was sent in doubt - at most as
many copies of one content as the DLQ's depth says acks were lost. When the
run counted them from the DLQ's depth at its end (copies certainly back in
the DLQ), the finding is an error: the run did not mean to leave them.`,
		Fix: "Run the same replay with {Resume} JOURNAL; remove copies it holds in doubt once you have checked they arrived.",
	}
	ruleSkippedSucceeded = findings.Rule{
		Code: "DLQ_REPLAY_SKIPPED_SUCCEEDED", Severity: findings.Info, Since: "v0.1.0",
		Title: "messages whose job already succeeded were not replayed",
		Doc: `Their idempotency key is SUCCEEDED in the source of truth: replaying them
would run a finished job again - the very duplicate a replay must not cause.`,
		Fix: "Nothing to replay; remove them from the DLQ ({Succeeded} park) once you have checked a few.",
	}
	ruleNoKey = findings.Rule{
		Code: "DLQ_REPLAY_NO_IDEMPOTENCY_KEY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "{SkipSucceeded} could not check messages without an idempotency key",
		Doc: `With {SkipSucceeded}, messages without an idempotency key (see
{IdempotencyKeys}) cannot be checked against the database, so they were
replayed unchecked.`,
		Fix: "Name the header or body field holding the key with {IdempotencyKeys}, or have producers set one.",
	}
	ruleFanout = findings.Rule{
		Code: "DLQ_REPLAY_TO_EXCHANGE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the replay publishes to an exchange, not to the queue the message died in",
		Doc: `Publishing to an exchange routes the message to every queue bound for its
key: consumers that already processed it successfully get it again. Origin
routing through the queue it died in (the default) reaches only that queue.`,
		Fix: "Replay without {Origin} exchange / {To} EXCHANGE unless every bound consumer is idempotent; the dry run lists the destinations.",
	}
	ruleDestMissing = findings.Rule{
		Code: "DLQ_REPLAY_DESTINATION_MISSING", Severity: findings.Error, Since: "v0.1.0",
		Title: "a replay destination does not exist",
		Doc: `A destination queue or exchange does not exist. The dry run reports it; a
replay checks each destination before its first publish and does not
publish into a missing one (a missing exchange makes the broker close the
channel, a missing queue returns every message): those messages stay in
the DLQ and the run stops with exit status 2. {CreateDestination} lets it
declare a missing queue (durable); a missing exchange is never created.`,
		Fix: "Create the queue or exchange, pass {CreateDestination} for a queue, or choose another destination with {To}.",
	}
	ruleReplayNonRetryable = findings.Rule{
		Code: "DLQ_REPLAY_NON_RETRYABLE", Severity: findings.Warn, Since: "v0.2.0",
		Title: "the replay sends back messages whose error is permanent",
		Doc: `Some of the messages the replay sends back (or a dry run would) failed with an error the
rules classify as non-retryable (invalid payload, entity missing, contract
violation). Unless the data or the code was fixed since, they fail the same
way again - and repeat whatever partial side effects the handler did.`,
		Fix: "Fix the cause first, or leave them out ({Reasons}, {Groups}, {Where}); 'dlq stats' shows the groups and their class.",
	}
	ruleGroupUnmatched = findings.Rule{
		Code: "DLQ_REPLAY_GROUP_UNMATCHED", Severity: findings.Warn, Since: "v0.2.0",
		Title: "a {Groups} id matched no message",
		Doc: `No message read belongs to this stats group: a mistyped id, a group from
another queue, or one already replayed. Everything else was filtered out,
so the replay did nothing for it.`,
		Fix: "Take the id from 'dupctl dlq stats --queue QUEUE' of this queue.",
	}
	ruleConnectionLost = findings.Rule{
		Code: "DLQ_REPLAY_CONNECTION_LOST", Severity: findings.Error, Since: "v0.2.0",
		Title: "a connection to RabbitMQ was lost during the replay",
		Doc: `The consumer or the publisher connection went away mid-run. Nothing is
lost: unconfirmed publishes are in doubt and left in the DLQ, and the
journal records every outcome. The run exits with status 3.`,
		Fix: "Run the same replay with {Resume} JOURNAL (add {RetryInDoubt} once the in-doubt messages are checked).",
	}
	ruleFailover = findings.Rule{
		Code: "DLQ_REPLAY_FAILOVER", Severity: findings.Warn, Since: "v0.3.0",
		Title: "a node of the cluster was lost during the replay and the run went on through another",
		Doc: `The connection to one node went away mid-run and {AMQPURL} named other
addresses: the run went on through the next node that answered for the DLQ,
under the rules of a resume of its own journal. Nothing was lost: what the
lost node had not confirmed, and confirmed publishes whose DLQ ack was not
seen applied, are held in doubt (DLQ_REPLAY_IN_DOUBT) rather than published
twice.`,
		Fix: "Check the lost node; check the destination for the in-doubt messages, then {Resume} JOURNAL {RetryInDoubt} if they are missing.",
	}
	ruleUnread = findings.Rule{
		Code: "DLQ_REPLAY_UNREAD", Severity: findings.Error, Since: "v0.3.0",
		Title: "after a failover, the DLQ still holds messages the replay did not read",
		Doc: `A node was lost during the replay and the run went on through another. At
its end the DLQ's depth showed more messages than the run left in it by
choice (in doubt, returned, filtered, over {Max}...), or fewer than it must
still hold - its count at the start less every ack the run sent: the node
that took over showed too few, or the lost node's consumers still hold some
(RabbitMQ 3.10 keeps the messages a killed node's reader had taken on a
consumer it had cancelled until the queue's leader changes again). Those
messages were neither replayed nor looked at. The run reads the DLQ again
(at most twice) while that shows more messages; what is still missing then
is this finding, and the run exits with status 3. When the DLQ did not show
the run's acks and requeues applied at the end, its depth cannot confirm
the run read everything, which is said the same way.`,
		Fix: "Run the same replay with {Resume} JOURNAL once the lost node is back (or the queue's leader moved): it reads " +
			"what is left.",
	}
)

// Rules are every rule of the dlq commands, for the catalog: those of the
// reading verbs (dlqread), then the replay's.
func Rules() []findings.Rule {
	return append(dlqread.Rules(),
		ruleInDoubt, ruleReturned, ruleNacked, ruleBounced, ruleParked, ruleNoDestination, ruleAckLost,
		ruleSkippedSucceeded, ruleNoKey, ruleFanout, ruleDestMissing, ruleReplayNonRetryable, ruleGroupUnmatched,
		ruleConnectionLost, ruleFailover, ruleUnread,
	)
}

// replayChecks are the rules `dlq replay` evaluates.
var replayChecks = append([]string{ruleInDoubt.Code, ruleReturned.Code, ruleNacked.Code, ruleBounced.Code, ruleParked.Code,
	ruleNoDestination.Code, ruleAckLost.Code, ruleSkippedSucceeded.Code, ruleNoKey.Code, ruleFanout.Code,
	ruleDestMissing.Code, ruleReplayNonRetryable.Code, ruleGroupUnmatched.Code, ruleConnectionLost.Code, ruleFailover.Code,
	ruleUnread.Code},
	dlqread.ReadChecks...)
