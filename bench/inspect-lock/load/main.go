// Command load writes the keyspace of bench/inspect-lock as Redis protocol
// for `redis-cli --pipe`: locks of every maker dupctl recognises, under
// names with and without "lock" in them, beside non-lock keys of mixed
// types (counters and caches whose names contain "lock", sessions, user
// hashes, status caches, CSRF tokens, sets, lists, sorted sets). Each
// value is the bytes the maker's source writes (cited in
// internal/inspect/lock/internal/makers/maker.go).
//
//	go run ./bench/inspect-lock/load -locks 1000000 -others 200000 | redis-cli -n 14 --pipe
//
// With -check FILE it reads `dupctl inspect lock -o json` output instead
// and checks it against the keyspace it would write: every lock family
// found with all its keys, no non-lock key among the lock candidates, and
// no warn or error finding about anything but locks.
package main

import (
	"bufio"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
)

// kind is one family of the keyspace: a share of its locks or of its
// non-lock keys, a name for the check, and the commands for key i.
type kind struct {
	name   string
	lock   bool
	share  int    // per mille of the locks (or of the others)
	prefix string // every key of the kind starts with it (for -check)
	write  func(w *resp, r *rand.Rand, i int)
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

var locks = []kind{
	// the seed's SET key <uuid> NX PX ttl
	{"set-nx-px", true, 200, "lock:payment:order:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "lock:payment:order:"+strconv.Itoa(i), uuid4(r), "PX", ms(2*hour))
	}},
	// redsync mutex.go genValue: base64.StdEncoding of 16 random bytes
	{"redsync", true, 100, "mutex:invoice:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "mutex:invoice:"+strconv.Itoa(i), base64.StdEncoding.EncodeToString(random(r, 16)), "PX", ms(2*hour))
	}},
	// bsm/redislock Obtain: RawURLEncoding token + Options.Metadata, under
	// a name without "lock"
	{"redislock", true, 100, "reindex:tenant:", func(w *resp, r *rand.Rand, i int) {
		meta := fmt.Sprintf(`{"worker":%q,"pid":%d}`, hosts[i%len(hosts)], 1000+i%5000)
		if i%2 == 1 {
			meta = "worker-" + strconv.Itoa(i%16)
		}
		w.cmd("SET", "reindex:tenant:"+strconv.Itoa(i), base64.RawURLEncoding.EncodeToString(random(r, 16))+meta, "PX", ms(3*hour))
	}},
	// Redisson RLock: a hash {<client uuid>:<thread id>: hold count} with a
	// lease, under a name without "lock"
	{"redisson", true, 100, "orders:", func(w *resp, r *rand.Rand, i int) {
		k := "orders:" + strconv.Itoa(i)
		w.cmd("HSET", k, uuid4(r)+":"+strconv.Itoa(40+i%200), strconv.Itoa(1+i%3))
		w.cmd("PEXPIRE", k, ms(2*hour))
	}},
	// ShedLock InternalRedisLockProvider: job-lock:<env>:<name> = ADDED:<time>@<host>:<uuid>
	{"shedlock", true, 50, "job-lock:default:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "job-lock:default:report-"+strconv.Itoa(i),
			fmt.Sprintf("ADDED:2026-12-02T10:%02d:%02d.%03dZ@%s:%s", i%60, (i/60)%60, i%1000, hosts[i%len(hosts)], uuid4(r)), "PX", ms(3*hour))
	}},
	// BullMQ worker.ts: bull:<queue>:<jobId>:lock = <worker uuid>:<n>
	{"bullmq", true, 100, "bull:emails:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "bull:emails:"+strconv.Itoa(i)+":lock", bullWorkers[i%len(bullWorkers)]+":"+strconv.Itoa(i/len(bullWorkers)),
			"PX", ms(2*hour))
	}},
	// sidekiq-unique-jobs lock.lua: <digest>:LOCKED = {jid: time}, no TTL
	// unless lock_ttl is set
	{"sidekiq-unique-jobs", true, 100, "uniquejobs:", func(w *resp, r *rand.Rand, i int) {
		k := "uniquejobs:" + md5hex("sidekiq"+strconv.Itoa(i)) + ":LOCKED"
		w.cmd("HSET", k, hex.EncodeToString(random(r, 12)), fmt.Sprintf("%d.%06d", 1764669600+i%86400, i%1000000))
		if i%2 == 0 {
			w.cmd("PEXPIRE", k, ms(4*hour))
		}
	}},
	// asynq enqueueUniqueCmd: asynq:{<queue>}:unique:<type>:<md5> = <task id>
	{"asynq", true, 100, "asynq:{default}:unique:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "asynq:{default}:unique:email:send:"+md5hex("asynq"+strconv.Itoa(i)), uuid4(r), "PX", ms(3*hour))
	}},
	// Spring Integration RedisLockRegistry: <registryKey>:<path> = clientId
	{"spring-integration", true, 50, "billing-locks:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "billing-locks:account-"+strconv.Itoa(i), springClients[i%len(springClients)], "PX", ms(2*hour))
	}},
	// a hand-made lock holding "1" without a TTL (LOCK_NO_TTL, LOCK_TOKEN_CONSTANT)
	{"constant", true, 100, "lock:report:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "lock:report:"+strconv.Itoa(i), "1")
	}},
}

var statuses = []string{"SUCCEEDED", "SUCCEEDED", "SUCCEEDED", "FAILED", "PROCESSING"}

var others = []kind{
	{"counter", false, 100, "stats:page:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "stats:page:"+strconv.Itoa(i)+":views", strconv.Itoa(r.IntN(100000)))
	}},
	{"clock-offset", false, 50, "clock:offset_ms:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "clock:offset_ms:node-"+strconv.Itoa(i), strconv.Itoa(r.IntN(200)-100))
	}},
	{"deadlock-count", false, 50, "deadlock_count:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "deadlock_count:db-"+strconv.Itoa(i), strconv.Itoa(r.IntN(20)))
	}},
	{"rate-limit", false, 100, "ratelimit:user:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "ratelimit:user:"+strconv.Itoa(i), strconv.Itoa(1+r.IntN(60)), "PX", ms(hour))
	}},
	{"cache", false, 150, "cache:product:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "cache:product:"+strconv.Itoa(i), fmt.Sprintf(`{"id":%d,"name":"Product %d","price_cents":%d,"stock":%d}`, i, i,
			r.IntN(100000), r.IntN(500)), "PX", ms(hour))
	}},
	{"session", false, 100, "session:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "session:"+base64.RawURLEncoding.EncodeToString(random(r, 24)), fmt.Sprintf(`{"user_id":%d,"csrf":"%s","roles":["user"]}`,
			r.IntN(1e6), hex.EncodeToString(random(r, 8))), "PX", ms(2*hour))
	}},
	{"session-token", false, 50, "sess:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "sess:"+hex.EncodeToString(random(r, 16)), strconv.Itoa(r.IntN(1e6)), "PX", ms(2*hour))
	}},
	{"status", false, 100, "status:payment:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "status:payment:"+strconv.Itoa(i), statuses[i%len(statuses)], "PX", ms(24*hour))
	}},
	{"user-hash", false, 100, "user:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("HSET", "user:"+strconv.Itoa(i), "name", "User "+strconv.Itoa(i), "email", fmt.Sprintf("user%d@example.com", i), "plan", "pro")
	}},
	{"blocked-by", false, 50, "blocked:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SADD", "blocked:user:"+strconv.Itoa(i)+":blockedBy", strconv.Itoa(r.IntN(1e6)), strconv.Itoa(r.IntN(1e6)))
	}},
	{"csrf", false, 50, "csrf:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "csrf:"+hex.EncodeToString(random(r, 12)), base64.StdEncoding.EncodeToString(random(r, 16)), "PX", ms(2*hour))
	}},
	{"idempotency", false, 50, "idem:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("SET", "idem:"+uuid4(r), `{"status":"SUCCEEDED","response":{"code":201}}`, "PX", ms(24*hour))
	}},
	{"queue", false, 25, "queue:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("RPUSH", "queue:mail:"+strconv.Itoa(i), "job-a", "job-b")
	}},
	{"leaderboard", false, 25, "leaderboard:", func(w *resp, r *rand.Rand, i int) {
		w.cmd("ZADD", "leaderboard:"+strconv.Itoa(i), "10", "alice", "7", "bob")
	}},
}

func ms(v int) string { return strconv.Itoa(v) }

// resp writes commands in the Redis protocol.
type resp struct{ w *bufio.Writer }

func (p *resp) cmd(args ...string) {
	fmt.Fprintf(p.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(p.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// split gives each kind its count of n, by share, the rounding to the last.
func split(kinds []kind, n int) []int {
	out := make([]int, len(kinds))
	total := 0
	for i, k := range kinds {
		out[i] = n * k.share / 1000
		total += out[i]
	}
	out[len(out)-1] += n - total
	return out
}

func main() {
	nLocks := flag.Int("locks", 1_000_000, "lock keys")
	nOthers := flag.Int("others", 200_000, "non-lock keys")
	check := flag.String("check", "", "check this `dupctl inspect lock -o json` output instead of writing")
	flag.Parse()
	if *check != "" {
		if err := checkReport(*check, *nLocks, *nOthers); err != nil {
			fmt.Fprintln(os.Stderr, "check:", err)
			os.Exit(1)
		}
		return
	}
	w := &resp{bufio.NewWriterSize(os.Stdout, 1<<20)}
	r := rand.New(rand.NewPCG(42, 42))
	lc, oc := split(locks, *nLocks), split(others, *nOthers)
	// Interleave the kinds, as a real keyspace is written.
	left := append(slices.Clone(lc), oc...)
	all := append(slices.Clone(locks), others...)
	idx := make([]int, len(all))
	for more := true; more; {
		more = false
		for k := range all {
			if left[k] > 0 {
				all[k].write(w, r, idx[k])
				idx[k]++
				left[k]--
				more = true
			}
		}
	}
	if err := w.w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// report is what -check reads of dupctl's JSON.
type report struct {
	Findings []struct {
		Code, Severity, Subject string
		Evidence                []string
	} `json:"findings"`
	Data struct {
		Scan struct {
			KeysScanned int64 `json:"keys_scanned"`
			Candidates  int64 `json:"candidates"`
			Locks       int64 `json:"locks"`
			Skipped     int64 `json:"skipped_by_shape"`
		} `json:"scan"`
		Families []family `json:"families"`
		Possible []family `json:"possible"`
		Skipped  []family `json:"skipped"`
	} `json:"data"`
}

// family is a key family of dupctl's JSON.
type family struct {
	Template string   `json:"template"`
	Keys     int64    `json:"keys"`
	Examples []string `json:"examples"`
}

// kindOf names the kind a key belongs to.
func kindOf(key string) (kind, bool) {
	for _, k := range append(slices.Clone(locks), others...) {
		if strings.HasPrefix(key, k.prefix) {
			return k, true
		}
	}
	return kind{}, false
}

func checkReport(path string, nLocks, nOthers int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	d := rep.Data
	c := &checker{}
	if d.Scan.KeysScanned != int64(nLocks+nOthers) {
		c.fail("%d keys scanned, want %d", d.Scan.KeysScanned, nLocks+nOthers)
	}
	found, famKind := c.candidateFamilies(d.Families)
	possibleLocks, possibleOthers := possibleFamilies(d.Possible, found)
	// A family is found when its keys are among the candidates; a lock
	// whose value cannot be told from other data (a redislock token with
	// no upper case letter followed by "worker-7": where does the token
	// end?) may be skipped, and is counted - at most one in a thousand.
	lc := split(locks, nLocks)
	var missed int64
	var misses []string
	for i, k := range locks {
		want := int64(lc[i])
		if n := found[k.name]; n != want {
			missed += want - n
			misses = append(misses, fmt.Sprintf("%s %d", k.name, want-n))
		}
		if 1000*found[k.name] < 999*want {
			c.fail("lock family %s: %d keys found among the candidates, want %d", k.name, found[k.name], want)
		}
	}
	if d.Scan.Candidates+d.Scan.Skipped != int64(nLocks+nOthers) || d.Scan.Candidates > int64(nLocks) {
		c.fail("%d candidates and %d skipped by shape, want at most %d and %d in all", d.Scan.Candidates, d.Scan.Skipped, nLocks, nLocks+nOthers)
	}
	// No warn or error finding about a non-lock key.
	warned := 0
	for _, f := range rep.Findings {
		if f.Severity != "warn" && f.Severity != "error" || strings.HasPrefix(f.Subject, "redis ") {
			continue
		}
		warned++
		k, ok := famKind[f.Subject]
		if !ok || !k.lock {
			c.fail("%s %s about %s, which is not a lock family", f.Severity, f.Code, f.Subject)
		}
	}
	if len(c.problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(c.problems), strings.Join(c.problems, "\n  "))
	}
	fmt.Printf("check: %d keys scanned; all %d lock families found, %d of %d locks among the candidates "+
		"(%d of them possible, info only; %d missed: %v); no non-lock key among the confirmed and likely locks, "+
		"%d among the possible ones; %d warn/error findings, all about lock families\n",
		d.Scan.KeysScanned, len(locks), int64(nLocks)-missed, nLocks, possibleLocks, missed, misses, possibleOthers, warned)
	return nil
}

// checker collects what -check finds wrong.
type checker struct{ problems []string }

func (c *checker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// candidateFamilies checks that no candidate family is made of non-lock
// keys or keys from elsewhere; it returns the keys found per lock kind and
// each family's kind.
func (c *checker) candidateFamilies(fams []family) (found map[string]int64, famKind map[string]kind) {
	found, famKind = map[string]int64{}, map[string]kind{}
	for _, f := range fams {
		for _, ex := range f.Examples {
			k, ok := kindOf(ex)
			switch {
			case !ok:
				c.fail("candidate family %s: example %s is not from this keyspace", f.Template, ex)
			case !k.lock:
				c.fail("candidate family %s holds the non-lock key %s (%s)", f.Template, ex, k.name)
			default:
				famKind[f.Template] = k
			}
		}
		found[famKind[f.Template].name] += f.Keys
	}
	return found, famKind
}

// possibleFamilies counts the possible lock families, one info line each:
// a lock family found there is found (and said to be unconfirmed); a
// non-lock one is counted, and allowed (info only).
func possibleFamilies(fams []family, found map[string]int64) (lockKeys, otherKeys int64) {
	for _, f := range fams {
		k, ok := kindOf(f.Examples[0])
		if !ok || !k.lock {
			otherKeys += f.Keys
			continue
		}
		found[k.name] += f.Keys
		lockKeys += f.Keys
	}
	return lockKeys, otherKeys
}
