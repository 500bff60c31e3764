// Package cause is dupctl's one model of why a side effect ran twice: the
// causes with their finding rules (DUP_EFFECT_*), the precedence in which
// they are tried, the evidence each one needs, and the words shared by the
// sources that name them.
//
// Besides the causes, two verdicts name none: UNDETERMINED when the lines
// fit two causes equally (audit logs only; worker chaos names one cause
// or none) and UNEXPLAINED when nothing fits.
//
// Two sources name causes from different evidence: `dupctl audit logs`
// from a fleet's log lines (internal/audit/logs), and `dupctl simulate
// <scenario> --worker` from what its proxies saw on the wire
// (internal/sim/chaos). Each registers one detector per cause with
// NewDetectors, which runs them in Precedence order; neither source
// orders its causes itself. The simulator (internal/sim) words its fixes
// per cause with each cause's Remedy.
package cause

import "github.com/dupctl/dupctl/internal/platform/findings"

// Cause is one reason a side effect ran twice: its finding rule and the
// evidence a source must see to name it.
type Cause struct {
	findings.Rule
	// Needs are the facts that name this cause, every one of them, in the
	// order the story happens.
	Needs []string
	// InLogs and OnWire say how audit logs and worker chaos see those
	// facts; where a source names the cause on less (or other) evidence,
	// they say so.
	InLogs, OnWire string
	// Remedy is the fix as a clause, for a sentence that joins the fixes
	// of several causes (the simulator's risk findings); empty where no
	// source words one.
	Remedy string
}

// The causes, each with its rule; the codes, titles, docs and fixes are
// stable (docs/checks.md).
var (
	UnstableKey = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_UNSTABLE_KEY", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran twice because the idempotency key changed between attempts",
			Doc: `The two side effects carry different idempotency keys for the same business
key, so the idempotency layer could not recognise the second as a
duplicate. Keys that embed an attempt counter, a timestamp, a random UUID
or a delivery id change on every retry ('dupctl keys unstable' says which
part varies).`,
			Fix: "Derive the idempotency key only from the business operation (payment:<orderId>), never from the attempt, time, " +
				"delivery or a random value; generate it once at the producer and carry it with the message.",
		},
		Needs: []string{
			"two runs ran the side effect for one business key",
			"their effects carry different idempotency keys",
		},
		InLogs: "two different runs whose idempotency keys differ (the key on each side-effect line, or else the first " +
			"one its run logged)",
		OnWire: "the effects query counts more than one distinct idempotency key for the business key, " +
			"or two deliveries that committed writes wrote different values derived from it",
		Remedy: "derive the idempotency key from the business key, never from the attempt or a fresh id",
	}
	StaleCache = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_STALE_CACHE", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran twice because 'already done?' was answered by a stale cache",
			Doc: `The second run asked a cache whether the operation was done and was told
no, after the first run had already committed SUCCEEDED to the database:
the cache lagged the source of truth. A read replica that has not replayed
the commit yet (an idempotency check routed to a streaming standby) is the
same cause: the replica is the cache, its replay lag the cache's lag.`,
			Fix: "Decide 'already done' from the database (the source of truth) or an atomic claim there; use the cache only to " +
				"skip work early, never to allow it.",
		},
		Needs: []string{
			"the first run committed its status to the database",
			"after that commit, the second run asked a cache whether the work was done and was told \"not done\"",
			"the second run ran the effect again",
		},
		InLogs: "a check line of the second run answered from the cache with a miss, after another run's commit line " +
			"(beyond the clock skew); with the effect logged before the check but no commit of it, the lines are " +
			"UNDETERMINED between STALE_CACHE and NON_ATOMIC_COMMIT",
		OnWire: "the Redis proxy held the status write back (the lag-cache fault) and saw a worker read the key's " +
			"status from the cache while the write was still on its way; or, the replica as the cache, dupctl paused a standby's " +
			"WAL replay before the key's write went to the primary (the lag-replica fault) and saw a worker read the key's " +
			"status through the replica proxy after that write committed, replay still paused",
		Remedy: "decide 'already done?' from the database, not from the cache",
	}
	UnlockNoToken = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_UNLOCK_NO_TOKEN", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran twice after a worker released a lock it did not hold",
			Doc: `A worker released the business-key lock while another run held it (it had
failed to acquire it, or its own lease had expired): the release deleted by
key without checking the token. The next worker acquired the lock while
the real holder was still running.`,
			Fix: "Release with one atomic compare-and-delete script (if GET(key) == token then DEL(key)); never DEL by key, and " +
				"skip the unlock when the lock was not acquired.",
		},
		Needs: []string{
			"a run held the business-key lock",
			"another worker, not holding it, released it by key without checking the token",
			"a next worker acquired the lock while the holder was still running",
		},
		InLogs: "between two acquisitions of one lock key (the first not released, its lease not simply expired), " +
			"a release line of a third run that did not hold the lock, or held it and named no token",
		OnWire: "the Redis proxy saw a plain DEL remove a lock another worker held, then a different worker took " +
			"the lock before the holder's delivery ended",
		Remedy: "release the lock with a token-checked script, never a plain DEL",
	}
	LockFailover = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_LOCK_FAILOVER", Severity: findings.Error, Since: "v0.2.0",
			Title: "side effect ran twice because the lock was lost in a Redis failover",
			Doc: `The first holder acquired the business-key lock on the Redis master, and the
master failed over before the write reached its replica: Redis replicates
asynchronously, so the promoted replica never had the lock, and it granted
the same lock key to a second worker while the first still held its
message and worked. Nothing in either worker was wrong: a lock in one
replicated Redis (or in Redlock's majority, across a process pause or a
clock jump) limits concurrency but cannot guarantee that only one holder
runs the effect.`,
			Fix: "Make the effect safe without the lock: claim the idempotency key in the database (INSERT PROCESSING under a " +
				"unique constraint, SUCCEEDED in the same transaction as the effect) or check a fencing token (a number that grows " +
				"with every grant) where the effect is written; keep the lock only to limit concurrency. WAIT on the lock write " +
				"narrows the window; Redlock alone does not close it.",
		},
		Needs: []string{
			"the first holder acquired the business-key lock on the Redis master",
			"the master failed over before the lock replicated, so the promoted master did not have it",
			"a second worker acquired the same lock key from the new master while the first still held its message",
		},
		InLogs: "not named from logs: worker lines show two holders of one lock key inside the first's TTL with no release " +
			"between them, which an unlogged DEL, an eviction or a flush fits as well as a failover; without the Redis " +
			"side's failover on the same time line audit logs does not name it (UNEXPLAINED, or another cause's evidence)",
		OnWire: "dupctl's failover fault took the lock away right after a worker acquired it (the key gone, as on a promoted " +
			"replica that never received it, and the workers' Redis connections dropped), then a different worker acquired " +
			"the same lock key while the first one's delivery was still open",
		Remedy: "claim the idempotency key in the database or fence the effect with a token; a Redis lock alone does not " +
			"survive a failover",
	}
	LockExpiry = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_LOCK_EXPIRY", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran twice because a lock expired while its holder was still working",
			Doc: `The first holder acquired the business-key lock with a TTL and was still
working (it logged steps after the TTL ran out) when a second worker
acquired the same lock key with a different token. Between the two, the
idempotency check of the second worker found nothing committed yet.`,
			Fix: "Size the lock TTL from the real p99 job duration plus a buffer (dupctl inspect ttl), renew the lock while " +
				"holding the same token for long jobs, and claim the idempotency key atomically (insert PROCESSING with a unique " +
				"constraint) so a second holder cannot pass.",
		},
		Needs: []string{
			"the first holder acquired the business-key lock with a TTL",
			"the TTL ran out while it was still working",
			"a second worker acquired the same lock key",
		},
		InLogs: "two acquisitions of one lock key at least the TTL apart (less the clock skew), no release by the first " +
			"holder before the second, and a side effect, commit, release or ack of the first holder after its TTL",
		OnWire: "two leases of one lock key by different workers, the second taken at or after the first expired, " +
			"the first not released before it and its delivery still open",
		Remedy: "size the lock TTL above the p99 job duration plus a buffer, or renew it while the token is still yours",
	}
	LockKeyJobID = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_LOCK_KEY_JOB_ID", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran twice under two different lock keys for one business key",
			Doc: `Both runs held a lock, but not the same one: the lock key is built from
something per message (the job id, the message id) instead of the business
key, so two messages for the same order never exclude each other.`,
			Fix: "Build the lock key from the business key (lock:payment:order:<orderId>), never from the job or message id, and " +
				"keep the idempotency claim as the last fence.",
		},
		Needs: []string{
			"both runs held a lock",
			"under different lock keys for one business key",
			"at the same time",
		},
		InLogs: "two runs acquired different lock keys and the first did not release its lock before the second acquired",
		OnWire: "two leases of different lock keys for one business key, held by different workers at once",
		Remedy: "build the lock key from the business key, not the job id",
	}
	NonAtomicCommit = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_NON_ATOMIC_COMMIT", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran twice because its status was not committed with it",
			Doc: `The first run performed the side effect and ended (crash, kill, error)
before it stored the final status, so the next run's idempotency check
found nothing and performed the effect again. The effect and its record
were not one atomic step.`,
			Fix: "Claim the key as PROCESSING before the effect and store SUCCEEDED in the same transaction as the effect's local " +
				"result (or use the provider's idempotency key for external calls); a redelivery must find the claim.",
		},
		Needs: []string{
			"the first run's effect was written",
			"its status was not committed with it (the run ended first, or committed only later)",
			"the second run's check found no record because the status was not yet committed",
		},
		InLogs: "the first run has no ack and no status commit before the second side effect; the second run logged a " +
			"check or claim, and no check of it found the record",
		OnWire: "the fault dupctl injected (a kill, or the commit's reply lost with the connection) came right after " +
			"the business key's first write committed, and another delivery that read the key before writing " +
			"committed a write too: the wire knows the status was cut off because it cut it",
		Remedy: "replace check-then-act with one atomic step: the effect and its SUCCEEDED record in one transaction, " +
			"or an INSERT claim under a unique constraint",
	}
	Redelivery = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_REDELIVERY", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran again on a broker redelivery after a crash before the ack",
			Doc: `The first delivery ran the side effect, committed its status, and then
ended without an ack (the worker crashed or lost its connection), so the
broker delivered the same message again - which at-least-once delivery is
allowed to do. The redelivery ran the effect again: no idempotency check
line is recognised on it before its effect, though a check would have
found the committed status. (Without the commit logged either, the lines
also fit a non-atomic commit: that is DUP_EFFECT_UNDETERMINED.)`,
			Fix: "Absorb redeliveries in the application: before the side effect, check and claim a stable idempotency key " +
				"(payment:<orderId>) in the database with a unique constraint, and ack only after the status commit.",
		},
		Needs: []string{
			"the first delivery ran the effect and committed its status",
			"it ended without an ack",
			"the same message was delivered again",
			"the second run did not consult the idempotency record",
		},
		InLogs: "one message (or job) id on both runs, no ack of the first before the second began, and no check or " +
			"claim line of the second run at all; without the first run's commit logged, the lines are " +
			"UNDETERMINED between REDELIVERY and NON_ATOMIC_COMMIT",
		OnWire: "a delivery that ended without an ack (its connection closed, or the fault hit it before an ack), then " +
			"a redelivered copy that committed a write; the wire names REDELIVERY whether or not that copy read the " +
			"key first (its explanation says which), and does not look for the first run's commit",
		Remedy: "make the effect idempotent at the source of truth: a stable key from the business key, " +
			"and the effect with its SUCCEEDED record in one transaction (or an atomic claim)",
	}
	Race = Cause{
		Rule: findings.Rule{
			Code: "DUP_EFFECT_RACE_NO_LOCK", Severity: findings.Error, Since: "v0.1.0",
			Title: "side effect ran twice for two messages of one business key with no lock",
			Doc: `Two different messages for the same business key were processed and
neither run took a lock on the business key; both passed a check-then-act
idempotency test (or none) before either committed.`,
			Fix: "Take a business-key lock (SET lock:<key> <token> NX PX <ttl>) to limit concurrency, and make the idempotency " +
				"claim atomic (unique constraint) so a race cannot pass both.",
		},
		Needs: []string{
			"two different messages for one business key",
			"processed at the same time",
			"neither run took a lock on the business key",
		},
		InLogs: "different message (or job) ids, no lock key on either run, and the runs overlap (the first did not " +
			"end before the second began)",
		OnWire: "two deliveries of the business key overlapping in time and no lease on it at all; the wire does not " +
			"ask whether they carried two different messages",
	}
)

// The verdicts that name no single cause.
var (
	RuleUndetermined = findings.Rule{
		Code: "DUP_EFFECT_UNDETERMINED", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran more than once; the logs fit two causes and show no line that tells them apart",
		Doc: `The side effect ran more than once and the logged lines fit two causes
equally: a redelivery whose run logged no idempotency check may have run
without one (DUP_EFFECT_REDELIVERY) or with one that found the status not
yet committed (DUP_EFFECT_NON_ATOMIC_COMMIT); a cache that answered "not
done" after the first effect may have lagged a commit that was not logged
(DUP_EFFECT_STALE_CACHE) or there was no commit (NON_ATOMIC_COMMIT). The
finding names both candidates and the log line that would decide, instead
of guessing.`,
		Fix: "Log the steps that decide (the idempotency check with its answer and source, the status commit) on every run; " +
			"meanwhile fix both candidates: claim a stable idempotency key atomically before the effect and commit the status " +
			"with it.",
	}
	RuleUnexplained = findings.Rule{
		Code: "DUP_EFFECT_UNEXPLAINED", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran more than once; the logs do not show why",
		Doc: `The side effect ran more than once for this key, but the logged evidence
matches none of the known causes well enough to name one: dupctl does not
guess. The evidence lines are the side effects and what the logs show
around them.`,
		Fix: "Log the fields every worker should log on every step (jobId, business key, idempotencyKey, lockKey, lockToken, " +
			"attempt, consumerInstanceId, redelivered) and the lock, check, claim, commit and ack steps, then audit again; " +
			"meanwhile make the effect idempotent with a stable key and an atomic claim.",
	}
)

// precedence is the order in which the causes are tried: the first whose
// evidence holds is the cause. It follows the research's order (key,
// cache, commit, lock, redelivery) with the lock refined into the foreign
// unlock, the failover, the expiry and the per-message lock key, tried
// before the commit. A lock lost in a failover comes before the expiry: a
// second holder inside the first one's TTL is not an expiry at all.
var precedence = []*Cause{&UnstableKey, &StaleCache, &UnlockNoToken, &LockFailover, &LockExpiry, &LockKeyJobID,
	&NonAtomicCommit, &Redelivery, &Race}

// Precedence lists the causes in the order they are tried.
func Precedence() []Cause {
	out := make([]Cause, len(precedence))
	for i, c := range precedence {
		out[i] = *c
	}
	return out
}

// Codes lists the causes' codes in precedence order.
func Codes() []string {
	out := make([]string, len(precedence))
	for i, c := range precedence {
		out[i] = c.Code
	}
	return out
}

// Rules lists every rule a duplicate is reported under: the causes in
// precedence order, then the undetermined and the unexplained verdicts.
func Rules() []findings.Rule {
	out := make([]findings.Rule, 0, len(precedence)+2)
	for _, c := range precedence {
		out = append(out, c.Rule)
	}
	return append(out, RuleUndetermined, RuleUnexplained)
}
