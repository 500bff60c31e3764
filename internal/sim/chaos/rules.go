package chaos

import (
	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// The worker run's own rules. A duplicate is reported under its cause's
// code from the cause model (DUP_EFFECT_REDELIVERY, DUP_EFFECT_LOCK_EXPIRY,
// ...), the same words an audit of the production logs uses.
var (
	RuleLoss = findings.Rule{
		Code: "CHAOS_LOSS", Severity: findings.Error, Since: "v0.1.0",
		Title: "your worker lost a message under a fault: no side effect, nothing left to redeliver",
		Doc: `A business key's message reached your worker, which acked it (or consumed
it with no-ack) before its side effect was durable, and then died: the
broker forgot the message and the effect never ran. Acking first trades
duplicates for loss.`,
		Fix: "Ack only after the side effect and its status are committed; make the effect idempotent " +
			"(a stable key and an atomic claim) so the redeliveries this allows are absorbed.",
	}
	RuleForeignUnlock = findings.Rule{
		Code: "CHAOS_UNLOCK_NON_OWNER", Severity: findings.Warn, Since: "v0.1.0",
		Title: "your worker deleted a lock another worker held",
		Doc: `dupctl's Redis proxy saw one worker's plain DEL remove a lock key that
another worker had acquired (SET NX) and not released: the unlock does
not check the token (or runs on the path where the lock was never
taken). This run may not have turned it into a duplicate; another
schedule can.`,
		Fix: "Release with one compare-and-delete script (if GET(key) == token then DEL(key)), and only when the lock was acquired.",
	}
	RuleNotReached = findings.Rule{
		Code: "CHAOS_FAULT_NOT_REACHED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the fault's point, or what its scenario is about, never came: this run proves nothing about it",
		Doc: `Either the seed chose a fault point (after the lock, before the first
write, ...) that dupctl never saw your worker pass for the chosen
message, and the run ended without the fault: the worker takes no lock
through the Redis proxy, writes with no business key in its parameters,
or talks to a server directly instead of through the proxy addresses.
Or the fault came and what the scenario is about did not follow: no
other worker took the lock during a lock-expiry pause (the second
message went back to the paused worker), the message never came back
after a kill or a dropped connection, no second message was handled
while the status cache lagged, the two messages of a race were handled
one after the other, no other worker was granted the lock a failover
lost while its first holder still worked, no read of the key reached the
replica while its replay was paused after the write committed (the
worker reads its status on the primary, or not through {replica}).
Such a run is tried again,
with the next business key as its victim and fresh workers, up to three
attempts; the finding lists what each attempt lacked.`,
		Fix: "Point every connection of the worker at dupctl's proxies ({Env} with {amqp}, {redis}, {postgres}, and {replica} " +
			"for its reads from a replica), " +
			"pass the business key as a query parameter, or choose the points that exist with {At}; for a condition that did " +
			"not follow, run more seeds ({Runs}), and look at what holds messages back (a prefetch above 1 lets a paused " +
			"worker take the second message).",
	}
	RuleLockLost = findings.Rule{
		Code: "CHAOS_LOCK_LOST_UNNOTICED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "your worker went on as the lock's holder after it lost the lock",
		Doc: `dupctl cut the worker off from Redis right after it took the business-key
lock (the redelivery scenario at after-lock: its connections dropped, new
ones refused for the lock's TTL plus a margin), so it could neither renew
nor release the lock. The lock expired, another worker took it, and the
first worker still wrote or committed the key as if it held it: it did
not notice that its renewals failed. This run may not have turned it
into a duplicate (an idempotency claim can still stop the second effect);
a slower job or another schedule can.`,
		Fix: "Treat a failed renewal (an error, or the token no longer yours) as the lock lost: stop the job before its " +
			"effect and requeue the message; fence the effect with the lock's token or an atomic idempotency claim.",
	}
	RuleUncounted = findings.Rule{
		Code: "CHAOS_EFFECT_UNCOUNTED", Severity: findings.Error, Since: "v0.1.0",
		Title: "not decided: effects counted in the log, and the fault came between a committed write and the line that would log it",
		Doc: `With the effects counted in the workers' log lines ({EffectsLog}), the
after-write fault - a SIGKILL, or a commit reply lost with the
connection - comes right after the worker's write for the key committed
and before the worker can log the effect. Whether the effect ran then
cannot be read from the log: the key's count may be one short, so a
duplicate can hide behind a count of 1 and a durable effect looks like
none. The key is "not decided", never ok: an error, so a CI run fails
until a query decides it.`,
		Fix: "Count the effects with a query on what the worker writes ({EffectsSQL}) for the after-write point, " +
			"or run the other points only ({At}).",
	}
	RuleUnsettled = findings.Rule{
		Code: "CHAOS_UNSETTLED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the run did not settle in time: effects were counted while work remained",
		Doc: `The run's time limit passed while a message was still unacked, a worker
was still paused or starting, or messages were still in the queue. The
effects counted may not be final, so a key with no effect is reported
as unsettled, not as lost.`,
		Fix: "Raise the run's time limit, or look at the worker's output ({WorkerLog}) for why it stopped consuming.",
	}
)

// Rules lists the worker run's own rules.
func Rules() []findings.Rule {
	return []findings.Rule{RuleLoss, RuleForeignUnlock, RuleNotReached, RuleUnsettled, RuleUncounted, RuleLockLost}
}

// causeRules are the rules a duplicate is reported under, from the cause
// model, in the order the report has always declared them as checks (the
// JSON and JUnit outputs list them so); the order they are tried in is
// the cause model's precedence. Worker chaos names one cause or none, so
// DUP_EFFECT_UNDETERMINED is not among them.
func causeRules() []findings.Rule {
	return []findings.Rule{cause.Redelivery.Rule, cause.LockExpiry.Rule, cause.UnlockNoToken.Rule, cause.StaleCache.Rule,
		cause.UnstableKey.Rule, cause.NonAtomicCommit.Rule, cause.LockKeyJobID.Rule, cause.Race.Rule, cause.LockFailover.Rule,
		cause.RuleUnexplained}
}
