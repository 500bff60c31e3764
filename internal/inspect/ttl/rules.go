package ttl

import "github.com/dupctl/dupctl/internal/platform/findings"

const fixTTL = "Set the lock TTL from the real job durations: p99 (of queue wait plus run when the lock is taken at enqueue) " +
	"times a buffer, as the recommended TTL says; renew the lock while working, only while the token is still yours, when durations vary; " +
	"and keep idempotency (a unique idempotency key, effect and SUCCEEDED in one transaction) as the last fence, " +
	"because a lock can always be lost."

// The TTL checks' rules.
var (
	RuleBelowP99 = findings.Rule{
		Code: "TTL_BELOW_P99", Severity: findings.Error, Since: "v0.1.0",
		Title: "the lock TTL is shorter than the p99 job duration",
		Doc: `More than one run in a hundred outlives its lock. When the TTL runs out
while the job still works, Redis deletes the lock, and the next delivery
of the same business key (a retry, a redelivery, a second message for the
same order) acquires a new lock and runs the job a second time alongside
the first: lock expiry. The token-checked unlock of
the first worker then finds someone else's token and does nothing, so the
overlap goes unnoticed unless idempotency catches it.`,
		Fix: fixTTL,
	}
	RuleRunsOutlived = findings.Rule{
		Code: "TTL_RUNS_OUTLIVED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "some runs lasted longer than their lock TTL",
		Doc: `The TTL covers p99, but these runs still outlived their lock. Each one
was a window in which a second worker could take the lock and run the same
job: a duplicate if anything delivered the job again during it. Rare long
runs are what renewal exists for.`,
		Fix: fixTTL,
	}
	RuleLowMargin = findings.Rule{
		Code: "TTL_LOW_MARGIN", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the lock TTL leaves less margin over the chosen quantile than the buffer",
		Doc: `No run outlived the TTL in this sample, but the TTL is below the chosen
quantile times the buffer (p99 x 1.5 by default). A slower dependency, a
GC pause or a bigger batch moves the tail past it and turns into lock
expiries, then duplicates.`,
		Fix: fixTTL,
	}
	RuleHeavyTail = findings.Rule{
		Code: "TTL_HEAVY_TAIL", Severity: findings.Warn, Since: "v0.1.0",
		Title: "job durations have a heavy tail: renew the lock instead of raising the TTL",
		Doc: `The longest run is far above p99. A TTL long enough for the tail keeps a
crashed worker's lock for that long; one sized to p99 lets the tail outlive
it. Neither fixed TTL is right: renew the lock while the job runs (every
TTL/3, only while GET(key) == your token), so the TTL can stay short for
crash recovery and still cover the longest run.`,
		Fix: "Keep the TTL near the recommended value and renew it while working, only while the token is still yours " +
			"(compare-and-PEXPIRE script), stopping when the job ends; cap the number of renewals so a stuck job cannot hold the lock forever.",
	}
	RuleFarAboveP99 = findings.Rule{
		Code: "TTL_FAR_ABOVE_P99", Severity: findings.Info, Since: "v0.1.0",
		Title: "the lock TTL is far above the p99 job duration: slow recovery after a crash",
		Doc: `A worker that dies holding the lock keeps the business key blocked for
the whole TTL: every retry finds the lock busy until it expires. A TTL many
times the p99 duration buys nothing against duplicates and delays recovery.`,
		Fix: "Lower the TTL toward the recommended value (p99 x buffer) and renew it for the rare long run.",
	}
	RuleFewSamples = findings.Rule{
		Code: "TTL_FEW_SAMPLES", Severity: findings.Info, Since: "v0.1.0",
		Title: "too few runs of a job type to judge its TTL",
		Doc: `A p99 needs well over a hundred runs to mean anything. With fewer, dupctl
shows the numbers but gives no verdict (runs that outlived their TTL are
still reported: those are facts, not estimates).`,
		Fix: "Collect more runs (a longer time window, more log files), or lower {MinSamples} knowingly.",
	}
	RuleNotSet = findings.Rule{
		Code: "TTL_NOT_SET", Severity: findings.Info, Since: "v0.1.0",
		Title: "no lock TTL known for a job type",
		Doc: `The input carries durations for this job type but no TTL: nothing to
compare against. The recommended TTL is still computed.`,
		Fix: "Give the TTL with {TTLs} type=2m or {TTLFile}, or log lockTtl with each lock acquisition.",
	}
	RuleInputSkipped = findings.Rule{
		Code: "TTL_INPUT_SKIPPED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "input rows were skipped",
		Doc: `Some rows could not be read (no duration, a malformed number, a run with
no end, no queue wait under {IncludeWait}). The statistics exclude them:
if they are the slow runs, the quantiles are too low.`,
		Fix: "Read the examples in the evidence and fix the export, the {Unit}, or the column names.",
	}
)

// Rules are the TTL checks, for the catalog.
func Rules() []findings.Rule {
	return []findings.Rule{RuleBelowP99, RuleRunsOutlived, RuleLowMargin, RuleHeavyTail, RuleFarAboveP99,
		RuleFewSamples, RuleNotSet, RuleInputSkipped}
}

// codes are every rule a run evaluates.
func codes() []string {
	var out []string
	for _, r := range Rules() {
		out = append(out, r.Code)
	}
	return out
}
