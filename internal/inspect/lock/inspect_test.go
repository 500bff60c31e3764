package lock_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// redisClient connects to the test Redis and deletes every key under the
// given patterns when the test ends.
func redisClient(t *testing.T, patterns ...string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(testenv.Need(t, testenv.Redis))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() {
		ctx := context.Background()
		for _, p := range patterns {
			iter := c.Scan(ctx, 0, p, 1000).Iterator()
			for iter.Next(ctx) {
				c.Del(ctx, iter.Val())
			}
		}
		c.Close()
	})
	return c
}

func run(t *testing.T, c redis.UniversalClient, o lock.Options) (*findings.Report, *lock.Data) {
	t.Helper()
	res, err := lock.Run(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return res.Report(), &res.Data
}

func family(t *testing.T, d *lock.Data, tmpl string) lock.Family {
	t.Helper()
	for _, f := range d.Families {
		if f.Template == tmpl {
			return f
		}
	}
	var have []string
	for _, f := range d.Families {
		have = append(have, f.Template)
	}
	t.Fatalf("no family %q; have %v", tmpl, have)
	return lock.Family{}
}

// codes lists the finding codes reported about a subject.
func codes(rep *findings.Report, subject string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Subject == subject {
			out = append(out, f.Code)
		}
	}
	slices.Sort(out)
	return out
}

// set writes a string key or fails the test.
func setter(t *testing.T, c *redis.Client) func(k, v string, ttl time.Duration) {
	return func(k, v string, ttl time.Duration) {
		t.Helper()
		if err := c.Set(context.Background(), k, v, ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInspectLocksOfRealLibraries: redsync and bsm/redislock take their
// locks with the real libraries; the other makers' locks are the exact
// bytes their source writes, cited at each. Every lock is found by its
// shape and judged; each problem family gets its finding and only it.
func TestInspectLocksOfRealLibraries(t *testing.T) {
	p := testenv.WordName("makers")
	c := redisClient(t, p+":*", "redisson_lock_token:{"+p+"*", "asynq:{"+p+"}:*", "job-lock:"+p+":*", "bull:"+p+":*")
	ctx := context.Background()
	set := setter(t, c)

	// go-redsync/redsync@5560bd2d mutex.go: genValue is
	// base64.StdEncoding of 16 random bytes; the real library, six orders.
	rs := redsync.New(goredis.NewPool(c))
	for i := 1; i <= 6; i++ {
		m := rs.NewMutex(fmt.Sprintf("%s:redsync:order:%d", p, i), redsync.WithExpiry(time.Minute))
		if err := m.LockContext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// bsm/redislock v0.9.4 redislock.go: the value is the 22-character
	// RawURLEncoding token followed by Options.Metadata; the real library,
	// with JSON metadata and with plain-text metadata.
	locker := redislock.New(c)
	for i := 1; i <= 6; i++ {
		meta := `{"host":"w1"}`
		if i%2 == 0 {
			meta = "worker-7"
		}
		if _, err := locker.Obtain(ctx, fmt.Sprintf("%s:bsm-lock:invoice:%d", p, i), time.Minute,
			&redislock.Options{Metadata: meta}); err != nil {
			t.Fatal(err)
		}
	}
	// redisson/redisson@66863978 RedissonBaseLock.getLockName (client UUID
	// + ":" + thread id) HINCRBYed by RedissonLock's Lua, then PEXPIREd
	// (lockWatchdogTimeout 30000); RedissonFencedLock INCRs
	// redisson_lock_token:{name}. The name holds no "lock".
	c.HSet(ctx, p+":redisson:orders", "6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1")
	c.PExpire(ctx, p+":redisson:orders", 30*time.Second)
	set("redisson_lock_token:{"+p+":redisson:orders}", "3", 0)
	// lukas-krecan/ShedLock@6b4bf7ab InternalRedisLockProvider: key
	// job-lock:<env>:<name>, value ADDED:<ISO time>@<host> (older
	// providers) or ADDED:<ISO time>@<host>:<uuid> (current).
	set("job-lock:"+p+":nightly", "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local", time.Minute)
	set("job-lock:"+p+":hourly", "ADDED:2026-12-02T11:00:00.123Z@web-1.example.internal:3f2504e0-4f89-41d3-9a0c-0305e82c3301", time.Minute)
	// taskforcesh/bullmq@352d3c72 src/classes/worker.ts: the job lock
	// <prefix>:<queue>:<jobId>:lock holds `${this.id}:${tokenPostfix++}`
	// (id = randomUUID()), PX lockDuration (30000).
	set("bull:"+p+":123:lock", "0a1b2c3d-1234-4abc-9def-0123456789ab:7", 30*time.Second)
	// mhenrixon/sidekiq-unique-jobs@4e57de89 lua/lock.lua: HSET
	// <digest>:LOCKED <jid> <time>, no PEXPIRE without lock_ttl; the
	// digest is <prefix>:<md5> (lock_digest.rb).
	c.HSet(ctx, p+":9e107d9d372bb6826bd81d3542a419d6:LOCKED", "fe3a4bd1c2e9a8b7c6d5e4f3", "1764590400.123")
	// hibiken/asynq@785bb720 internal/base/base.go UniqueKey and rdb.go
	// enqueueUniqueCmd: SET asynq:{<queue>}:unique:<type>:<md5> <task id> NX EX.
	set("asynq:{"+p+"}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6", "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", time.Hour)
	// spring-projects/spring-integration@0000434f RedisLockRegistry.java:
	// key registryKey + ':' + path, value the registry's clientId
	// (UUID.randomUUID().toString()) on every lock it holds, PX expireAfter
	// (60000 by default).
	for i := 1; i <= 3; i++ {
		set(fmt.Sprintf("%s:billing-locks:account-%d", p, i), "7c9e6679-7425-40de-944b-e07fc1f90ae7", time.Minute)
	}
	// What goes wrong, one family each (hand-made locks name themselves).
	for i := 1; i <= 3; i++ {
		// constant, no TTL: named with --lock-pattern
		set(fmt.Sprintf("%s:lock:flag:order:%d", p, i), "1", 0)
		set(fmt.Sprintf("%s:lock:host:order:%d", p, i), fmt.Sprintf("web-%d:31337", i), time.Minute)                 // host:pid
		set(fmt.Sprintf("%s:lock:job:%s", p, uuid4(i)), fmt.Sprintf("tok-%d-Xk3_9aQzP1mN8bV2cL7wR", i), time.Minute) // per-run key
		set(fmt.Sprintf("%s:lock:fenced:order:%d", p, i), uuid4(i), time.Minute)
		set(fmt.Sprintf("%s:lock:long:order:%d", p, i), uuid4(i), 3*time.Hour)
	}
	set(p+":lock:fenced:order:1:fence", "12", 0)
	for i := 1; i <= 9; i++ {
		set(fmt.Sprintf("%s:lock:ttl:order:%d", p, i), uuid4(i), time.Minute)
	}
	set(p+":lock:ttl:order:10", uuid4(10), 48*time.Hour)

	rep, d := run(t, c, lock.Options{LockPatterns: []string{p + ":lock:flag:*"}, Top: 100, MaxTTL: time.Hour,
		Patterns: []string{p + ":*", "redisson_lock_token:{" + p + "*", "asynq:{" + p + "}:*", "job-lock:" + p + ":*", "bull:" + p + ":*"}})

	for tmpl, want := range map[string]struct{ maker, class string }{
		p + ":redsync:order:{int}":                    {makers.Redsync, judge.ClassBusiness},
		p + ":bsm-lock:invoice:{int}":                 {makers.Redislock, judge.ClassBusiness},
		p + ":redisson:orders":                        {makers.Redisson, judge.ClassConstant},
		"job-lock:" + p + ":nightly":                  {makers.ShedLock, judge.ClassConstant},
		"job-lock:" + p + ":hourly":                   {makers.ShedLock, judge.ClassConstant},
		"bull:" + p + ":{int}:lock":                   {makers.BullMQ, judge.ClassByDesign},
		p + ":{hex32}:LOCKED":                         {makers.Sidekiq, judge.ClassHashed},
		"asynq:{" + p + "}:unique:email:send:{hex32}": {makers.Asynq, judge.ClassHashed},
		p + ":billing-locks:{id}":                     {makers.Spring, judge.ClassBusiness},
		p + ":lock:job:{uuid}":                        {makers.SetNXPX, judge.ClassPerRun},
	} {
		f := family(t, d, tmpl)
		if f.Makers[want.maker] != f.Keys || f.KeyClass != want.class || f.Confidence < lock.DefaultMinConfidence {
			t.Errorf("%s: makers %v class %s confidence %.2f, want all %s and %s, confident", tmpl, f.Makers, f.KeyClass, f.Confidence,
				want.maker, want.class)
		}
	}
	for subject, want := range map[string][]string{
		p + ":redsync:order:{int}":       nil,
		p + ":bsm-lock:invoice:{int}":    nil,
		p + ":lock:flag:order:{int}":     {"LOCK_NO_TTL", "LOCK_TOKEN_CONSTANT"},
		p + ":lock:host:order:{int}":     {"LOCK_TOKEN_HOST"},
		p + ":billing-locks:{id}":        {"LOCK_TOKEN_SHARED"},
		p + ":lock:job:{uuid}":           {"LOCK_KEY_RANDOM_ID"},
		p + ":lock:ttl:order:{int}":      {"LOCK_TTL_OUTLIER"},
		p + ":lock:long:order:{int}":     {"LOCK_TTL_LONG"},
		p + ":{hex32}:LOCKED":            {"LOCK_NO_TTL"},
		p + ":lock:fenced:order:{int}":   nil,
		"job-lock:" + p + ":nightly":     {"LOCK_TOKEN_HOST"},
		"job-lock:" + p + ":hourly":      nil,
		"bull:" + p + ":{int}:lock":      nil,
		p + ":redisson:orders":           nil,
		p + ":lock:fenced:order:1:fence": nil,
	} {
		if got := codes(rep, subject); !slices.Equal(got, want) {
			t.Errorf("%s: findings %v, want %v", subject, got, want)
		}
	}
	if f := family(t, d, p+":lock:fenced:order:{int}"); f.Fencing != "present" {
		t.Errorf("fenced family: fencing %s, want present", f.Fencing)
	}
	if f := family(t, d, p+":redisson:orders"); f.Fencing != "present" {
		t.Errorf("redisson fenced lock: fencing %s, want present", f.Fencing)
	}
	// A TTL of 1m, however long the test took to get here: granted TTL is
	// PTTL plus idle time (within the histogram's ~9%), never below the
	// remaining TTL.
	if f := family(t, d, p+":redsync:order:{int}"); f.Fencing != "absent" || f.Owners["random"] != 6 || f.TTL.NoTTL != 0 ||
		f.TTL.Histogram[2].Count != 6 || f.TTL.MedianMs < f.TTL.MinMs || f.TTL.MedianMs > f.TTL.MaxMs || f.TTL.GrantedMedianMs < 54_000 ||
		f.TTL.GrantedMedianMs > 66_000 ||
		!strings.HasPrefix(f.TTL.GrantedFrom, "pttl + idle time") {
		t.Errorf("redsync family: %+v", f)
	}
	for _, f := range d.Families {
		if f.TTL.GrantedMedianMs < f.TTL.MedianMs {
			t.Errorf("%s: granted median %dms below the remaining median %dms", f.Template, f.TTL.GrantedMedianMs, f.TTL.MedianMs)
		}
	}
	metas := map[string]bool{}
	for _, l := range d.Locks {
		if strings.HasPrefix(l.Key, p+":bsm-lock:") {
			metas[l.Metadata] = true
			if len(l.Owner) != 22 || l.OwnerClass != "random" {
				t.Errorf("redislock %s: owner %q (%s) metadata %q", l.Key, l.Owner, l.OwnerClass, l.Metadata)
			}
		}
		if l.Key == "job-lock:"+p+":nightly" && l.AcquiredAt != "2021-05-12T13:31:45Z" {
			t.Errorf("shedlock acquired_at %q", l.AcquiredAt)
		}
	}
	if !metas[`{"host":"w1"}`] || !metas["worker-7"] || len(metas) != 2 {
		t.Errorf("redislock metadata read %v, want the JSON and the plain text", metas)
	}
	// 48 keys: 46 locks, a fence counter and a Redisson fencing counter
	// (lock companions, skipped by shape).
	if d.Scan.Repeats != 0 || d.Scan.KeysMatched != 48 || d.Scan.Candidates != 46 || d.Scan.Locks != 46 || d.Scan.Skipped != 2 {
		t.Errorf("scan stats %+v", d.Scan)
	}
}

func uuid4(i int) string { return fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", 0x8d0c5a00+i) }

// TestDiscoveryByShape runs on a keyspace that was not built for dupctl:
// locks beside the data that shares a Redis with them - counters and
// caches whose names contain "lock" (clock:offset_ms, deadlock_count,
// user:42:blockedBy, stats:lock_wait_ms), sessions, user hashes, status
// caches holding SUCCEEDED, CSRF tokens, rate limiters, lists and sorted
// sets - with a Redisson lock under a name without "lock". Every lock is
// found; nothing else is called a lock, at any severity; what was skipped
// is reported with why; and considering every key of the database (All)
// changes none of it.
func TestDiscoveryByShape(t *testing.T) {
	p := testenv.WordName("shape")
	c := testenv.RedisDB(t) // every key is read once: no other test's keys
	ctx := context.Background()
	set := setter(t, c)

	// The locks.
	for _, k := range []string{p + ":orders:42", p + ":orders:43"} { // Redisson RLock (see above), no "lock" in the name
		c.HSet(ctx, k, "6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1")
		c.PExpire(ctx, k, 30*time.Second)
	}
	set(p+":payment:order:7", "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", 30*time.Second) // the safe flow's SET NX PX, no "lock" either
	set(p+":lock:report:1", "1", 0)                                                   // a hand-made lock without TTL
	// payment:order:7 and lock:report:1 are possible locks: info only
	locks := []string{p + ":orders:42", p + ":orders:43"}

	// The rest.
	set(p+":clock:offset_ms", "-12", 0)
	set(p+":deadlock_count", "3", 0)
	c.SAdd(ctx, p+":user:42:blockedBy", "43", "44")
	set(p+":user:43:blockedBy", "17", 0)
	set(p+":stats:lock_wait_ms", "250", 0)
	set(p+":cache:lock_screen", `{"enabled":true,"timeout_s":300}`, time.Hour)
	set(p+":session:cHUDWMGAO65f8ofCpbiMKgo3jVRl-b9C", `{"user_id":42,"roles":["user"]}`, 30*time.Minute)
	set(p+":sess:1f22d598dd93cd43d99afd0c61ad3ea9", "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", 2*time.Hour)
	c.HSet(ctx, p+":user:42", "name", "Ada", "email", "ada@example.com", "plan", "pro")
	c.HSet(ctx, p+":user:44", "name", "Bob", "email", "bob@example.com", "plan", "free")
	for i, s := range []string{"SUCCEEDED", "FAILED", "SUCCEEDED"} {
		set(fmt.Sprintf("%s:status:payment:%d", p, i+1), s, 24*time.Hour)
	}
	set(p+":csrf:1669fad0ad5c6e0cd194ae34", "MCiQIxzoyJVISKvLAwhztw==", 2*time.Hour) // redsync's token shape
	set(p+":ratelimit:user:42", "17", time.Minute)
	set(p+":idem:52cd2f57-8c67-4eac-9184-c5c791114cd5", `{"status":"SUCCEEDED","response":{"code":201}}`, 24*time.Hour)
	set(p+":feature:dark_mode", "true", 0)
	c.RPush(ctx, p+":queue:mail", "a", "b")
	c.ZAdd(ctx, p+":leaderboard", redis.Z{Score: 10, Member: "ada"})
	const others = 19

	check := func(name string, rep *findings.Report, d *lock.Data) {
		t.Helper()
		found := map[string]bool{}
		for _, l := range d.Locks {
			if strings.HasPrefix(l.Key, p+":") {
				found[l.Key] = true
			}
		}
		for _, k := range locks {
			if !found[k] {
				t.Errorf("%s: lock %s not found; locks %+v", name, k, d.Locks)
			}
		}
		var candidates int64
		mine := map[string]bool{}
		for _, f := range d.Families {
			if strings.HasPrefix(f.Template, p+":") {
				candidates += f.Keys
				mine[f.Template] = true
			}
		}
		if candidates != int64(len(locks)) {
			t.Errorf("%s: %d candidates under the prefix, want the %d locks: %+v", name, candidates, len(locks), d.Families)
		}
		var skipped int64
		reasons := map[string]map[string]int64{}
		for _, f := range d.Skipped {
			if strings.HasPrefix(f.Template, p+":") {
				skipped += f.Keys
				reasons[strings.TrimPrefix(f.Template, p)] = f.Reasons
				if len(f.Examples) == 0 {
					t.Errorf("%s: skipped family %s without example names", name, f.Template)
				}
			}
		}
		if skipped != others {
			t.Errorf("%s: %d keys skipped by shape under the prefix, want %d", name, skipped, others)
		}
		for tmpl, why := range map[string]string{
			":deadlock_count":       "number value",
			":user:{int}":           "hash of named fields",
			":user:{int}:blockedBy": "not a string or hash",
			":status:payment:{int}": "status word value",
			":session:{base64}":     "a session",
			":clock:offset_ms":      "number value",
			":csrf:{hex24}":         "a token cache",
			":stats:lock_wait_ms":   "number value",
			":cache:lock_screen":    "document value",
		} {
			if reasons[tmpl][why] == 0 {
				t.Errorf("%s: skipped %s: reasons %v, want %q", name, tmpl, reasons[tmpl], why)
			}
		}
		for _, f := range rep.Findings {
			// A possible family's defects are info, worded as such, with
			// the pattern that would confirm it (issue 42).
			if strings.HasPrefix(f.Subject, p+":") && !mine[f.Subject] && f.Code != "LOCK_POSSIBLE_FAMILY" &&
				(f.Severity != findings.Info || !strings.HasPrefix(f.Message, "if these are locks (possible; confirm with")) {
				t.Errorf("%s: %s %s about %s, which holds no lock: %s", name, f.Severity, f.Code, f.Subject, f.Message)
			}
		}
		// Shape only: one info line each, and the defects that do not
		// depend on what wrote them (1 without a TTL) at info.
		for tmpl, want := range map[string][]string{
			p + ":lock:report:{int}":   {"LOCK_NO_TTL", "LOCK_POSSIBLE_FAMILY", "LOCK_TOKEN_CONSTANT"},
			p + ":payment:order:{int}": {"LOCK_POSSIBLE_FAMILY"},
		} {
			if got := codes(rep, tmpl); !slices.Equal(got, want) {
				t.Errorf("%s: the possible lock family %s: %v, want %v", name, tmpl, got, want)
			}
		}
	}
	rep, d := run(t, c, lock.Options{Patterns: []string{p + ":*"}, Top: 100})
	check("pattern", rep, d)
	rep, d = run(t, c, lock.Options{All: true, Top: 1000})
	check("every key", rep, d)
	// Named by the user, they are locks and judged.
	rep, _ = run(t, c, lock.Options{Patterns: []string{p + ":*"}, LockPatterns: []string{p + ":lock:report:*", p + ":payment:*"}})
	if got := codes(rep, p+":lock:report:{int}"); !slices.Equal(got, []string{"LOCK_NO_TTL", "LOCK_TOKEN_CONSTANT"}) {
		t.Errorf("the lock without TTL, confirmed: %v", got)
	}
	if got := codes(rep, p+":payment:order:{int}"); len(got) != 0 {
		t.Errorf("the plain SET NX PX lock, confirmed: %v", got)
	}
}

func TestInspectOneKey(t *testing.T) {
	p := testenv.WordName("onekey")
	c := redisClient(t, p+":*")
	ctx := context.Background()
	c.Set(ctx, p+":lock:order:42", "locked", 0)
	c.Set(ctx, p+":lock:order:42:fence", "7", 0)
	rep, d := run(t, c, lock.Options{Key: p + ":lock:order:42", Top: 1, LockPatterns: []string{p + ":lock:*"}})
	if len(d.Locks) != 1 || d.Locks[0].OwnerClass != "constant" || d.Locks[0].PTTLMs != -1 || d.Families[0].Fencing != "present" {
		t.Fatalf("one key: %+v %+v", d.Locks, d.Families)
	}
	if got := codes(rep, p+":lock:order:{int}"); !slices.Equal(got, []string{"LOCK_NO_TTL", "LOCK_TOKEN_CONSTANT"}) {
		t.Errorf("findings %v", got)
	}
	// A key that is no lock, shown in full all the same: its confidence
	// says so, and nothing is judged of it.
	c.Set(ctx, p+":deadlock_count", "3", 0)
	rep, d = run(t, c, lock.Options{Key: p + ":deadlock_count", Top: 1})
	if len(d.Locks) != 1 || d.Locks[0].Confidence >= 0.5 || len(d.Locks[0].Problems) != 0 || len(codes(rep, p+":deadlock_count")) != 0 ||
		d.Scan.Skipped != 1 {
		t.Errorf("a counter shown with --key: %+v, findings %v", d.Locks, rep.Findings)
	}
	if _, err := lock.Run(ctx, c, lock.Options{Key: p + ":missing"}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing key: %v", err)
	}
}

// TestBinaryKeyNameKeepsItsBytes: a lock key that is not UTF-8 (a binary
// session or entity id in its name) carries its exact bytes in
// key_base64, since -o json writes each such byte of key as U+FFFD.
func TestBinaryKeyNameKeepsItsBytes(t *testing.T) {
	p := testenv.WordName("binkey")
	c := redisClient(t, p+"*")
	key := p + "\xff\xfe:lock:order-1"
	c.Set(context.Background(), key, "b3f0c2a1-9d4e-4c6b-8f1a-2e7d5c9b0a13", time.Minute)
	_, d := run(t, c, lock.Options{Patterns: []string{p + "*"}, Top: 5})
	if len(d.Locks) != 1 {
		t.Fatalf("locks %+v, want the one key", d.Locks)
	}
	raw, err := json.Marshal(d.Locks[0])
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Key       string `json:"key"`
		KeyBase64 string `json:"key_base64"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := base64.StdEncoding.DecodeString(back.KeyBase64)
	if err != nil || string(got) != key {
		t.Fatalf("key_base64 %q decodes to %q (%v), want %q; key %q", back.KeyBase64, got, err, key, back.Key)
	}
	// A key that is UTF-8 needs no second field.
	c.Set(context.Background(), p+":lock:order-2", "b3f0c2a1-9d4e-4c6b-8f1a-2e7d5c9b0a14", time.Minute)
	_, d = run(t, c, lock.Options{Key: p + ":lock:order-2", Top: 1})
	if len(d.Locks) != 1 || d.Locks[0].KeyBase64 != "" {
		t.Fatalf("a UTF-8 key: %+v", d.Locks)
	}
}

// TestSettingsFromRealInfo: what dupctl reports of the server matches
// what the server says (the test Redis runs without AOF, CONTRIBUTING.md).
func TestSettingsFromRealInfo(t *testing.T) {
	p := testenv.UniqueName("settings")
	c := redisClient(t)
	rep, d := run(t, c, lock.Options{Patterns: []string{p + ":*"}})
	ctx := context.Background()
	info, err := c.Info(ctx, "memory", "persistence", "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	s := d.Servers[0]
	if !strings.Contains(info, "maxmemory_policy:"+s.Policy+"\r\n") || !strings.Contains(info, "redis_version:"+s.Version+"\r\n") ||
		s.Info != "ok" {
		t.Errorf("server %+v disagrees with INFO", s)
	}
	aofOff := strings.Contains(info, "aof_enabled:0")
	if got := slices.Contains(codes(rep, "redis "+s.Node), "LOCK_REDIS_PERSISTENCE"); got != aofOff {
		t.Errorf("LOCK_REDIS_PERSISTENCE reported %v, aof off %v", got, aofOff)
	}
	if len(d.Families) != 0 || d.Scan.KeysMatched != 0 || len(d.NotChecked) != 0 || !slices.Contains(rep.Checks, "LOCK_REDIS_EVICTION") {
		t.Errorf("an empty pattern found %+v, not checked %v", d.Scan, d.NotChecked)
	}
}
