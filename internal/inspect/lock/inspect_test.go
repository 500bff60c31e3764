package lock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/dupctl/dupctl/internal/inspect/lock"
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
	rep, err := lock.Inspect(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep, rep.Data.(*lock.Data)
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

func TestInspectLocksOfRealLibraries(t *testing.T) {
	p := testenv.WordName("lock")
	c := redisClient(t, p+":*", "redisson_lock_token:{"+p+"*", "asynq:{"+p+"}:*", "job-lock:"+p+":*")
	ctx := context.Background()

	// redsync, the real library: six orders.
	rs := redsync.New(goredis.NewPool(c))
	for i := 1; i <= 6; i++ {
		m := rs.NewMutex(fmt.Sprintf("%s:redsync:order:%d", p, i), redsync.WithExpiry(time.Minute))
		if err := m.LockContext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// bsm/redislock, the real library, with metadata after the token.
	locker := redislock.New(c)
	for i := 1; i <= 6; i++ {
		if _, err := locker.Obtain(ctx, fmt.Sprintf("%s:bsm:invoice:%d", p, i), time.Minute, &redislock.Options{Metadata: `{"host":"w1"}`}); err != nil {
			t.Fatal(err)
		}
	}
	// The exact bytes the other libraries write (maker.go cites each source).
	set := func(k, v string, ttl time.Duration) {
		if err := c.Set(ctx, k, v, ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.HSet(ctx, p+":redisson:myLock", "6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1")
	c.PExpire(ctx, p+":redisson:myLock", 30*time.Second)
	set("redisson_lock_token:{"+p+":redisson:myLock}", "3", 0)
	set("job-lock:"+p+":nightly", "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local", time.Minute)
	set(p+":emails:123:lock", "0a1b2c3d-1234-4abc-9def-0123456789ab:7", 30*time.Second)
	c.HSet(ctx, p+":9e107d9d372bb6826bd81d3542a419d6:LOCKED", "fe3a4bd1c2e9a8b7c6d5e4f3", "1764590400.123")
	set("asynq:{"+p+"}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6", "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", time.Hour)
	// What goes wrong, one family each.
	for i := 1; i <= 3; i++ {
		set(fmt.Sprintf("%s:flag:order:%d", p, i), "1", 0)                                                      // constant, no TTL
		set(fmt.Sprintf("%s:host:order:%d", p, i), fmt.Sprintf("web-%d:31337", i), time.Minute)                 // host:pid
		set(fmt.Sprintf("%s:shared:order:%d", p, i), "3f2504e0-4f89-41d3-9a0c-0305e82c3301", time.Minute)       // one process id
		set(fmt.Sprintf("%s:job:%s", p, uuid4(i)), fmt.Sprintf("tok-%d-Xk3_9aQzP1mN8bV2cL7wR", i), time.Minute) // per-run key
		set(fmt.Sprintf("%s:fenced:order:%d", p, i), uuid4(i), time.Minute)
		set(fmt.Sprintf("%s:long:order:%d", p, i), uuid4(i), 3*time.Hour)
	}
	set(p+":fenced:order:1:fence", "12", 0)
	for i := 1; i <= 9; i++ {
		set(fmt.Sprintf("%s:ttl:order:%d", p, i), uuid4(i), time.Minute)
	}
	set(p+":ttl:order:10", uuid4(10), 48*time.Hour)

	rep, d := run(t, c, lock.Options{Patterns: []string{p + ":*", "redisson_lock_token:{" + p + "*", "asynq:{" + p + "}:*", "job-lock:" + p + ":*"},
		Top: 100, MaxTTL: time.Hour})

	for tmpl, want := range map[string]struct{ maker, class string }{
		p + ":redsync:order:{int}":                    {lock.MakerRedsync, lock.ClassBusiness},
		p + ":bsm:invoice:{int}":                      {lock.MakerRedislock, lock.ClassBusiness},
		p + ":redisson:myLock":                        {lock.MakerRedisson, lock.ClassConstant},
		"job-lock:" + p + ":nightly":                  {lock.MakerShedLock, lock.ClassConstant},
		p + ":emails:{int}:lock":                      {lock.MakerBullMQ, lock.ClassByDesign},
		p + ":{hex32}:LOCKED":                         {lock.MakerSidekiq, lock.ClassHashed},
		"asynq:{" + p + "}:unique:email:send:{hex32}": {lock.MakerAsynq, lock.ClassHashed},
		p + ":job:{uuid}":                             {lock.MakerSetNXPX, lock.ClassPerRun},
	} {
		f := family(t, d, tmpl)
		if f.Makers[want.maker] != f.Keys || f.KeyClass != want.class {
			t.Errorf("%s: makers %v class %s, want all %s and %s", tmpl, f.Makers, f.KeyClass, want.maker, want.class)
		}
	}
	for subject, want := range map[string][]string{
		p + ":redsync:order:{int}":   nil,
		p + ":bsm:invoice:{int}":     nil,
		p + ":flag:order:{int}":      {"LOCK_NO_TTL", "LOCK_TOKEN_CONSTANT"},
		p + ":host:order:{int}":      {"LOCK_TOKEN_HOST"},
		p + ":shared:order:{int}":    {"LOCK_TOKEN_SHARED"},
		p + ":job:{uuid}":            {"LOCK_KEY_RANDOM_ID"},
		p + ":ttl:order:{int}":       {"LOCK_TTL_OUTLIER"},
		p + ":long:order:{int}":      {"LOCK_TTL_LONG"},
		p + ":{hex32}:LOCKED":        {"LOCK_NO_TTL"},
		"job-lock:" + p + ":nightly": {"LOCK_TOKEN_HOST"},
	} {
		if got := codes(rep, subject); !slices.Equal(got, want) {
			t.Errorf("%s: findings %v, want %v", subject, got, want)
		}
	}
	if f := family(t, d, p+":fenced:order:{int}"); f.Fencing != "present" {
		t.Errorf("fenced family: fencing %s, want present", f.Fencing)
	}
	if f := family(t, d, p+":redisson:myLock"); f.Fencing != "present" {
		t.Errorf("redisson fenced lock: fencing %s, want present", f.Fencing)
	}
	// A TTL of 1m, however long the test took to get here: granted TTL is
	// PTTL plus idle time (within the histogram's ~9%).
	if f := family(t, d, p+":redsync:order:{int}"); f.Fencing != "absent" || f.Owners["random"] != 6 || f.TTL.NoTTL != 0 ||
		f.TTL.Histogram[2].Count != 6 || f.TTL.MedianMs < f.TTL.MinMs || f.TTL.MedianMs > f.TTL.MaxMs || f.TTL.GrantedMedianMs < 54_000 || f.TTL.GrantedMedianMs > 66_000 {
		t.Errorf("redsync family: %+v", f)
	}
	for _, l := range d.Locks {
		if strings.HasPrefix(l.Key, p+":bsm:") && (l.Metadata != `{"host":"w1"}` || len(l.Owner) != 22) {
			t.Errorf("redislock %s: owner %q metadata %q", l.Key, l.Owner, l.Metadata)
		}
		if l.Key == "job-lock:"+p+":nightly" && l.AcquiredAt != "2021-05-12T13:31:45Z" {
			t.Errorf("shedlock acquired_at %q", l.AcquiredAt)
		}
	}
	if d.Scan.Repeats != 0 || d.Scan.KeysMatched != 47 || d.Scan.Locks != 45 {
		t.Errorf("scan stats %+v", d.Scan)
	}
}

func uuid4(i int) string { return fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", 0x8d0c5a00+i) }

func TestInspectOneKey(t *testing.T) {
	p := testenv.WordName("onekey")
	c := redisClient(t, p+":*")
	ctx := context.Background()
	c.Set(ctx, p+":order:42", "locked", 0)
	c.Set(ctx, p+":order:42:fence", "7", 0)
	rep, d := run(t, c, lock.Options{Key: p + ":order:42", Top: 1})
	if len(d.Locks) != 1 || d.Locks[0].OwnerClass != "constant" || d.Locks[0].PTTLMs != -1 || d.Families[0].Fencing != "present" {
		t.Fatalf("one key: %+v %+v", d.Locks, d.Families)
	}
	if got := codes(rep, p+":order:{int}"); !slices.Equal(got, []string{"LOCK_NO_TTL", "LOCK_TOKEN_CONSTANT"}) {
		t.Errorf("findings %v", got)
	}
	if _, err := lock.Inspect(ctx, c, lock.Options{Key: p + ":missing"}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing key: %v", err)
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
	if !strings.Contains(info, "maxmemory_policy:"+s.Policy+"\r\n") || !strings.Contains(info, "redis_version:"+s.Version+"\r\n") {
		t.Errorf("server %+v disagrees with INFO", s)
	}
	aofOff := strings.Contains(info, "aof_enabled:0")
	if got := len(codes(rep, "redis "+s.Node)) > 0 && slices.Contains(codes(rep, "redis "+s.Node), "LOCK_REDIS_PERSISTENCE"); got != aofOff {
		t.Errorf("LOCK_REDIS_PERSISTENCE reported %v, aof off %v", got, aofOff)
	}
	if len(d.Families) != 0 || d.Scan.KeysMatched != 0 {
		t.Errorf("an empty pattern found %+v", d.Scan)
	}
}
