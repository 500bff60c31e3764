package store

import "github.com/dupctl/dupctl/internal/platform/findings"

// The idempotency-store rules: the catalog checks first, then the data.
var (
	RuleNoUnique = findings.Rule{
		Code: "STORE_NO_UNIQUE_KEY", Severity: findings.Error, Since: "v0.1.0",
		Title: "no unique index or constraint covers the idempotency key",
		Doc: `Nothing in the catalog (pg_index, pg_constraint) makes the key column(s)
unique. Two workers that both check "is this key done?" before writing
both see no row and both insert: the check-then-insert race. Only a unique index lets the database arbitrate, and without one
INSERT ... ON CONFLICT fails with 42P10.`,
		Fix: "Create the constraint without blocking writes: CREATE UNIQUE INDEX CONCURRENTLY t_key_uniq ON t (key); " +
			"then ALTER TABLE t ADD CONSTRAINT t_key_uniq UNIQUE USING INDEX t_key_uniq; reserve with INSERT ... " +
			"ON CONFLICT (key) DO NOTHING RETURNING.",
	}
	RuleInvalidIndex = findings.Rule{
		Code: "STORE_INDEX_INVALID", Severity: findings.Error, Since: "v0.1.0",
		Title: "a unique index on the key is INVALID (failed CREATE INDEX CONCURRENTLY)",
		Doc: `pg_index.indisvalid is false: a CREATE UNIQUE INDEX CONCURRENTLY failed,
typically on duplicates already in the table. The planner ignores it,
ON CONFLICT cannot use it, and the duplicates that made it fail are still
there; it goes on rejecting some new writes, so it looks like protection
and is not.`,
		Fix: "Remove the duplicates (see STORE_DUPLICATE_KEYS), DROP INDEX CONCURRENTLY the invalid index and create it again; " +
			"check indisvalid afterwards.",
	}
	RulePartial = findings.Rule{
		Code: "STORE_UNIQUE_PARTIAL", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the key's unique index is partial: rows outside its predicate are not covered",
		Doc: `The only unique index on the key has a WHERE clause (e.g. WHERE status
<> 'FAILED'). Rows outside the predicate can share a key, so a retry after
FAILED inserts a second row and runs again; and ON CONFLICT (key) is
rejected with 42P10 unless it repeats the predicate.`,
		Fix: "Make the index cover every row (drop the WHERE), or, when a new row per failed attempt is intended, " +
			"keep one row per key and move attempts to a counter; write ON CONFLICT (key) WHERE <predicate> in the meantime.",
	}
	RuleExpression = findings.Rule{
		Code: "STORE_UNIQUE_EXPRESSION", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the key is unique only through an expression index",
		Doc: `The unique index is on an expression (lower(key), payload->>'id')
rather than the column. Rows whose expression is NULL are not covered, and
INSERT ... ON CONFLICT (key) does not match the index (42P10): the code
must name the same expression.`,
		Fix: "Store the normalised key in its own NOT NULL column with a plain unique constraint, or write ON CONFLICT ((<expression>)) " +
			"and make the expression NOT NULL for every row.",
	}
	RuleTooWide = findings.Rule{
		Code: "STORE_UNIQUE_TOO_WIDE", Severity: findings.Error, Since: "v0.1.0",
		Title: "the unique index includes a column beside the key (e.g. attempt)",
		Doc: `The unique index is on the key plus another column, e.g. (key, attempt)
or (key, created_at). Every attempt has a new value there, so the index
accepts one row per attempt: a duplicate per retry, with no error.`,
		Fix: "Make the unique index exactly the key columns (add the tenant or scope column to the key if it belongs there, " +
			"with {KeyColumns}), and keep attempts in a counter column.",
	}
	RuleDeferrable = findings.Rule{
		Code: "STORE_UNIQUE_DEFERRABLE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the key's unique constraint is DEFERRABLE",
		Doc: `A deferrable unique constraint is checked at commit, not at the insert:
two transactions both see their insert succeed and run the side effect
before one fails at COMMIT, and it cannot arbitrate INSERT ... ON CONFLICT
(SQLSTATE 55000).`,
		Fix: "Recreate the constraint NOT DEFERRABLE (the default) so the insert itself is the reservation.",
	}
	RuleNarrower = findings.Rule{
		Code: "STORE_UNIQUE_NARROWER", Severity: findings.Info, Since: "v0.1.0",
		Title: "the unique index covers only part of a composite key",
		Doc: `The key was given as several columns (tenant_id, idempotency_key) but the
unique index is on a subset. No duplicate can exist, but two scopes
(tenants, operations) cannot use the same key: one's request is treated
as the other's replay.`,
		Fix: "Make the unique index the whole key, e.g. UNIQUE (tenant_id, idempotency_key), if keys are chosen per scope.",
	}
	RuleNullable = findings.Rule{
		Code: "STORE_KEY_NULLABLE", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a key column is nullable: rows with NULL keys are never duplicates",
		Doc: `A unique index treats NULLs as distinct (unless NULLS NOT DISTINCT), so
any number of rows can have a NULL key: a producer that forgets the key
gets no protection and no error.`,
		Fix: "ALTER TABLE t ALTER COLUMN key SET NOT NULL (validate with a NOT VALID check constraint first on a big table), " +
			"and reject messages without a key.",
	}
	RulePerPartition = findings.Rule{
		Code: "STORE_UNIQUE_PER_PARTITION", Severity: findings.Error, Since: "v0.3.0",
		Title: "the table is partitioned by a column outside the key: uniqueness holds only within one partition",
		Doc: `The idempotency table is declaratively partitioned (RANGE by month,
LIST by region or status, ...) on a column that is not the key. PostgreSQL
requires a unique index on a partitioned table to include the partition
key, so UNIQUE (idempotency_key, created_at) is the best it allows, and it
is enforced one partition at a time: a key retried after the month turned,
or written with another region or status, lands in a second partition as a
second row, with no error, and ON CONFLICT never fires. Partitioning by
the key itself (HASH (idempotency_key)) is not affected: one key always
lands in one partition. The evidence lists the partition keys at every
level and, when the duplicate check ran, the keys already in two
partitions.`,
		Fix: "Partition by the key's hash (PARTITION BY HASH (idempotency_key)) so UNIQUE (idempotency_key) " +
			"is allowed and holds for the whole table, or claim keys in a small unpartitioned table first " +
			"(idempotency_claims (idempotency_key PRIMARY KEY), INSERT ... ON CONFLICT DO NOTHING in the same transaction) " +
			"and keep the time partitions for retention.",
	}
	RuleDuplicates = findings.Rule{
		Code: "STORE_DUPLICATE_KEYS", Severity: findings.Error, Since: "v0.1.0",
		Title: "duplicate idempotency keys are already in the table",
		Doc: `More than one row has the same key. Each row is a reservation that
passed, so the work behind that key very likely ran more than once (a
read-then-write that two workers passed).`,
		Fix: "Reconcile the duplicates (which run's effect stands?), delete the extra rows, then add the unique constraint so the database " +
			"rejects the next one.",
	}
	RuleNormalized = findings.Rule{
		Code: "STORE_DUPLICATE_KEYS_NORMALIZED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "keys differ only by case or surrounding spaces",
		Doc: `Different rows hold keys that are equal after lower(btrim()): 'Order-1',
'order-1' and 'order-1 '. Each passes the unique index, yet they are one
operation written by producers that format the key differently.`,
		Fix: "Normalise the key where it is built (one function, lower case, trimmed) and enforce it: a CHECK (key = lower(btrim(key))) " +
			"or a unique index on lower(btrim(key)).",
	}
	RuleMultipleSucceeded = findings.Rule{
		Code: "STORE_MULTIPLE_SUCCEEDED", Severity: findings.Error, Since: "v0.1.0",
		Title: "a business key succeeded more than once under different idempotency keys",
		Doc: `For one business key (order, account, settlement) there are several
SUCCEEDED rows with different idempotency keys: the key changed between
attempts (a job id, a timestamp or an attempt number in it), so the
unique constraint never saw a duplicate and the effect ran again.`,
		Fix: "Derive the idempotency key only from the business key and the operation (payment:<orderId>), never from the job id, " +
			"attempt or time; see 'dupctl keys unstable'.",
	}
	RuleStuck = findings.Rule{
		Code: "STORE_STUCK_PROCESSING", Severity: findings.Warn, Since: "v0.1.0",
		Title: "rows are stuck in PROCESSING longer than {StuckAfter}",
		Doc: `A worker reserved the key and never finished: it crashed after the
reservation (a worker crash) or is still running far beyond the
usual duration. A stuck reservation blocks every retry, and a sweeper
that re-drives it without a fencing token runs the effect a second time
if the first worker was only slow.`,
		Fix: "Give reservations a lease (locked_until or a heartbeat) and have a sweeper re-drive only rows whose lease expired; " +
			"make the effect idempotent at its sink so a re-drive of a slow worker cannot duplicate it.",
	}
	RuleUnknownStatus = findings.Rule{
		Code: "STORE_UNKNOWN_STATUS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "status values outside the expected set",
		Doc: `Rows carry statuses that are not PROCESSING, SUCCEEDED, FAILED or
RETRYABLE (or the values given with {Statuses}). Either the table uses other
names (map them with {Statuses} so the other checks can read them) or
something writes statuses no state machine expects, and code that tests
status = 'SUCCEEDED' treats those rows as not done.`,
		Fix: "Map the table's statuses with {Statuses} succeeded=DONE,... or constrain the column: " +
			"CHECK (status IN ('PROCESSING','SUCCEEDED','FAILED','RETRYABLE')) or an enum.",
	}
	RuleOverwritten = findings.Rule{
		Code: "STORE_SUCCEEDED_OVERWRITTEN", Severity: findings.Error, Since: "v0.1.0",
		Title: "a SUCCEEDED record was overwritten by FAILED or PROCESSING",
		Doc: `A key that had succeeded is no longer SUCCEEDED: a late worker (lock
expired, redelivery) wrote PROCESSING or FAILED over it. The next delivery
sees "not done" and runs the side effect again. Evidence is either a
status history table (a SUCCEEDED row followed by another status) or the
current row itself (succeeded_at set, a 2xx response code, or a column
named with {EvidenceColumns}, beside a non-success status).`,
		Fix: "Guard transitions in the UPDATE: SET status='FAILED' WHERE key=$1 AND status='PROCESSING' AND lock_token=$2, " +
			"and reject leaving SUCCEEDED with a trigger.",
	}
	RuleNoEvidence = findings.Rule{
		Code: "STORE_NO_TRANSITION_EVIDENCE", Severity: findings.Info, Since: "v0.1.0",
		Title: "nothing records status history: an overwritten SUCCEEDED cannot be detected",
		Doc: `The table has no status history table and no column that only a success
sets (succeeded_at, a response code), so a SUCCEEDED overwritten by a late
FAILED leaves no trace, and neither dupctl nor an incident review can see
it.`,
		Fix: "Record transitions: a <table>_history table filled by a trigger, or a succeeded_at column set with the status " +
			"(or name an existing column with {EvidenceColumns}).",
	}
	RuleReplicaStale = findings.Rule{
		Code: "STORE_REPLICA_STALE", Severity: findings.Error, Since: "v0.3.0",
		Title: "records on the primary are missing or stale on the replica",
		Doc: `Recent idempotency records the primary holds are missing on the replica
({ReplicaURL}), or carry an older status there, because the replica had
not replayed the primary's WAL yet. An idempotency check or a status read
routed to the replica (a read/write split, a read-only pool, a "reader"
endpoint) sees "not done" for a job that is done, and the side effect runs
again: the stale-cache cause with another name. The evidence is the replay
position against the primary's (pg_wal_lsn_diff), whether replay is paused,
the last replayed commit (pg_last_xact_replay_timestamp), and the records
that differ. Only records the primary's snapshot holds and the replica's
did not are counted: a replica that had replayed past the primary's
snapshot is not compared.`,
		Fix: "Read idempotency records and statuses from the primary, or claim the key there with INSERT ... " +
			"ON CONFLICT DO NOTHING, which no replica can answer; if a read must go to a replica, wait until it has replayed the write's LSN " +
			"(pg_last_wal_replay_lsn() >= the commit's pg_current_wal_lsn()) or commit these writes with synchronous_commit = remote_apply.",
	}
	RuleReplicaLag = findings.Rule{
		Code: "STORE_REPLICA_LAG", Severity: findings.Warn, Since: "v0.3.0",
		Title: "the replica replays far behind the primary (or is paused)",
		Doc: `The replica's WAL replay is paused, or its last replayed commit is a
second or more behind while it has WAL still to replay. No record of this
table differs yet, but any record written in that window is invisible
there: an idempotency check routed to the replica would miss it.`,
		Fix: "Keep idempotency checks and status reads on the primary; " +
			"alert on replay lag (pg_stat_replication.replay_lag on the primary, now() - pg_last_xact_replay_timestamp() on the standby) " +
			"and resume a paused replay (pg_wal_replay_resume()).",
	}
	RuleFailedNoAttempts = findings.Rule{
		Code: "STORE_FAILED_NO_ATTEMPTS", Severity: findings.Warn, Since: "v0.1.0",
		Title: "FAILED is used as a final status with no attempt counter",
		Doc: `Rows end in FAILED, and there is neither an attempt counter nor a
RETRYABLE status. A temporary error (timeout, lock busy) then looks the
same as a permanent one: either FAILED blocks recovery for good, or the
code treats FAILED as retryable and nothing bounds the retries.`,
		Fix: "Add an attempt counter (attempt int NOT NULL DEFAULT 0) and a RETRYABLE status for temporary errors; " +
			"keep FAILED for permanent errors and dead-letter after N attempts.",
	}
)

// Rules lists the idempotency-store rules.
func Rules() []findings.Rule {
	return []findings.Rule{RuleNoUnique, RuleInvalidIndex, RulePartial, RuleExpression, RuleTooWide, RuleDeferrable,
		RuleNarrower, RuleNullable, RulePerPartition, RuleDuplicates, RuleNormalized, RuleMultipleSucceeded, RuleStuck, RuleUnknownStatus,
		RuleOverwritten, RuleNoEvidence, RuleFailedNoAttempts, RuleReplicaStale, RuleReplicaLag}
}
