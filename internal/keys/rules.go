package keys

import "github.com/dupctl/dupctl/internal/platform/findings"

const unstableDoc = `Retries of one business operation (same job or message id, attempt > 1
or redelivered) used different idempotency keys, so the idempotency layer
sees each retry as a new operation and runs the side effect again. `

const stableFix = "Derive the key from the business operation only (payment:<orderId>), generate it once at the producer and carry it " +
	"in the message; never include the attempt, time, a random value, the delivery or the instance."

func unstableRule(code, title, doc string) findings.Rule {
	return findings.Rule{Code: code, Severity: findings.Warn, Since: "v0.1.0", Title: title, Doc: unstableDoc + doc, Fix: stableFix}
}

// The key rules.
var (
	RuleAttempt = unstableRule("KEY_UNSTABLE_ATTEMPT", "the idempotency key contains the attempt number",
		"The varying part equals the attempt counter: every retry gets its own key by construction.")
	RuleUUID = unstableRule("KEY_UNSTABLE_UUID", "the idempotency key contains a random UUID made per attempt",
		"The varying part is a random UUID v4: the key is generated when the job runs (or by an SDK per call) instead of once per operation.")
	RuleTimeID = unstableRule("KEY_UNSTABLE_TIME_ID", "the idempotency key contains a time-based id made per attempt",
		"The varying part is a UUID v1/v6/v7, ULID or ObjectId whose embedded time is the attempt's own time: it is minted on every attempt.")
	RuleTimestamp = unstableRule("KEY_UNSTABLE_TIMESTAMP", "the idempotency key contains the attempt's timestamp",
		"The varying part is a unix or formatted timestamp near the attempt's own time.")
	RuleDelivery = unstableRule("KEY_UNSTABLE_DELIVERY", "the idempotency key contains a per-delivery id",
		"The varying part equals the delivery tag or the message id of each delivery: the key is bound to the delivery, "+
			"not to the business operation (a redelivered or republished message gets a new one).")
	RuleInstance = unstableRule("KEY_UNSTABLE_INSTANCE", "the idempotency key contains the consumer instance",
		"The varying part equals the worker that ran the attempt: a retry on another instance gets another key.")
	RuleHash = unstableRule("KEY_UNSTABLE_HASH", "the idempotency key is a digest of something that changes",
		"The varying part is a digest: the hashed input includes a volatile field (timestamp, request id, trace id, a header).")
	RuleRandom = unstableRule("KEY_UNSTABLE_RANDOM", "the idempotency key contains a random token made per attempt",
		"The varying part is a high-entropy token (a nonce or an ephemeral credential).")
	RuleOther = unstableRule("KEY_UNSTABLE_OTHER", "the idempotency key changes between attempts",
		"The varying part matches no known kind; the evidence shows its values.")

	RuleUnconfirmed = findings.Rule{Code: "KEY_VARIES_UNCONFIRMED", Severity: findings.Info, Since: "v0.1.0",
		Title: "one business key used several idempotency keys, not proven to be retries",
		Doc: `Several keys were used for one business key, but nothing shows the uses are
retries of the same operation (different jobs and messages, no attempt > 1):
they may be separate operations (a new payment attempt after a decline
rightly gets a new key).`,
		Fix: "Log jobId, messageId and attempt with the key so retries can be told apart from new operations; if they are retries, " +
			"derive the key from the business operation only."}
	RuleReused = findings.Rule{Code: "KEY_REUSED", Severity: findings.Error, Since: "v0.1.0",
		Title: "one idempotency key was used for different business keys or payloads",
		Doc: `The same idempotency key appears with different business keys or payload
hashes: the second operation is silently answered with the first one's
result (or rejected) - a key leaking across operations.`,
		Fix: "Include the operation and the business key in the key (payment:<orderId>), and check that a reused key comes with the same " +
			"payload (store a payload hash with the key)."}
	RuleMissing = findings.Rule{Code: "KEY_MISSING", Severity: findings.Warn, Since: "v0.1.0",
		Title: "side effects run without an idempotency key",
		Doc: `Side effects were logged without an idempotency key: nothing can recognise
a retry of them (or the key is not logged, which hides the evidence).`,
		Fix: "Give every message an idempotency key derived from the business operation and check it before the side " +
			"effect; log it on every line."}
	RuleCase = findings.Rule{Code: "KEY_CASE_VARIANT", Severity: findings.Warn, Since: "v0.1.0",
		Title: "idempotency keys differ only by letter case or blanks",
		Doc: `The same key appears in spellings that differ only by case or surrounding
blanks: a case-sensitive unique constraint treats them as different keys.`,
		Fix: "Normalise keys where they are made (lower case, trimmed), or enforce uniqueness on lower(btrim(key))."}
)

var classRule = map[Class]findings.Rule{
	ClassAttempt: RuleAttempt, ClassUUID4: RuleUUID, ClassTimeID: RuleTimeID, ClassUnixTime: RuleTimestamp,
	ClassTimestamp: RuleTimestamp, ClassDelivery: RuleDelivery, ClassInstance: RuleInstance, ClassHash: RuleHash,
	ClassRandom: RuleRandom, ClassOther: RuleOther,
}

// Rules lists the key rules.
func Rules() []findings.Rule {
	return []findings.Rule{RuleAttempt, RuleUUID, RuleTimeID, RuleTimestamp, RuleDelivery, RuleInstance, RuleHash, RuleRandom, RuleOther,
		RuleUnconfirmed, RuleReused, RuleMissing, RuleCase}
}
