// Package lockbench is the keyspace inspect lock is measured on: locks
// of every maker dupctl recognises, under names with and without "lock"
// in them, beside non-lock keys of mixed types (counters and caches whose
// names contain "lock", sessions, user hashes, status caches, CSRF
// tokens, sets, lists, sorted sets). Each value is the bytes the maker's
// source writes (cited in internal/inspect/lock/internal/makers). The
// load command of bench/inspect-lock writes it into Redis; the judging
// benchmark of package lock reads it without one.
package lockbench

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Kind is one family of the keyspace: a share of its locks or of its
// non-lock keys, a name for the check, and the commands for key i.
type Kind struct {
	Name   string
	Lock   bool
	Share  int    // per mille of the locks (or of the others)
	Prefix string // every key of the kind starts with it
	Write  func(w Writer, r *rand.Rand, i int)
}

// Tokens as their makers make them.
func uuid4(r *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func random(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

// Spring Integration's RedisLockRegistry: one clientId per registry.
var springClients = []string{"0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7",
	"c9bf9e57-1685-4c89-bafb-ff5af830be8a", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"}

// BullMQ: one randomUUID per worker, a counter per job it takes.
var bullWorkers = []string{"3b241101-e2bb-4255-8caf-4136c566a962", "f47ac10b-58cc-4372-a567-0e02b2c3d479",
	"9c5b94b1-35ad-49bb-b118-8e8fc24abf80", "16fd2706-8baf-433b-82eb-8c7fada847da"}

var hosts = []string{"worker-7f9c-abc12", "worker-7f9c-bcd23", "batch-0", "batch-1"}

const hour = 3_600_000

// Locks are the lock kinds, each written as its maker writes it.
var Locks = []Kind{
	// the seed's SET key <uuid> NX PX ttl
	{"set-nx-px", true, 200, "lock:payment:order:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "lock:payment:order:"+strconv.Itoa(i), uuid4(r), "PX", ms(2*hour))
	}},
	// redsync mutex.go genValue: base64.StdEncoding of 16 random bytes
	{"redsync", true, 100, "mutex:invoice:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "mutex:invoice:"+strconv.Itoa(i), base64.StdEncoding.EncodeToString(random(r, 16)), "PX", ms(2*hour))
	}},
	// bsm/redislock Obtain: RawURLEncoding token + Options.Metadata, under
	// a name without "lock"
	{"redislock", true, 100, "reindex:tenant:", func(w Writer, r *rand.Rand, i int) {
		meta := fmt.Sprintf(`{"worker":%q,"pid":%d}`, hosts[i%len(hosts)], 1000+i%5000)
		if i%2 == 1 {
			meta = "worker-" + strconv.Itoa(i%16)
		}
		w.Cmd("SET", "reindex:tenant:"+strconv.Itoa(i), base64.RawURLEncoding.EncodeToString(random(r, 16))+meta, "PX", ms(3*hour))
	}},
	// Redisson RLock: a hash {<client uuid>:<thread id>: hold count} with a
	// lease, under a name without "lock"
	{"redisson", true, 100, "orders:", func(w Writer, r *rand.Rand, i int) {
		k := "orders:" + strconv.Itoa(i)
		w.Cmd("HSET", k, uuid4(r)+":"+strconv.Itoa(40+i%200), strconv.Itoa(1+i%3))
		w.Cmd("PEXPIRE", k, ms(2*hour))
	}},
	// ShedLock InternalRedisLockProvider: job-lock:<env>:<name> = ADDED:<time>@<host>:<uuid>
	{"shedlock", true, 50, "job-lock:default:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "job-lock:default:report-"+strconv.Itoa(i),
			fmt.Sprintf("ADDED:2026-12-02T10:%02d:%02d.%03dZ@%s:%s", i%60, (i/60)%60, i%1000, hosts[i%len(hosts)], uuid4(r)), "PX", ms(3*hour))
	}},
	// BullMQ worker.ts: bull:<queue>:<jobId>:lock = <worker uuid>:<n>
	{"bullmq", true, 100, "bull:emails:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "bull:emails:"+strconv.Itoa(i)+":lock", bullWorkers[i%len(bullWorkers)]+":"+strconv.Itoa(i/len(bullWorkers)),
			"PX", ms(2*hour))
	}},
	// sidekiq-unique-jobs lock.lua: <digest>:LOCKED = {jid: time}, no TTL
	// unless lock_ttl is set
	{"sidekiq-unique-jobs", true, 100, "uniquejobs:", func(w Writer, r *rand.Rand, i int) {
		k := "uniquejobs:" + md5hex("sidekiq"+strconv.Itoa(i)) + ":LOCKED"
		w.Cmd("HSET", k, hex.EncodeToString(random(r, 12)), fmt.Sprintf("%d.%06d", 1764669600+i%86400, i%1000000))
		if i%2 == 0 {
			w.Cmd("PEXPIRE", k, ms(4*hour))
		}
	}},
	// asynq enqueueUniqueCmd: asynq:{<queue>}:unique:<type>:<md5> = <task id>
	{"asynq", true, 100, "asynq:{default}:unique:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "asynq:{default}:unique:email:send:"+md5hex("asynq"+strconv.Itoa(i)), uuid4(r), "PX", ms(3*hour))
	}},
	// Spring Integration RedisLockRegistry: <registryKey>:<path> = clientId
	{"spring-integration", true, 50, "billing-locks:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "billing-locks:account-"+strconv.Itoa(i), springClients[i%len(springClients)], "PX", ms(2*hour))
	}},
	// a hand-made lock holding "1" without a TTL (LOCK_NO_TTL, LOCK_TOKEN_CONSTANT)
	{"constant", true, 100, "lock:report:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "lock:report:"+strconv.Itoa(i), "1")
	}},
}

var statuses = []string{"SUCCEEDED", "SUCCEEDED", "SUCCEEDED", "FAILED", "PROCESSING"}

// Others are the non-lock kinds.
var Others = []Kind{
	{"counter", false, 100, "stats:page:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "stats:page:"+strconv.Itoa(i)+":views", strconv.Itoa(r.IntN(100000)))
	}},
	{"clock-offset", false, 50, "clock:offset_ms:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "clock:offset_ms:node-"+strconv.Itoa(i), strconv.Itoa(r.IntN(200)-100))
	}},
	{"deadlock-count", false, 50, "deadlock_count:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "deadlock_count:db-"+strconv.Itoa(i), strconv.Itoa(r.IntN(20)))
	}},
	{"rate-limit", false, 100, "ratelimit:user:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "ratelimit:user:"+strconv.Itoa(i), strconv.Itoa(1+r.IntN(60)), "PX", ms(hour))
	}},
	{"cache", false, 150, "cache:product:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "cache:product:"+strconv.Itoa(i), fmt.Sprintf(`{"id":%d,"name":"Product %d","price_cents":%d,"stock":%d}`, i, i,
			r.IntN(100000), r.IntN(500)), "PX", ms(hour))
	}},
	{"session", false, 100, "session:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "session:"+base64.RawURLEncoding.EncodeToString(random(r, 24)), fmt.Sprintf(`{"user_id":%d,"csrf":"%s","roles":["user"]}`,
			r.IntN(1e6), hex.EncodeToString(random(r, 8))), "PX", ms(2*hour))
	}},
	{"session-token", false, 50, "sess:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "sess:"+hex.EncodeToString(random(r, 16)), strconv.Itoa(r.IntN(1e6)), "PX", ms(2*hour))
	}},
	{"status", false, 100, "status:payment:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "status:payment:"+strconv.Itoa(i), statuses[i%len(statuses)], "PX", ms(24*hour))
	}},
	{"user-hash", false, 100, "user:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("HSET", "user:"+strconv.Itoa(i), "name", "User "+strconv.Itoa(i), "email", fmt.Sprintf("user%d@example.com", i), "plan", "pro")
	}},
	{"blocked-by", false, 50, "blocked:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SADD", "blocked:user:"+strconv.Itoa(i)+":blockedBy", strconv.Itoa(r.IntN(1e6)), strconv.Itoa(r.IntN(1e6)))
	}},
	{"csrf", false, 50, "csrf:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "csrf:"+hex.EncodeToString(random(r, 12)), base64.StdEncoding.EncodeToString(random(r, 16)), "PX", ms(2*hour))
	}},
	{"idempotency", false, 50, "idem:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("SET", "idem:"+uuid4(r), `{"status":"SUCCEEDED","response":{"code":201}}`, "PX", ms(24*hour))
	}},
	{"queue", false, 25, "queue:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("RPUSH", "queue:mail:"+strconv.Itoa(i), "job-a", "job-b")
	}},
	{"leaderboard", false, 25, "leaderboard:", func(w Writer, r *rand.Rand, i int) {
		w.Cmd("ZADD", "leaderboard:"+strconv.Itoa(i), "10", "alice", "7", "bob")
	}},
}

func ms(v int) string { return strconv.Itoa(v) }

// Writer takes one Redis command.
type Writer interface{ Cmd(args ...string) }

// Split gives each kind its count of n, by share, the rounding to the last.
func Split(kinds []Kind, n int) []int {
	out := make([]int, len(kinds))
	total := 0
	for i, k := range kinds {
		out[i] = n * k.Share / 1000
		total += out[i]
	}
	out[len(out)-1] += n - total
	return out
}

// Write writes nLocks locks and nOthers other keys to w, the kinds
// interleaved as a real keyspace is written, from a fixed seed: the same
// counts give the same keyspace.
func Write(w Writer, nLocks, nOthers int) {
	r := rand.New(rand.NewPCG(42, 42))
	left := append(Split(Locks, nLocks), Split(Others, nOthers)...)
	all := append(slices.Clone(Locks), Others...)
	idx := make([]int, len(all))
	for more := true; more; {
		more = false
		for k := range all {
			if left[k] > 0 {
				all[k].Write(w, r, idx[k])
				idx[k]++
				left[k]--
				more = true
			}
		}
	}
}

// KindOf names the kind a key belongs to.
func KindOf(key string) (Kind, bool) {
	for _, ks := range [][]Kind{Locks, Others} {
		for _, k := range ks {
			if strings.HasPrefix(key, k.Prefix) {
				return k, true
			}
		}
	}
	return Kind{}, false
}
