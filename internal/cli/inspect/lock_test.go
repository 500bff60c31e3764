package inspect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/cli/inspect"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// dupctl runs the whole command line in-process, as a user would.
func dupctl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	code = cli.Run(context.Background(), args, ios)
	return code, out.String(), errOut.String()
}

type jsonReport struct {
	Findings []struct {
		Code, Subject string
	} `json:"findings"`
	Checks []struct {
		Code string
	} `json:"checks"`
	Data lock.Data `json:"data"`
}

func parse(t *testing.T, stdout string) jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("JSON: %v\n%s", err, stdout)
	}
	return r
}

func TestLockFlags(t *testing.T) {
	f := cmdutil.NewFactory(func() *iostreams.IOStreams { ios, _, _, _ := iostreams.Test(); return ios }())
	var got *inspect.LockOptions
	capture := func(args ...string) error {
		got = nil
		cmd := inspect.NewCmdLock(f, func(o *inspect.LockOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&strings.Builder{})
		cmd.SetErr(&strings.Builder{})
		return cmd.Execute()
	}
	if err := capture(); err != nil || got.Lock.Count != 1000 || got.Lock.Top != 20 || got.Lock.Observe != 1 || len(got.Lock.Patterns) != 0 {
		t.Fatalf("defaults: %v %+v", err, got)
	}
	if err := capture("--pattern", "a:*", "--pattern", "b:*", "--observe", "3", "--interval", "10s", "--idle", "1m"); err != nil ||
		!slices.Equal(got.Lock.Patterns, []string{"a:*", "b:*"}) || got.Lock.Observe != 3 || got.Lock.Interval != 10*time.Second ||
		got.Lock.IdleAfter != time.Minute {
		t.Fatalf("flags: %v %+v", err, got)
	}
	for _, bad := range [][]string{
		{"--all", "--pattern", "x"}, {"--key", ""}, {"--key", "k", "--all"}, {"--count", "0"}, {"--observe", "0"},
		{"--observe", "2", "--interval", "10ms"}, {"--idle", "1m"}, {"--pattern", ""}, {"extra"},
	} {
		if err := capture(bad...); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	code, _, stderr := dupctl(t, "inspect", "lock", "--all", "--pattern", "x", "--redis-url", "redis://127.0.0.1:1")
	if code != 2 || !strings.Contains(stderr, "--all and --pattern exclude each other") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, _, stderr = dupctl(t, "inspect", "lock", "--redis-url", "redis://:s3cret@127.0.0.1:1/0")
	if code != 3 || strings.Contains(stderr, "s3cret") || !strings.Contains(stderr, "cannot reach Redis") {
		t.Errorf("unreachable: exit %d: %s", code, stderr)
	}
}

func adminClient(t *testing.T, prefix string) (*redis.Client, string) {
	t.Helper()
	url := testenv.Need(t, testenv.Redis)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		c.Close()
	})
	return c, url
}

// aclUser creates a Redis ACL user with the given rules for one test and
// returns its URL (same server and database as url).
func aclUser(t *testing.T, c *redis.Client, url, name string, rules ...string) string {
	t.Helper()
	ctx := context.Background()
	args := append([]any{"ACL", "SETUSER", name, "reset", "on", ">pw-" + name, "resetchannels"}, toAny(rules)...)
	if err := c.Do(ctx, args...).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Do(context.Background(), "ACL", "DELUSER", name) })
	return strings.Replace(url, "redis://", fmt.Sprintf("redis://%s:pw-%s@", name, name), 1)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestReadOnlyACLUser runs the whole command as a Redis ACL user that may
// only read (-@all +@read: no PING, no INFO, no CONFIG, no CLIENT), and
// it succeeds: the login is not taken for an unreachable server, the
// settings checks say "not checked" instead of failing the run, and the
// user cannot have written anything.
func TestReadOnlyACLUser(t *testing.T) {
	p := testenv.WordName("acl")
	c, url := adminClient(t, p)
	ctx := context.Background()
	ro := aclUser(t, c, url, p+"_reader", "~*", "-@all", "+@read")
	c.Set(ctx, p+":lock:order:1", "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", time.Minute)
	c.Set(ctx, p+":lock:order:2", "locked", 0)
	c.HSet(ctx, p+":orders:7", "6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1") // Redisson
	c.PExpire(ctx, p+":orders:7", time.Minute)
	c.Set(ctx, p+":lock:order:1:fence", "4", 0)
	c.Set(ctx, p+":deadlock_count", "3", 0)

	reader := redis.NewClient(func() *redis.Options { o, _ := redis.ParseURL(ro); return o }())
	defer reader.Close()
	if err := reader.Set(ctx, p+":intruder", "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("the reader could write: %v", err)
	}

	code, stdout, stderr := dupctl(t, "inspect", "lock", "--redis-url", ro, "--pattern", p+":*", "-o", "json")
	if code != 1 { // 1: the constant lock without TTL fails --fail-on error
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	r := parse(t, stdout)
	if r.Data.Scan.KeysMatched != 5 || r.Data.Scan.Candidates != 3 || r.Data.Servers[0].Info != "denied" ||
		strings.Contains(stdout, "pw-"+p) {
		t.Errorf("as a reader: scan %+v servers %+v", r.Data.Scan, r.Data.Servers)
	}
	if len(r.Data.NotChecked) != 1 || !slices.Contains(r.Data.NotChecked[0].Checks, "LOCK_REDIS_EVICTION") ||
		!strings.Contains(r.Data.NotChecked[0].Why, "INFO") || !strings.Contains(r.Data.NotChecked[0].Why, "+info") {
		t.Errorf("not checked: %+v", r.Data.NotChecked)
	}
	var checked []string
	for _, ch := range r.Checks {
		checked = append(checked, ch.Code)
	}
	if slices.Contains(checked, "LOCK_REDIS_EVICTION") || !slices.Contains(checked, "LOCK_NO_TTL") {
		t.Errorf("checks %v: want LOCK_NO_TTL and not LOCK_REDIS_EVICTION (INFO refused)", checked)
	}
	code, stdout, stderr = dupctl(t, "inspect", "lock", "--redis-url", ro, "--pattern", p+":*")
	if code != 1 || !strings.Contains(stdout,
		"not checked: LOCK_REDIS_EVICTION, LOCK_REDIS_EVICTED_KEYS, LOCK_REDIS_REPLICA, LOCK_REDIS_PERSISTENCE: Redis refused INFO") {
		t.Errorf("table as a reader: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = dupctl(t, "inspect", "lock", "--redis-url", ro, "--key", p+":lock:order:1", "-v")
	if code != 0 || !strings.Contains(stdout, "fencing:") || !strings.Contains(stdout, "present") {
		t.Errorf("--key as a reader: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := reader.Get(ctx, p+":intruder").Result(); err != redis.Nil {
		t.Errorf("a key appeared: %v", err)
	}
}

// TestACLRefusalsNamed: what a narrower ACL user lacks is named as a
// permission with the command that needed it, never "cannot reach": a
// database other than 0 needs SELECT (exit 3), and keys outside the
// user's key patterns are counted as not inspected while the run goes on.
func TestACLRefusalsNamed(t *testing.T) {
	p := testenv.WordName("refused")
	c, url := adminClient(t, p)
	ctx := context.Background()
	ro := aclUser(t, c, url, p+"_reader", "~*", "-@all", "+@read")
	code, _, stderr := dupctl(t, "inspect", "lock", "--redis-url", strings.TrimSuffix(ro, "/0")+"/1", "--pattern", p+":*")
	if code != 3 || strings.Contains(stderr, "cannot reach") || !strings.Contains(stderr, "refused SELECT to this ACL user") ||
		!strings.Contains(stderr, "grant the ACL user +select") || strings.Contains(stderr, "pw-") {
		t.Errorf("database 1 without SELECT: exit %d: %s", code, stderr)
	}

	narrow := aclUser(t, c, url, p+"_narrow", "~"+p+":lock:*", "-@all", "+@read")
	c.Set(ctx, p+":lock:order:1", "locked", 0)
	c.Set(ctx, p+":other:1", "x", 0)
	code, stdout, stderr := dupctl(t, "inspect", "lock", "--redis-url", narrow, "--pattern", p+":*", "--lock-pattern", p+":lock:*",
		"-o", "json")
	if code != 1 {
		t.Fatalf("narrow user: exit %d: %s", code, stderr)
	}
	r := parse(t, stdout)
	if r.Data.Scan.Denied != 1 || r.Data.Scan.Candidates != 1 || len(r.Data.Notes) != 1 ||
		!strings.Contains(r.Data.Notes[0], "1 keys not inspected") {
		t.Errorf("narrow user: scan %+v notes %v", r.Data.Scan, r.Data.Notes)
	}
	code, _, stderr = dupctl(t, "inspect", "lock", "--redis-url", narrow, "--key", p+":other:1")
	if code != 3 || !strings.Contains(stderr, "refused key") || !strings.Contains(stderr, "key patterns") {
		t.Errorf("--key outside the key patterns: exit %d: %s", code, stderr)
	}
}

// snapshot reads type, TTL and idle time of every key under a prefix with
// commands that do not touch the keys (TYPE, PTTL, OBJECT IDLETIME).
type keyState struct {
	typ  string
	pttl time.Duration
	idle time.Duration
}

func snapshot(t *testing.T, c *redis.Client, prefix string) map[string]keyState {
	t.Helper()
	ctx := context.Background()
	out := map[string]keyState{}
	iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		out[k] = keyState{c.Type(ctx, k).Val(), c.PTTL(ctx, k).Val(), c.ObjectIdleTime(ctx, k).Val()}
	}
	return out
}

// TestKeyspaceUnchanged asserts that inspecting changes nothing: the same
// keys, types, values and TTLs (only run down), and idle times that were
// read before any value read.
func TestKeyspaceUnchanged(t *testing.T) {
	p := testenv.WordName("unchanged")
	c, url := adminClient(t, p)
	ctx := context.Background()
	values := map[string]string{p + ":order:1": "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", p + ":order:2": "1", p + ":job:lock": "web-1:31337"}
	for k, v := range values {
		ttl := time.Hour
		if v == "1" {
			ttl = 0
		}
		c.Set(ctx, k, v, ttl)
	}
	c.HSet(ctx, p+":redisson:lock", "6a4c2d1e-1234-4abc-9def-0123456789ab:57", "2")
	c.PExpire(ctx, p+":redisson:lock", time.Hour)
	c.RPush(ctx, p+":lock:queue", "a", "b")
	time.Sleep(2100 * time.Millisecond) // idle times of 2s to preserve
	before := snapshot(t, c, p)
	start := time.Now()

	code, _, stderr := dupctl(t, "inspect", "lock", "--redis-url", url, "--pattern", p+":*", "--no-values", "-o", "json")
	if code > 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mid := snapshot(t, c, p)
	compare(t, "--no-values", before, mid, true, time.Since(start))

	code, stdout, stderr := dupctl(t, "inspect", "lock", "--redis-url", url, "--pattern", p+":*", "--top", "10", "-o", "json")
	if code > 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parse(t, stdout)
	after := snapshot(t, c, p)
	// Without CLIENT NO-TOUCH (Redis < 7.2) the value read marks a key as
	// used; dupctl must have read each idle time before that.
	compare(t, "with values", before, after, r.Data.Scan.NoTouch, time.Since(start))
	if !r.Data.Scan.NoTouch {
		t.Log("Redis < 7.2: no CLIENT NO-TOUCH, so reading values reset idle times; checking dupctl read them first")
	}
	for _, l := range r.Data.Locks {
		if want := before[l.Key].idle; time.Duration(l.IdleS)*time.Second < want-time.Second {
			t.Errorf("%s: reported idle %ds, was %s before the run: read after touching", l.Key, l.IdleS, want)
		}
	}
	// The two locks (one a Redisson hash), not the counter holding "1"
	// or the list (which are still left as they were); order:1, a UUID
	// under a lease with no lock word, is a possible lock (info only).
	var got []string
	for _, l := range r.Data.Locks {
		got = append(got, strings.TrimPrefix(l.Key, p))
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{":job:lock", ":redisson:lock"}) || r.Data.Scan.Skipped != 2 {
		t.Errorf("reported %v (skipped %d), want the 2 locks", got, r.Data.Scan.Skipped)
	}
	for k, v := range values {
		if got := c.Get(ctx, k).Val(); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if h := c.HGetAll(ctx, p+":redisson:lock").Val(); len(h) != 1 || h["6a4c2d1e-1234-4abc-9def-0123456789ab:57"] != "2" {
		t.Errorf("hash changed: %v", h)
	}
	if l := c.LRange(ctx, p+":lock:queue", 0, -1).Val(); !slices.Equal(l, []string{"a", "b"}) {
		t.Errorf("list changed: %v", l)
	}
}

// compare checks after against before, elapsed later: TTLs may only have
// run down by at most elapsed.
func compare(t *testing.T, run string, before, after map[string]keyState, idleKept bool, elapsed time.Duration) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("%s: %d keys after, %d before", run, len(after), len(before))
	}
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			t.Errorf("%s: %s disappeared", run, k)
		case a.typ != b.typ:
			t.Errorf("%s: %s type %s, was %s", run, k, a.typ, b.typ)
		case b.pttl < 0 && a.pttl != b.pttl:
			t.Errorf("%s: %s got a TTL %s", run, k, a.pttl)
		case b.pttl > 0 && (a.pttl > b.pttl || a.pttl < b.pttl-elapsed-time.Second):
			t.Errorf("%s: %s TTL %s, was %s: changed, not run down", run, k, a.pttl, b.pttl)
		case idleKept && a.idle < b.idle:
			t.Errorf("%s: %s idle %s, was %s: touched", run, k, a.idle, b.idle)
		}
	}
}

// TestRedisCluster runs the command against a real 3-master cluster the
// test starts, named by its seed addresses, and finds every lock on every
// master.
func TestRedisCluster(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	addrs := testenv.RedisCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	ctx := context.Background()
	for i := range 300 {
		ttl := time.Hour
		if i%10 == 0 {
			ttl = 0
		}
		if err := c.Set(ctx, fmt.Sprintf("lock:order:%d", i), fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", i), ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Beside them, a Redisson lock under a name without "lock" (a hash
	// {<client uuid>:<thread>: count} with a lease, RedissonLock's Lua)
	// and data that is not locks.
	for i := range 30 {
		k := fmt.Sprintf("orders:%d", i)
		c.HSet(ctx, k, fmt.Sprintf("6a4c2d1e-1234-4abc-9def-%012x:57", i), "1")
		c.PExpire(ctx, k, time.Hour)
	}
	for i := range 50 {
		c.Set(ctx, fmt.Sprintf("cache:user:%d", i), "x", 0)
		c.Set(ctx, fmt.Sprintf("status:payment:%d", i), "SUCCEEDED", time.Hour)
		c.HSet(ctx, fmt.Sprintf("user:%d", i), "name", "Ada", "email", "ada@example.com")
	}
	perMaster := map[string]int64{}
	var mu sync.Mutex // ForEachMaster calls back concurrently
	_ = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n := m.DBSize(ctx).Val()
		mu.Lock()
		defer mu.Unlock()
		perMaster[m.Options().Addr] = n
		return nil
	})
	for a, n := range perMaster {
		if n == 0 {
			t.Fatalf("master %s holds no keys: the test would not prove a per-master scan (%v)", a, perMaster)
		}
	}
	url := "redis://" + strings.Join(addrs, ",")
	code, stdout, stderr := dupctl(t, "inspect", "lock", "--redis-url", url, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parse(t, stdout)
	d := r.Data
	if !d.Target.Cluster || len(d.Target.Nodes) != 3 || len(d.Servers) != 3 || d.Scan.KeysScanned != 480 || d.Scan.Candidates != 330 ||
		d.Scan.Skipped != 150 {
		t.Fatalf("cluster scan: target %+v scan %+v", d.Target, d.Scan)
	}
	if len(d.Families) != 2 || d.Families[0].Template != "lock:order:{int}" || d.Families[0].Keys != 300 || d.Families[0].TTL.NoTTL != 30 ||
		d.Families[1].Template != "orders:{int}" || d.Families[1].Makers["redisson"] != 30 {
		t.Errorf("families %+v", d.Families)
	}
	found := false
	for _, f := range r.Findings {
		found = found || (f.Code == "LOCK_NO_TTL" && f.Subject == "lock:order:{int}")
	}
	if !found {
		t.Errorf("no LOCK_NO_TTL for the 30 locks without TTL: %+v", r.Findings)
	}
	// The table view and Markdown carry the slot map: per master its
	// slots, read, on itself; the slot ranges are those the JSON gives.
	if len(d.SlotMap) != 3 {
		t.Fatalf("slot map %+v, want one row per master", d.SlotMap)
	}
	_, table, _ := dupctl(t, "inspect", "lock", "--redis-url", url, "--fail-on", "none")
	_, md, _ := dupctl(t, "inspect", "lock", "--redis-url", url, "-o", "markdown", "--fail-on", "none")
	if !strings.Contains(table, "hash slots: 3 masters scanned; 16,384 of 16,384 hash slots read\n") ||
		!strings.Contains(md, "hash slots: 3 masters scanned; 16,384 of 16,384 hash slots read\n") {
		t.Errorf("no slot summary:\n%s\n%s", table, md)
	}
	for _, r := range d.SlotMap {
		slots := lock.SlotsText(r.Slots)
		row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(r.Master) + ` +` + regexp.QuoteMeta(slots) + ` +read +` +
			regexp.QuoteMeta(r.Master) + `$`)
		if !slices.Contains(addrs, r.Master) || !row.MatchString(table) ||
			!strings.Contains(md, "| "+r.Master+" | "+slots+" | read | "+r.Master+" |\n") {
			t.Errorf("master %s (slots %s): no row read on itself:\n%s\n%s", r.Master, slots, table, md)
		}
	}
	// One key, routed to its master.
	code, stdout, _ = dupctl(t, "inspect", "lock", "--redis-url", url, "--key", "lock:order:7")
	if code != 0 || !strings.Contains(stdout, "lock:order:7") {
		t.Errorf("--key on the cluster: exit %d\n%s", code, stdout)
	}
}

// TestRedisSentinel runs the command against a master named by three
// Sentinels (testenv.RedisSentinel, passwords on the data nodes and on
// the Sentinels), finds its locks, and after a SENTINEL FAILOVER reads
// the new master: with a new connection (the command), and with one held
// across the failover (as doctor or a long run holds it).
func TestRedisSentinel(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	const pw, spw = "Data-pw-81f", "Sent-pw-27c"
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{Password: pw, SentinelPassword: spw})
	ctx := context.Background()
	first := s.MasterAddr(t)
	m := s.Node(first)
	defer m.Close()
	for i := range 200 {
		if err := m.Set(ctx, fmt.Sprintf("lock:order:%d", i), fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", i), time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Replicated before the failover, so the new master holds them too.
	if n, err := m.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d %v", n, err)
	}
	held, err := connect.Redis(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	inspectOver := func(when, master string, families map[string]int) {
		t.Helper()
		code, stdout, stderr := dupctl(t, "inspect", "lock", "--redis-url", s.URL, "-o", "json")
		if code != 0 && code != 1 {
			t.Fatalf("%s: exit %d: %s", when, code, stderr)
		}
		if strings.Contains(stdout+stderr, pw) || strings.Contains(stdout+stderr, spw) {
			t.Fatalf("%s: a password is printed", when)
		}
		r := parse(t, stdout)
		if u := r.Data.Target.URL; !strings.Contains(u, "redis+sentinel://default:xxxxx@") || strings.Contains(u, "Sent-pw") {
			t.Errorf("%s: target URL %s", when, u)
		}
		checkSentinelScan(t, when+", new connection", &r.Data, master, families)
		res, err := lock.Run(ctx, held, lock.Options{})
		if err != nil {
			t.Fatalf("%s, held connection: %v", when, err)
		}
		checkSentinelScan(t, when+", held connection", &res.Data, master, families)
	}
	inspectOver("before the failover", first, map[string]int{"lock:order:{int}": 200})

	second := s.Failover(t)
	if second == first {
		t.Fatalf("the failover kept the master at %s", first)
	}
	n := s.Node(second)
	defer n.Close()
	for i := range 50 {
		v := fmt.Sprintf("%08x-77aa-4c1d-9e8f-0a1b2c3d4e5f", i)
		if err := n.Set(ctx, fmt.Sprintf("lock:invoice:%d", i), v, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	inspectOver("after the failover", second, map[string]int{"lock:order:{int}": 200, "lock:invoice:{int}": 50})
}

// checkSentinelScan: one node, named by the master's address and name,
// read as a master, holding exactly the families given.
func checkSentinelScan(t *testing.T, when string, d *lock.Data, master string, families map[string]int) {
	t.Helper()
	want := master + " (dupctlmaster)"
	if len(d.Target.Nodes) != 1 || d.Target.Nodes[0] != want || len(d.Servers) != 1 || d.Servers[0].Role != "master" {
		t.Errorf("%s: nodes %v servers %+v, want the master %s", when, d.Target.Nodes, d.Servers, want)
	}
	got := map[string]int{}
	for _, f := range d.Families {
		got[f.Template] = int(f.Keys)
	}
	if fmt.Sprint(got) != fmt.Sprint(families) {
		t.Errorf("%s: families %v, want %v", when, got, families)
	}
}

// TestIncompleteScanExitsThree: slots left unread are exit 3 whatever
// --fail-on says, and the report stands (runLock returns this error after
// the report was rendered).
func TestIncompleteScanExitsThree(t *testing.T) {
	res := &lock.Result{}
	if res.Incomplete() != nil {
		t.Fatal("a scan with nothing unread is incomplete")
	}
	res.Data.Unread = []lock.UnreadNode{{Node: "127.0.0.1:7002", Slots: []lock.SlotRange{{Start: 10923, End: 16383}}, Why: "EOF"}}
	err := exitcode.KeepOutput(res.Incomplete())
	if code := cmdutil.ExitCode(err, 99); code != exitcode.Unavailable || !exitcode.KeepsOutput(err) {
		t.Errorf("exit %d, keeps output %v: %v", code, exitcode.KeepsOutput(err), err)
	}
	if !strings.Contains(err.Error(), "slots 10923-16383 of master 127.0.0.1:7002") {
		t.Errorf("message: %v", err)
	}
}

// TestLockOneServerNoSlotMap: on one server the table view and Markdown
// carry no slot map (there are no slots), only what they carried before.
func TestLockOneServerNoSlotMap(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	c := testenv.RedisDB(t)
	o := c.Options()
	c.Set(context.Background(), "lock:order:1", "3f2a9c1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", time.Hour)
	url := fmt.Sprintf("redis://%s/%d", o.Addr, o.DB)
	for _, format := range []string{"table", "markdown"} {
		code, out, stderr := dupctl(t, "inspect", "lock", "--redis-url", url, "-o", format, "--fail-on", "none")
		if code != 0 || strings.Contains(out, "hash slots") || strings.Contains(out, "MASTER") {
			t.Errorf("-o %s on one server: exit %d %s\n%s", format, code, stderr, out)
		}
	}
}

// TestLockTakesTheJob: the job's lock pattern is the keys considered and
// keys that are locks, its TTL sets --max-ttl, dupctl.yaml's locks come
// along, and a flag wins over the job (lock.Options.Configure, which
// doctor runs too).
func TestLockTakesTheJob(t *testing.T) {
	f := cmdutil.NewFactory(func() *iostreams.IOStreams { ios, _, _, _ := iostreams.Test(); return ios }())
	job := config.Job{Name: "order", LockPattern: "lock:order:*", LockTTL: config.Duration(30 * time.Second)}
	own := config.LockLibrary{ID: "own", Library: "own", Match: []string{"own:*"}}
	locks := config.Locks{Patterns: []string{"mutex:*"}, Libraries: []config.LockLibrary{own}}
	f.Config = &config.Config{Jobs: []config.Job{job}, Locks: locks}
	capture := func(args ...string) lock.Options {
		var got lock.Options
		cmd := inspect.NewCmdLock(f, func(o *inspect.LockOptions) error { got = o.Lock; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&strings.Builder{})
		cmd.SetErr(&strings.Builder{})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return got
	}
	o := capture()
	if !slices.Equal(o.Patterns, []string{"lock:order:*"}) || !slices.Equal(o.LockPatterns, []string{"mutex:*", "lock:order:*"}) ||
		o.MaxTTL != 5*time.Minute || len(o.Libraries) != 1 || o.Libraries[0].ID != "own" {
		t.Errorf("from the job: %+v", o)
	}
	o = capture("--pattern", "a:*", "--max-ttl", "2h", "--lock-pattern", "lock:order:*")
	if !slices.Equal(o.Patterns, []string{"a:*"}) || o.MaxTTL != 2*time.Hour ||
		!slices.Equal(o.LockPatterns, []string{"lock:order:*", "mutex:*"}) {
		t.Errorf("flags win: %+v", o)
	}
	if o = capture("--key", "lock:order:1"); len(o.Patterns) != 0 || o.MaxTTL != time.Hour {
		t.Errorf("--key: %+v", o)
	}
}
