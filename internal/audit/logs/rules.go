package logs

import (
	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// RuleMalformed is the input check every log command shares
// (internal/logs), named here for the doctor's checklist.
var RuleMalformed = logread.RuleMalformed

// The audit's finding rules: one per cause of a duplicated side effect,
// "unexplained" when the evidence does not decide, and the input checks.
var (
	RuleRedelivery = findings.Rule{
		Code: "DUP_EFFECT_REDELIVERY", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran again on a broker redelivery after a crash before the ack",
		Doc: `The first delivery ran the side effect, committed its status, and then
ended without an ack (the worker crashed or lost its connection), so the
broker delivered the same message again - which at-least-once delivery is
allowed to do. The redelivery ran the effect again: no idempotency check
line is recognised on it before its effect, though a check would have
found the committed status. (Without the commit logged either, the lines
also fit a non-atomic commit: that is DUP_EFFECT_UNDETERMINED.)`,
		Fix: "Absorb redeliveries in the application: before the side effect, check and claim a stable idempotency key (payment:<orderId>) in the database with a unique constraint, and ack only after the status commit.",
	}
	RuleLockExpiry = findings.Rule{
		Code: "DUP_EFFECT_LOCK_EXPIRY", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran twice because a lock expired while its holder was still working",
		Doc: `The first holder acquired the business-key lock with a TTL and was still
working (it logged steps after the TTL ran out) when a second worker
acquired the same lock key with a different token. Between the two, the
idempotency check of the second worker found nothing committed yet.`,
		Fix: "Size the lock TTL from the real p99 job duration plus a buffer (dupctl inspect ttl), renew the lock while holding the same token for long jobs, and claim the idempotency key atomically (insert PROCESSING with a unique constraint) so a second holder cannot pass.",
	}
	RuleLockKeyJobID = findings.Rule{
		Code: "DUP_EFFECT_LOCK_KEY_JOB_ID", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran twice under two different lock keys for one business key",
		Doc: `Both runs held a lock, but not the same one: the lock key is built from
something per message (the job id, the message id) instead of the business
key, so two messages for the same order never exclude each other.`,
		Fix: "Build the lock key from the business key (lock:payment:order:<orderId>), never from the job or message id, and keep the idempotency claim as the last fence.",
	}
	RuleUnlockNoToken = findings.Rule{
		Code: "DUP_EFFECT_UNLOCK_NO_TOKEN", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran twice after a worker released a lock it did not hold",
		Doc: `A worker released the business-key lock while another run held it (it had
failed to acquire it, or its own lease had expired): the release deleted by
key without checking the token. The next worker acquired the lock while
the real holder was still running.`,
		Fix: "Release with one atomic compare-and-delete script (if GET(key) == token then DEL(key)); never DEL by key, and skip the unlock when the lock was not acquired.",
	}
	RuleUnstableKey = findings.Rule{
		Code: "DUP_EFFECT_UNSTABLE_KEY", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran twice because the idempotency key changed between attempts",
		Doc: `The two side effects carry different idempotency keys for the same business
key, so the idempotency layer could not recognise the second as a
duplicate. Keys that embed an attempt counter, a timestamp, a random UUID
or a delivery id change on every retry ('dupctl keys unstable' says which
part varies).`,
		Fix: "Derive the idempotency key only from the business operation (payment:<orderId>), never from the attempt, time, delivery or a random value; generate it once at the producer and carry it with the message.",
	}
	RuleNonAtomic = findings.Rule{
		Code: "DUP_EFFECT_NON_ATOMIC_COMMIT", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran twice because its status was not committed with it",
		Doc: `The first run performed the side effect and ended (crash, kill, error)
before it stored the final status, so the next run's idempotency check
found nothing and performed the effect again. The effect and its record
were not one atomic step.`,
		Fix: "Claim the key as PROCESSING before the effect and store SUCCEEDED in the same transaction as the effect's local result (or use the provider's idempotency key for external calls); a redelivery must find the claim.",
	}
	RuleStaleCache = findings.Rule{
		Code: "DUP_EFFECT_STALE_CACHE", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran twice because 'already done?' was answered by a stale cache",
		Doc: `The second run asked a cache whether the operation was done and was told
no, after the first run had already committed SUCCEEDED to the database:
the cache lagged the source of truth.`,
		Fix: "Decide 'already done' from the database (the source of truth) or an atomic claim there; use the cache only to skip work early, never to allow it.",
	}
	RuleRace = findings.Rule{
		Code: "DUP_EFFECT_RACE_NO_LOCK", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran twice for two messages of one business key with no lock",
		Doc: `Two different messages for the same business key were processed and
neither run took a lock on the business key; both passed a check-then-act
idempotency test (or none) before either committed.`,
		Fix: "Take a business-key lock (SET lock:<key> <token> NX PX <ttl>) to limit concurrency, and make the idempotency claim atomic (unique constraint) so a race cannot pass both.",
	}
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
		Fix: "Log the steps that decide (the idempotency check with its answer and source, the status commit) on every run; meanwhile fix both candidates: claim a stable idempotency key atomically before the effect and commit the status with it.",
	}
	RuleUnexplained = findings.Rule{
		Code: "DUP_EFFECT_UNEXPLAINED", Severity: findings.Error, Since: "v0.1.0",
		Title: "side effect ran more than once; the logs do not show why",
		Doc: `The side effect ran more than once for this key, but the logged evidence
matches none of the known causes well enough to name one: dupctl does not
guess. The evidence lines are the side effects and what the logs show
around them.`,
		Fix: "Log the fields every worker should log on every step (jobId, business key, idempotencyKey, lockKey, lockToken, attempt, consumerInstanceId, redelivered) and the lock, check, claim, commit and ack steps, then audit again; meanwhile make the effect idempotent with a stable key and an atomic claim.",
	}
	RuleNoEffects = findings.Rule{
		Code: "LOG_NO_SIDE_EFFECTS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "no side-effect events were recognised",
		Doc: `No line was recognised as a side effect, so no duplicate can be found: the
event names or message texts differ from the built-in rules, or the event
field has another name.`,
		Fix: "Say which lines are side effects: --event side_effect='PHRASE' (words matched in the event name and the message, * for up to four other words; not a regular expression), or map the event field with --field event=PATH.",
	}
	RuleNoBusinessKey = findings.Rule{
		Code: "LOG_NO_BUSINESS_KEY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "side-effect lines carry no business key or idempotency key",
		Doc: `Side effects were found but some carry neither a business key nor an
idempotency key, so they are grouped by job or message id only: a
duplicate across two messages of the same order cannot be seen.`,
		Fix: "Log the business key (orderId) on every line (MDC / logger.With), or map it with --field businessKey=PATH.",
	}
)

// causeRules in precedence order: the first whose evidence holds is the
// cause; the research's order (key, cache, commit, lock, redelivery),
// with the lock rules refined into expiry, foreign unlock and job-id keys.
var causeRules = []findings.Rule{RuleUnstableKey, RuleStaleCache, RuleUnlockNoToken, RuleLockExpiry, RuleLockKeyJobID, RuleNonAtomic, RuleRedelivery, RuleRace}

// Rules lists the audit's rules.
func Rules() []findings.Rule {
	return append(append([]findings.Rule(nil), causeRules...), RuleUndetermined, RuleUnexplained, RuleNoEffects, RuleNoBusinessKey)
}
