package keyspace

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/locktest"
	"github.com/dupctl/dupctl/internal/platform/resp"
	"github.com/redis/go-redis/v9"
)

func rawReader(s string) *rawConn {
	return &rawConn{r: resp.NewReader(bufio.NewReader(strings.NewReader(s)))}
}

func TestRawReply(t *testing.T) {
	type reply struct {
		kind replyKind
		text string
	}
	rc := rawReader(":-2\r\n$5\r\nhello\r\n$-1\r\n-WRONGTYPE Operation against a key\r\n+OK\r\n$0\r\n\r\n:17\r\n")
	for _, want := range []reply{{replyInt, "-2"}, {replyBulk, "hello"}, {replyNil, ""}, {replyError, "WRONGTYPE Operation against a key"},
		{replyStatus, "OK"}, {replyBulk, ""}, {replyInt, "17"}} {
		kind, text, err := rc.reply()
		if err != nil || kind != want.kind || text != want.text {
			t.Fatalf("reply() = %v %q %v, want %v %q", kind, text, err, want.kind, want.text)
		}
	}
	for _, bad := range []string{"$999999999999\r\n", "$3\r\nab", "*2\r\n", "x\r\n", ":1\n", ""} {
		if _, _, err := rawReader(bad).reply(); err == nil {
			t.Errorf("reply(%q) accepted", bad)
		}
	}
}

// TestReadBatchPlans reads real keys with every read plan: a plan that
// fits costs one round trip, one that does not (a hash where the template
// had only had strings) gets the value in a second, and no plan (no
// values) reads no value and leaves the idle time alone.
func TestReadBatchPlans(t *testing.T) {
	c, p := locktest.Redis(t, "plans", ":s", ":h", ":l")
	ctx := context.Background()
	c.Set(ctx, p+":s", "8d0c5a01-3b2a-4c1d-9e8f-0a1b2c3d4e5f", time.Hour)
	c.HSet(ctx, p+":h", "6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1")
	c.RPush(ctx, p+":l", "a")
	time.Sleep(1100 * time.Millisecond)
	n := &Node{Name: "test", Conn: c}
	rc, err := dialRaw(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	keys := []string{p + ":s", p + ":h", p + ":l"}

	pg := &Page{}
	if err := rc.readBatch(n, keys, nil, pg); err != nil {
		t.Fatal(err)
	}
	for _, o := range pg.Keys {
		if o.Read || o.Type == "" || o.Idle < 1 {
			t.Errorf("no values: %+v", o)
		}
		if idle := c.ObjectIdleTime(ctx, o.Key).Val(); idle < time.Second {
			t.Errorf("no values: %s touched (idle %s)", o.Key, idle)
		}
	}
	for _, c := range []struct {
		want   []uint8
		second int64
	}{
		{[]uint8{readAll, readAll, readAll}, 0},
		{[]uint8{readString, readHash, readType}, 0},
		{[]uint8{readHash, readString, readString}, 3},
		{[]uint8{readType, readType, readType}, 2}, // a new template's keys: TYPE, then the value
	} {
		pg := &Page{}
		if err := rc.readBatch(n, keys, c.want, pg); err != nil {
			t.Fatal(err)
		}
		if len(pg.Keys) != 3 || pg.SecondReads != c.second {
			t.Fatalf("plan %v: %d keys, %d second reads, want 3 and %d", c.want, len(pg.Keys), pg.SecondReads, c.second)
		}
		s, h, l := pg.Keys[0], pg.Keys[1], pg.Keys[2]
		if s.Type != "string" || s.Value != "8d0c5a01-3b2a-4c1d-9e8f-0a1b2c3d4e5f" || h.Type != "hash" || len(h.Fields) != 2 ||
			h.Fields[1] != "1" || l.Type != "list" || l.Read {
			t.Errorf("plan %v: read %+v", c.want, pg.Keys)
		}
	}
}

// TestSharedIntegerIdleUnknown: Redis keeps the numbers 0-9999 as shared
// objects, so OBJECT IDLETIME of a key holding one is the shared object's
// (when any key holding it, or the server at start, last touched it). A
// 4-digit lock token set a moment ago read as idle for seconds (or since
// the server started) and weighed as a granted TTL of minutes: its idle
// time is unknown, while a longer number's stays the key's own.
func TestSharedIntegerIdleUnknown(t *testing.T) {
	c, p := locktest.Redis(t, "sharedint", ":old", ":pin", ":long")
	ctx := context.Background()
	c.Set(ctx, p+":old", "4821", time.Minute)
	c.Get(ctx, p+":old") // the shared object's last touch
	c.Set(ctx, p+":long", "48210", time.Minute)
	time.Sleep(2100 * time.Millisecond)
	c.Set(ctx, p+":pin", "4821", time.Minute) // just set, never touched
	c.Get(ctx, p+":long")
	n := &Node{Name: "test", Conn: c}
	rc, err := dialRaw(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	pg := &Page{}
	if err := rc.readBatch(n, []string{p + ":pin", p + ":long"}, []uint8{readAll, readAll}, pg); err != nil {
		t.Fatal(err)
	}
	if len(pg.Keys) != 2 {
		t.Fatalf("read %+v", pg.Keys)
	}
	if pin := pg.Keys[0]; pin.Value != "4821" || pin.Idle != -1 {
		t.Errorf("4-digit value: idle %d s, want -1 (unknown); Redis says %s", pin.Idle, c.ObjectIdleTime(ctx, p+":old").Val())
	}
	if long := pg.Keys[1]; long.Value != "48210" || long.Idle < 0 || long.Idle > 1 {
		t.Errorf("5-digit value: idle %d s, want the key's own (0-1)", long.Idle)
	}
	gr := &Page{} // the go-redis path (--key, clients without a raw connection)
	if err := ReadKeys(ctx, n, []string{p + ":pin"}, true, gr, nil); err != nil || len(gr.Keys) != 1 || gr.Keys[0].Idle != -1 {
		t.Errorf("ReadKeys of a 4-digit value: %+v %v, want idle -1", gr.Keys, err)
	}
	for v, want := range map[string]bool{"0": true, "9999": true, "4821": true,
		"10000": false, "0123": false, "-1": false, "": false, "12a": false, " 12": false} {
		if sharedInteger(v) != want {
			t.Errorf("sharedInteger(%q) = %v, want %v", v, !want, want)
		}
	}
}

// TestSharedIntegersByPolicy: Redis shares no integer objects only with a
// maxmemory and an LRU or LFU policy; there a small integer's idle time is
// its key's, elsewhere unknown.
func TestSharedIntegersByPolicy(t *testing.T) {
	for _, c := range []struct {
		maxmemory int64
		policy    string
		private   bool
	}{
		{100 << 20, "allkeys-lru", true}, {100 << 20, "volatile-lru", true}, {100 << 20, "allkeys-lfu", true},
		{100 << 20, "volatile-lfu", true}, {0, "allkeys-lru", false}, {100 << 20, "allkeys-random", false},
		{100 << 20, "volatile-ttl", false}, {100 << 20, "noeviction", false}, {0, "", false},
	} {
		n := &Node{}
		n.SetMemory(c.maxmemory, c.policy)
		p := &Page{Keys: []Key{{Read: true, Type: "string", Value: "4821", Idle: 7}}}
		p.ownIdles(n)
		if n.PrivateIntegers != c.private || (p.Keys[0].Idle == 7) != c.private {
			t.Errorf("maxmemory %d %s: private %v, idle %d", c.maxmemory, c.policy, n.PrivateIntegers, p.Keys[0].Idle)
		}
	}
}

// TestPlannedReadsSendNoRefusedRead: a read a key's type refuses (HSCAN of
// a string, GETRANGE of a Redisson hash lock) is a failed call on the
// server (INFO commandstats failed_calls, errorstat_WRONGTYPE) that its
// monitoring counts as an error. Keys of templates not seen yet, of a
// template holding strings and hashes alike, and of Redisson's lock and
// read-write lock shapes are read, twice over (a new walk's first batch,
// then with the template memo learned), without one error reply, every
// value read.
func TestPlannedReadsSendNoRefusedRead(t *testing.T) {
	const uuid = "8c1f0b6e-6f2a-4b8e-9d1e-2f7c4a9b0c3d"
	suffixes := []string{":str:1", ":str:2", ":rlock:1", ":rlock:2", ":rw:1", ":mixed:1", ":mixed:2", ":z:1", ":l:1", ":str:3"}
	c, p := locktest.Redis(t, "norefused", suffixes...)
	ctx := context.Background()
	c.Set(ctx, p+":str:1", "5f1e2d3c4b5a69788796a5b4c3d2e1f0", time.Minute)
	c.Set(ctx, p+":str:2", "0f1e2d3c4b5a69788796a5b4c3d2e1f0", time.Minute)
	c.HSet(ctx, p+":rlock:1", uuid+":57", "1") // Redisson RLock: a field per thread
	c.HSet(ctx, p+":rlock:2", uuid+":58", "2")
	c.HSet(ctx, p+":rw:1", "mode", "write", uuid+":57", "1", "{"+p+":rw:1}:"+uuid+":57:rwlock_timeout:1", "1")
	c.Set(ctx, p+":mixed:1", "5f1e2d3c4b5a69788796a5b4c3d2e1f0", time.Minute)
	c.HSet(ctx, p+":mixed:2", uuid+":57", "1")
	c.ZAdd(ctx, p+":z:1", redis.Z{Score: 1, Member: "a"})
	c.RPush(ctx, p+":l:1", "a")
	keys := make([]string, len(suffixes)-1) // :str:3 is written later
	for i, s := range suffixes[:len(keys)] {
		keys[i] = p + s
	}
	n := &Node{Name: "test", Conn: c}
	rc, err := dialRaw(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	for walk := 1; walk <= 2; walk++ {
		pg := &Page{}
		if err := rc.readPlanned(n, keys, ReadOptions{Values: true, Now: time.Now}, pg); err != nil {
			t.Fatal(err)
		}
		if rc.errReplies != 0 {
			t.Fatalf("walk %d: %d error replies (reads the keys' types refuse)", walk, rc.errReplies)
		}
		if len(pg.Keys) != len(keys) {
			t.Fatalf("walk %d: read %d keys, want %d", walk, len(pg.Keys), len(keys))
		}
		want := map[string]string{":str:1": "string", ":str:2": "string", ":rlock:1": "hash", ":rlock:2": "hash",
			":rw:1": "hash", ":mixed:1": "string", ":mixed:2": "hash", ":z:1": "zset", ":l:1": "list"}
		for _, o := range pg.Keys {
			typ := want[strings.TrimPrefix(o.Key, p)]
			if o.Type != typ || (typ != "list") != o.Read {
				t.Errorf("walk %d: %s read as %q (read %v), want %s", walk, o.Key, o.Type, o.Read, typ)
			}
		}
		if rl := pg.Keys[2]; len(rl.Fields) != 2 || rl.Fields[0] != uuid+":57" || rl.Fields[1] != "1" {
			t.Errorf("walk %d: Redisson lock's fields %q", walk, rl.Fields)
		}
	}
	// A hash in a template learned as strings: the planned GETRANGE is
	// refused (the one error a plan cannot avoid), then TYPE and HSCAN.
	c.HSet(ctx, p+":str:3", uuid+":59", "1")
	pg := &Page{}
	if err := rc.readPlanned(n, []string{p + ":str:3"}, ReadOptions{Values: true, Now: time.Now}, pg); err != nil {
		t.Fatal(err)
	}
	if len(pg.Keys) != 1 || pg.Keys[0].Type != "hash" || len(pg.Keys[0].Fields) != 2 || rc.errReplies != 1 {
		t.Errorf("a hash among strings: %+v, %d error replies, want its fields and 1", pg.Keys, rc.errReplies)
	}
}

// TestKeyGoneBetweenRoundsIsDropped: a key of a template not typed yet is
// typed in the first round trip and read in the second; one deleted in
// between (a lock released) is dropped as gone, not read as a string
// whose value is "" - GETRANGE's answer for a missing key - which made
// every released lock's token "" (LOCK_TOKEN_CONSTANT, seen in CI on
// TestInspectLockLearn's locks, each with a token of its own).
func TestKeyGoneBetweenRoundsIsDropped(t *testing.T) {
	c, p := locktest.Redis(t, "goneround", ":lock:1", ":lock:2", ":lock:3")
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		c.Set(ctx, fmt.Sprintf("%s:lock:%d", p, i), fmt.Sprintf("token-%d-5f1e2d3c4b5a6978", i), time.Minute)
	}
	n := &Node{Name: "test", Conn: c}
	rc, err := dialRaw(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	betweenRounds = func() { c.Del(ctx, p+":lock:2") }
	defer func() { betweenRounds = nil }()
	pg := &Page{}
	keys := []string{p + ":lock:1", p + ":lock:2", p + ":lock:3"}
	if err := rc.readPlanned(n, keys, ReadOptions{Values: true, Now: time.Now}, pg); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range pg.Keys {
		got = append(got, strings.TrimPrefix(o.Key, p)+"="+o.Value)
	}
	want := []string{":lock:1=token-1-5f1e2d3c4b5a6978", ":lock:3=token-3-5f1e2d3c4b5a6978"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read %v, want %v (the key deleted between round trips dropped)", got, want)
	}
}
