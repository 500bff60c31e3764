package sim

import "github.com/dupctl/dupctl/internal/platform/findings"

// The simulator's finding rules.
var (
	RuleDuplicate = findings.Rule{
		Code: "SIM_DUPLICATE", Severity: findings.Error, Since: "v0.1.0",
		Title: "a business key's side effect ran more than once",
		Doc: `The simulator found a schedule in which one business key's side effect
(the payment, the e-mail) ran twice under the explored profile. Queues
deliver at least once: a crash before the ack, a redelivery, a lock that
expired or a second message for the same entity all hand the job to a
second worker. Whatever reached the side effect twice had nothing that
recognised the first run.`,
		Fix: "Make the side effect idempotent at the source of truth: a stable idempotency key from the business key, " +
			"and the effect and its SUCCEEDED record in one transaction (or an atomic claim); " +
			"keep the business-key lock with token unlock as the concurrency limiter.",
	}
	RuleLoss = findings.Rule{
		Code: "SIM_LOSS", Severity: findings.Error, Since: "v0.1.0",
		Title: "a job was lost: its side effect never ran and it is not in the DLQ",
		Doc: `The simulator found a schedule in which a job disappeared: acked before
its work (ack on receipt) or claimed as PROCESSING by a worker that then
died, so every redelivery treats it as done. This is the price of
"fixes" that trade duplicates for loss.`,
		Fix: "Ack only after the status commit, and put the effect and its record in one transaction instead of a claim that outlives a crash " +
			"(or give claims an expiry and make the effect idempotent).",
	}
	RuleNonOwnerUnlock = findings.Rule{
		Code: "SIM_UNLOCK_NON_OWNER", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a lock was released by a worker that did not hold it",
		Doc: `A worker deleted a lock whose token was not its own: plain DEL by key on
the lock-busy path (a deferred unlock) or after its own lease expired.
The holder keeps working unprotected, and the next delivery walks in.`,
		Fix: "Release with one atomic compare-and-delete script: if GET(key) == token then DEL(key); " +
			"never DEL by key alone, and skip the unlock when the lock was not acquired.",
	}
	RuleLivelock = findings.Rule{
		Code: "SIM_LIVELOCK", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a schedule did not finish within the step limit",
		Doc: `A run kept going past the step limit: typically a message redelivered
forever because the job outlives the broker's consumer timeout, or a
retry loop with no attempt limit.`,
		Fix: "Bound retries (attempt counter, DLQ after N), set a queue delivery-limit, and keep jobs shorter than the consumer timeout.",
	}
	RuleMatrixMismatch = findings.Rule{
		Code: "SIM_MATRIX_MISMATCH", Severity: findings.Error, Since: "v0.1.0",
		Title: "a scenario x profile cell differs from its documented expectation",
		Doc: `Every cell of the simulation matrix has a documented expectation
(docs/simulate.md). A cell that differs means the simulator's model
changed, or a documented claim is wrong: either way the catalogue can no
longer be trusted until someone looks.`,
		Fix: "Read the cell's counterexample with 'dupctl simulate <scenario> --profile <profile>', " +
			"then fix the model or the documented expectation.",
	}
	RuleIncomplete = findings.Rule{
		Code: "SIM_SCOPE_INCOMPLETE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "exhaustive exploration stopped at its state limit",
		Doc: `Exhaustive exploration proves the absence of a duplicate only when it
finishes. It stopped at {MaxStates}, so "no duplicate found" is not a
proof for this scope.`,
		Fix: "Shrink the scope ({Workers}, {Jobs}), raise {MaxStates}, or split it with {Shard} across CI jobs.",
	}
	RuleLiveMismatch = findings.Rule{
		Code: "SIM_LIVE_MISMATCH", Severity: findings.Error, Since: "v0.1.0",
		Title: "the real servers and the simulator disagree on a scenario",
		Doc: `The same fault plan was played on the real Redis, PostgreSQL and
RabbitMQ ({Live}) and in the simulator, and one found a duplicate or a
loss where the other did not. The simulator's verdicts are only worth
something while they hold on the real systems.`,
		Fix: "Read both timelines (-v): either the model misses a behaviour of the real system (fix the model), " +
			"or the live run's timing is off (raise {TimeScale}).",
	}
	RuleRiskDuplicates = findings.Rule{
		Code: "SIM_RISK_DUPLICATES", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the measured durations and TTL produce duplicate side effects",
		Doc: `Feeding the job-duration distribution, lock TTL and delivery rates into
the simulator produced duplicate side effects under this profile, at the
rate shown per million jobs.`,
		Fix: "Set the lock TTL above the p99 job duration with a buffer (or renew the lock while working), and make the effect idempotent so " +
			"an expired lock cannot cause a duplicate.",
	}
	RuleRiskLoss = findings.Rule{
		Code: "SIM_RISK_LOSS", Severity: findings.Error, Since: "v0.2.0",
		Title: "the measured durations and delivery rates lose jobs under this profile",
		Doc: `Feeding the job-duration distribution, lock TTL and delivery rates into
the simulator lost jobs under this profile, at the rate shown per million
jobs: a crash left the job acknowledged (ack on receipt) or claimed as
PROCESSING where every later delivery reads the claim as done. A lost job is
an effect that never ran: worse than a duplicate, because nothing retries it.`,
		Fix: "Acknowledge only after the status commit, and let a PROCESSING claim left by a dead worker be reclaimed " +
			"(an expiry on the claim) instead of read as done.",
	}
	RuleRiskExpiry = findings.Rule{
		Code: "SIM_RISK_LOCK_EXPIRY", Severity: findings.Info, Since: "v0.1.0",
		Title: "jobs outlive their lock TTL",
		Doc: `A share of jobs runs longer than the lock TTL: each is a window in
which a second worker can take the lock.`,
		Fix: "Size the TTL from the real p99 job duration plus a buffer, or renew the lock only while the token is still yours.",
	}
)

// Rules lists the simulator's rules.
func Rules() []findings.Rule {
	return []findings.Rule{RuleDuplicate, RuleLoss, RuleNonOwnerUnlock, RuleLivelock, RuleMatrixMismatch, RuleIncomplete, RuleLiveMismatch,
		RuleRiskDuplicates, RuleRiskLoss, RuleRiskExpiry}
}
