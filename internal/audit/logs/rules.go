package logs

import (
	"github.com/dupctl/dupctl/internal/cause"
	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// RuleMalformed is the input check every log command shares
// (internal/logs), named here for the doctor's checklist.
var RuleMalformed = logread.RuleMalformed

// The rules a duplicate is reported under: one per cause of a duplicated
// side effect, "undetermined" when the lines fit two causes and
// "unexplained" when the evidence fits none. They live in the cause model
// (internal/cause), shared with worker chaos; these names keep audit logs'
// vocabulary for its callers.
var (
	RuleUnstableKey   = cause.UnstableKey.Rule
	RuleStaleCache    = cause.StaleCache.Rule
	RuleUnlockNoToken = cause.UnlockNoToken.Rule
	RuleLockExpiry    = cause.LockExpiry.Rule
	RuleLockKeyJobID  = cause.LockKeyJobID.Rule
	RuleNonAtomic     = cause.NonAtomicCommit.Rule
	RuleRedelivery    = cause.Redelivery.Rule
	RuleRace          = cause.Race.Rule
	RuleUndetermined  = cause.RuleUndetermined
	RuleUnexplained   = cause.RuleUnexplained
)

// The audit's input checks.
var (
	RuleNoEffects = findings.Rule{
		Code: "LOG_NO_SIDE_EFFECTS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "no side-effect events were recognised",
		Doc: `No line was recognised as a side effect, so no duplicate can be found: the
event names or message texts differ from the built-in rules, or the event
field has another name.`,
		Fix: "Say which lines are side effects: {Events} side_effect='PHRASE' (words matched in the event name and the message, " +
			"* for up to four other words; not a regular expression), or map the event field with {Fields} event=PATH.",
	}
	RuleNoBusinessKey = findings.Rule{
		Code: "LOG_NO_BUSINESS_KEY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "side-effect lines carry no business key or idempotency key",
		Doc: `Side effects were found but some carry neither a business key nor an
idempotency key, so they are grouped by job or message id only: a
duplicate across two messages of the same order cannot be seen.`,
		Fix: "Log the business key (orderId) on every line (MDC / logger.With), or map it with {Fields} businessKey=PATH.",
	}
)

// Rules lists the audit's rules: the duplicate rules in the cause model's
// precedence, then the input checks.
func Rules() []findings.Rule {
	return append(cause.Rules(), RuleNoEffects, RuleNoBusinessKey)
}
