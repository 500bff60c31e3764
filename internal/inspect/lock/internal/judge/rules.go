package judge

import "github.com/dupctl/dupctl/internal/platform/findings"

// The rules `dupctl inspect lock` evaluates.
var (
	RuleNoTTL = findings.Rule{
		Code: "LOCK_NO_TTL", Severity: findings.Error, Since: "v0.1.0",
		Title: "a lock has no TTL: it never expires",
		Doc: `A lock key with no expiry (PTTL -1) stays until someone deletes it. When
the worker that took it crashes, is killed or loses its connection before
the release, nobody ever releases it: every later job for that business key
is skipped or requeued forever, and people "fix" it by deleting locks by
hand, which lets a still-running job and a new one overlap - a duplicate.`,
		Fix: "Take the lock with SET key <random token> NX PX <ttl>, with the TTL sized from the real p99 job duration plus a buffer; " +
			"release it with the token-checked compare-and-delete script.",
	}
	RuleRandomKey = findings.Rule{
		Code: "LOCK_KEY_RANDOM_ID", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a lock family is keyed by a per-job random id, not a business key",
		Doc: `Every key of the family has a segment that changes per job or per run (a
UUID v4, a ULID or time-based id minted when the lock was taken, a Sidekiq
JID, a random token, a job counter). Two messages for the same order then
take two different locks and both run: the lock protects nothing against
duplicates. The family is judged on all its keys;
the evidence says which segment varies and what it looks like.`,
		Fix: "Build the lock key from the business key (lock:payment:order:<orderId>), never from the job or message id; " +
			"keep the job id in logs and in the token's metadata instead.",
	}
	RuleTokenConstant = findings.Rule{
		Code: "LOCK_TOKEN_CONSTANT", Severity: findings.Error, Since: "v0.1.0",
		Title: "a lock's owner value is a constant, not a token",
		Doc: `The lock's value is a sentinel ("1", "locked", "true", empty or the key
itself). Every holder stores the same value, so a token-checked release
cannot tell holders apart: a worker whose lock expired deletes the next
holder's lock, and a third worker walks in while the second still runs.`,
		Fix: "Store a random token unique per acquisition (16+ random bytes, a UUID v4) and release with: if GET(key) == token then DEL(key) " +
			"- one atomic script.",
	}
	RuleTokenHost = findings.Rule{
		Code: "LOCK_TOKEN_HOST", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a lock's owner is a hostname, pod, IP or pid with nothing random",
		Doc: `The owner value names a machine or process, not one acquisition. Two
threads or tasks on one host share it, and a restarted pod with the same
name "owns" its predecessor's lock: either can release the other's lock,
which reopens the door to a second worker.`,
		Fix: "Add a random part unique per acquisition (keep host and pid as metadata after it), " +
			"and release only with the token-checked script.",
	}
	RuleTokenShared = findings.Rule{
		Code: "LOCK_TOKEN_SHARED", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the same owner value is held on several live locks",
		Doc: `One owner value is stored on several live locks of a family at once: a
process-wide id used as the token. A token-checked release then matches
any of that process's locks, and within the process nothing stops two
threads from releasing each other's. (Spring Integration's
RedisLockRegistry stores its registry's clientId on every lock on purpose
and serialises threads with a local lock; anything else is a bug.)`,
		Fix: "Generate the token per acquisition, not per process; keep the process id as metadata if you need it.",
	}
	RuleTokenWeak = findings.Rule{
		Code: "LOCK_TOKEN_LOW_ENTROPY", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a lock's owner token is short, a timestamp or a counter",
		Doc: `The owner value has less than 64 bits of randomness: a timestamp, a small
number (thread id, counter) or a short string. Two acquisitions can get
the same value, so a late worker's token-checked release can still match
the next holder's lock.`,
		Fix: "Use 16 random bytes (base64 or hex) or a UUID v4 per acquisition; put times and counters in metadata after the random part.",
	}
	RuleTTLOutlier = findings.Rule{
		Code: "LOCK_TTL_OUTLIER", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a lock's TTL is far from its family's",
		Doc: `The TTL a lock was given (remaining TTL plus idle time, a lower bound when
something read it since) is more than 10 times above or below the median
of its family. Far above: a crashed holder blocks the business key that
much longer, often a hand-set or mis-configured TTL. Far below: the job
can outlive its lock and a second worker takes it. A lock far below is
read again a moment later, and is no outlier when it was renewed (the
same owner, a TTL that went up: a watchdog keeps it), re-taken or gone.`,
		Fix: "Give every lock of a job type the same TTL, sized from the real p99 job duration plus a buffer ('dupctl inspect ttl'); " +
			"renew long jobs only while the token is still yours.",
	}
	RuleTTLLong = findings.Rule{
		Code: "LOCK_TTL_LONG", Severity: findings.Info, Since: "v0.1.0",
		Title: "a lock family's TTL is longer than {MaxTTL}",
		Doc: `The family's median TTL is above {MaxTTL} (1h by default). When a holder
crashes, its business key stays blocked that long; people then delete
locks by hand, which is how a still-running job and a new one overlap.`,
		Fix: "Size the TTL from the real p99 job duration plus a buffer and renew it while working, " +
			"instead of one TTL that covers the worst case.",
	}
	RuleIdleOrphan = findings.Rule{
		Code: "LOCK_IDLE_ORPHAN", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a lock was untouched across observations: likely an orphan of a crashed worker",
		Doc: `Across {Observe} observations {Interval} apart the lock kept its value,
was neither renewed nor read, and has been idle for longer than {IdleAfter}. A
live holder of a long job can look the same, so this takes two
observations (as BullMQ's stalled check does) and never one snapshot. An
orphan blocks its business key until it expires - or forever without a
TTL - and invites manual deletes.`,
		Fix: "Check that no worker still runs the job (logs by lockKey and token); " +
			"if none does, let the TTL end it or delete it with the token-checked script; give locks a TTL and renew them only while working.",
	}
	RuleNoFencing = findings.Rule{
		Code: "LOCK_FENCING_ABSENT", Severity: findings.Info, Since: "v0.1.0",
		Title: "a lock family has no fencing counter",
		Doc: `No fencing-token counter (redisson_lock_token:{name}, or a key with a
fence segment next to the lock) was found for the family. A holder that
paused past its TTL still believes it holds the lock; only a monotonic
token checked by the resource rejects its late write. Where a duplicate
costs money, the lock alone is not enough.`,
		Fix: "Keep idempotency at the source of truth (unique idempotency key, atomic status); " +
			"for correctness-critical locks add a fencing counter (INCR per acquisition) that the resource checks.",
	}
	RulePossible = findings.Rule{
		Code: "LOCK_POSSIBLE_FAMILY", Severity: findings.Info, Since: "v0.2.0",
		Title: "keys shaped like locks that nothing confirms",
		Doc: `A family of keys looks like locks by its shape (a token-shaped value, a
lease-like TTL) but nothing confirms it: no catalogue library writes that
layout, its name holds no lock word (or holds one over no TTL or no
token-shaped value), and its keys do not behave as locks do as a whole
(random owner tokens, one granted TTL, a lease). dupctl reports it as one
info line with the pattern that would confirm it and how many keys that
pattern matches today, and beside it, at info too, the defects that do not
depend on what wrote the keys (a key without a TTL, a TTL far from its
siblings', a constant owner value), each worded "if these are locks". So a
cache of ids, a session or a flag is never reported as a broken lock, and
a lock's defect does not disappear until someone confirms its family. If
they are locks, name them and every lock check runs on them.`,
		Fix: "If these are locks, name them: {LockPatterns} '<glob>' (or locks.patterns in dupctl.yaml; " +
			"add the library to locks.libraries so it is named); if they are data, nothing to do.",
	}
	RuleEviction = findings.Rule{
		Code: "LOCK_REDIS_EVICTION", Severity: findings.Error, Since: "v0.1.0",
		Title: "Redis may evict lock keys (maxmemory-policy)",
		Doc: `maxmemory-policy is allkeys-* or volatile-*: under memory pressure Redis
deletes keys, and volatile-* picks exactly the keys with a TTL - locks
(volatile-ttl the ones closest to expiry). An evicted lock lets a second
worker in while the first still runs.`,
		Fix: "Keep locks on a Redis with maxmemory-policy noeviction (BullMQ requires it), or on an instance sized so it never evicts; " +
			"monitor evicted_keys.",
	}
	RuleEvicted = findings.Rule{
		Code: "LOCK_REDIS_EVICTED_KEYS", Severity: findings.Error, Since: "v0.1.0",
		Title: "Redis has evicted keys",
		Doc: `INFO stats reports evicted_keys above zero: the server has already deleted
keys under memory pressure. Locks on this instance may have been among
them.`,
		Fix: "Set maxmemory-policy noeviction for the lock instance (or move locks to one), raise maxmemory, and alert on evicted_keys.",
	}
	RuleReplica = findings.Rule{
		Code: "LOCK_REDIS_REPLICA", Severity: findings.Warn, Since: "v0.1.0",
		Title: "locks are read from a replica",
		Doc: `The server inspected is a replica. Replicas lag their master and do not
expire keys themselves: a lock read there may be gone on the master, or
missing though held. Deciding from a replica whether a lock is held lets
two workers in.`,
		Fix: "Take, check and release locks on the master only; point dupctl at the master to see the truth.",
	}
	RulePersistence = findings.Rule{
		Code: "LOCK_REDIS_PERSISTENCE", Severity: findings.Info, Since: "v0.1.0",
		Title: "a Redis restart loses locks (no AOF)",
		Doc: `AOF is off: a restart or failover brings back at best the last RDB
snapshot, so locks taken since are gone while their holders still run.
The next delivery takes the lock again.`,
		Fix: "Do not rely on the lock alone: keep idempotency at the source of truth; enable AOF (appendfsync everysec) " +
			"where locks must survive a restart.",
	}
)

// RuleScanIncomplete is a cluster node, or a master Sentinels name, whose
// keys a scan could not all read (failover.go, sentinel.go in keyspace):
// the report would otherwise look whole.
var RuleScanIncomplete = findings.Rule{
	Code: "LOCK_SCAN_INCOMPLETE", Severity: findings.Error, Since: "v0.3.0",
	Title: "part of the keyspace was not read: a master failed and nothing took its place in time",
	Doc: `A master of the Redis Cluster failed during the scan (killed, partitioned,
its machine gone) and no master served its hash slots again within
{FailoverWait}, or they went to a master the scan already read for other
slots; or the master a group of Sentinels names failed and they named no
master that answered within {FailoverWait}. The locks the scan did not
reach are missing from this report: its families, counts and findings
describe the rest of the keyspace only. The finding names the node, its
slot ranges (on a cluster) and the keys SCAN had returned there without
being read. A failover that completed in time is not this
finding: the scan then goes on on the promoted replica (from the start,
skipping the keys it read) and the report lists the failover.`,
	Fix: "Run the inspection again once the cluster is healthy (CLUSTER INFO: cluster_state:ok; SENTINEL MASTERS: the master up), " +
		"or give a longer {FailoverWait} than the cluster's node timeout (the Sentinels' down-after) plus the election.",
}

// Rules lists the rules of `dupctl inspect lock`.
func Rules() []findings.Rule {
	return []findings.Rule{RuleNoTTL, RuleRandomKey, RuleTokenConstant, RuleTokenHost, RuleTokenShared, RuleTokenWeak,
		RuleTTLOutlier, RuleTTLLong, RuleIdleOrphan, RuleNoFencing, RulePossible, RuleEviction, RuleEvicted, RuleReplica, RulePersistence,
		RuleScanIncomplete}
}
