package cache

import "github.com/dupctl/dupctl/internal/platform/findings"

// The cache audit's rules.
var (
	RuleNotDone = findings.Rule{
		Code: "CACHE_NOT_DONE_DB_SUCCEEDED", Severity: findings.Error, Since: "v0.1.0",
		Title: "the cache says not done while the database has SUCCEEDED",
		Doc: `The status cache holds PROCESSING, FAILED or another non-final status for
a key the database (the source of truth) has as SUCCEEDED: the cache
missed an update or an invalidation. A worker that asks the cache "already
done?" when the next message for that key arrives gets "no" and runs the
side effect again: the cache trap. It is an error when a message
for the key is known to be live ({LiveKeys}, {AssumeLive}), a warning
when that is unknown, and info when the key has no live message.`,
		Fix: "Decide 'already done?' from the database, never from the cache alone; " +
			"write the cache after the commit and delete it (not set it) on every status change, with a TTL so a missed invalidation heals.",
	}
	RuleMissing = findings.Rule{
		Code: "CACHE_MISSING_SUCCEEDED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a key with a live message is missing from the cache while the database has SUCCEEDED",
		Doc: `A message for the key is still live ({LiveKeys}) and the database has
the key as SUCCEEDED, but the cache has no entry. That is safe only if the
worker falls back to the database on a cache miss; a worker that reads a
miss as "not done" runs the side effect again (an error with
{CacheAuthoritative}).`,
		Fix: "On a cache miss, read the database before doing anything; never treat a miss as 'not processed'.",
	}
	RuleDoneNotInDB = findings.Rule{
		Code: "CACHE_DONE_DB_NOT", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the cache says done while the database does not",
		Doc: `The cache holds SUCCEEDED for a key the database has as PROCESSING or
FAILED, or has no row for. A worker that trusts the cache skips the job:
the work is lost, or the database was never the source of truth (the
cache was written before the commit, and the commit failed).`,
		Fix: "Write the cache only after the database commit succeeded, and from the committed status; " +
			"treat the database as the source of truth when they disagree.",
	}
	RuleStale = findings.Rule{
		Code: "CACHE_STALE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the cache holds an outdated non-final status",
		Doc: `Cache and database disagree on a non-final status (cache PROCESSING,
database FAILED, or the reverse), and still did after the re-read grace
period, so it is not an update in flight. A cached FAILED beside a
database PROCESSING invites a retry while a worker is still running; a
cached PROCESSING beside a database FAILED blocks the retry.`,
		Fix: "Invalidate (delete) the cache entry in the same code path that changes the status, after the commit, " +
			"and give entries a TTL so a missed invalidation heals.",
	}
	RuleOrphan = findings.Rule{
		Code: "CACHE_ORPHAN", Severity: findings.Info, Since: "v0.1.0",
		Title: "cache entries with no database row",
		Doc: `The cache holds a non-final status for a key the database has no row
for: the row was reaped by retention while the cache entry lives on, or
the status was written only to the cache. Harmless while the entry says
"not done", but a sign the cache's lifetime is not tied to the row's.`,
		Fix: "Give cache entries a TTL no longer than the table's retention, and write statuses to the database first.",
	}
	RuleNoTTL = findings.Rule{
		Code: "CACHE_NO_TTL", Severity: findings.Warn, Since: "v0.1.0",
		Title: "cache entries without a TTL",
		Doc: `Status cache entries with no expiry (PTTL -1): one missed invalidation
leaves a wrong status forever, and the cache grows without bound.`,
		Fix: "Set every status entry with a TTL (SET key value EX n), shorter than the time a wrong answer may live.",
	}
	RuleUndecodable = findings.Rule{
		Code: "CACHE_UNDECODABLE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "cache values that could not be read as a status",
		Doc: `Values under the cache pattern did not decode as {Decoder} says (not JSON,
no such JSON path, a hash where a string was expected). They were not
compared. Either {Decoder} is wrong, or several writers use different
formats, and a reader that fails to parse may treat the key as not done.`,
		Fix: "Check {Decoder} against one entry (redis-cli GET/HGETALL); give every writer one format.",
	}
	RuleUnknownStatus = findings.Rule{
		Code: "CACHE_UNKNOWN_STATUS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "cache statuses outside the expected set",
		Doc: `Cache values decoded to statuses that are not mapped to a role
(PROCESSING, SUCCEEDED, FAILED, RETRYABLE, or {Statuses} values), so they
could not be compared with the database.`,
		Fix: "Map the values with {Statuses} ROLE=VALUE (e.g. {Statuses} succeeded=done,1) or make the writers use the database's status names.",
	}
	RuleReplicaStale = findings.Rule{
		Code: "CACHE_REPLICA_STALE", Severity: findings.Error, Since: "v0.3.0",
		Title: "keys read differently on the replica than on the primary",
		Doc: `The keys the audit met were read again in a snapshot of the primary and
of the replica ({Replica}) taken right after it: some have no row on the
replica, or another status there, because the replica had not replayed
the primary's WAL yet. An idempotency check or a status read routed to the
replica (a read/write split, a read-only pool, a "reader" endpoint) is the
stale cache with another name: for a key SUCCEEDED on the primary it
answers "not done", and the side effect runs again - an error. Keys that
differ only in a non-final status are a warning. The evidence is the
replay position against the primary's (pg_wal_lsn_diff), whether replay
is paused, the last replayed commit (pg_last_xact_replay_timestamp), and
the keys that differ. A standby that had replayed past the primary's
snapshot is not compared: nothing can differ.`,
		Fix: "Read idempotency records and statuses from the primary, or claim the key there with INSERT ... ON CONFLICT DO NOTHING, " +
			"which no replica can answer; if a read must go to a replica, wait until it has replayed the write's LSN " +
			"(pg_last_wal_replay_lsn() >= the commit's pg_current_wal_lsn()) or commit these writes with synchronous_commit = remote_apply.",
	}
	RuleReplicaLag = findings.Rule{
		Code: "CACHE_REPLICA_LAG", Severity: findings.Warn, Since: "v0.3.0",
		Title: "the replica replays far behind the primary (or is paused)",
		Doc: `The WAL replay of the replica ({Replica}) is paused, or it had not
replayed the primary's position a second later. None of the keys the audit met differs
yet, but any status written in that window is invisible there: a status
read routed to the replica would miss it.`,
		Fix: "Keep idempotency checks and status reads on the primary; alert on replay lag (pg_stat_replication.replay_lag " +
			"on the primary, now() - pg_last_xact_replay_timestamp() on the standby) and resume a paused replay (pg_wal_replay_resume()).",
	}

	RuleNoKeys = findings.Rule{
		Code: "CACHE_NO_KEYS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "no cache key matched the pattern",
		Doc: `SCAN found no key for {Pattern}, so nothing was compared: a pattern
with a typo, the wrong Redis database in the URL, or a cache that is empty
right now. An audit that compared nothing must not pass silently.`,
		Fix: "Check the pattern against a real key (redis-cli --scan --pattern 'job:status:*' | head) and the database number in {RedisURL}.",
	}
)

// Rules lists the cache audit's rules.
func Rules() []findings.Rule {
	return []findings.Rule{RuleNotDone, RuleMissing, RuleDoneNotInDB, RuleStale, RuleOrphan, RuleNoTTL, RuleUndecodable,
		RuleUnknownStatus, RuleNoKeys, RuleReplicaStale, RuleReplicaLag}
}
