package doctor

import (
	"strings"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// configKeys are the dupctl.yaml keys that set the Options fields doctor
// gives the capabilities it runs: a value doctor took from dupctl.yaml is
// named as the key it came from, not as a flag of another command.
var configKeys = map[string]string{
	"Pattern":         "cache_pattern",
	"Patterns":        "lock_pattern",
	"LockPatterns":    "locks.patterns",
	"Libraries":       "locks.libraries",
	"Table":           "idempotency.table",
	"KeyColumn":       "idempotency.key_column",
	"KeyColumns":      "idempotency.key_column",
	"StatusColumn":    "idempotency.status_column",
	"BusinessColumns": "idempotency.business_key_column",
	"Query":           "durations.query",
	"TTLs":            "lock_ttl",
	"Queue":           "dlq",
	"Fields":          "logs.fields",
	"Events":          "logs.events",
	"Mapping":         "logs.fields",
	"Profile":         "profile",
	"Profiles":        "profile",
	"LockTTL":         "lock_ttl",
	// jobs[].worker: the job's own consumer under real faults.
	"Worker":     "worker.command",
	"Workers":    "worker.workers",
	"Env":        "worker.env",
	"Publish":    "worker.publish",
	"Body":       "worker.body",
	"EffectsSQL": "worker.effects_sql",
	"EffectsLog": "worker.effects_log",
	"CacheKeys":  "worker.cache_keys",
}

// ConfigKey is the dupctl.yaml key that sets field in doctor's checks.
func ConfigKey(field string) (string, bool) {
	k, ok := configKeys[field]
	return k, ok
}

// Word words an error of a capability doctor ran on dupctl.yaml's values:
// its options as the keys they came from, the rest in plain words.
func Word(err error) string { return problem.Expand(err.Error(), yamlWord) }

func yamlWord(field string) string {
	if k, ok := ConfigKey(field); ok {
		return k
	}
	return strings.ToLower(field)
}
