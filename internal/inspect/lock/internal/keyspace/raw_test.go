package keyspace

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/locktest"
)

func rawReader(s string) *rawConn { return &rawConn{r: bufio.NewReader(strings.NewReader(s))} }

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

// FuzzRawReply: any byte stream gives replies or an error, never a panic
// or a value kept beyond maxValue.
func FuzzRawReply(f *testing.F) {
	for _, s := range []string{":-2\r\n", "$5\r\nhello\r\n", "$-1\r\n", "-ERR x\r\n", "$2147483647\r\n", "_\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rc := rawReader(s)
		for range 16 {
			kind, text, err := rc.reply()
			if err != nil {
				return
			}
			if kind == replyBulk && len(text) > maxValue {
				t.Fatalf("bulk of %d bytes", len(text))
			}
		}
	})
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
	} {
		pg := &Page{}
		if err := rc.readBatch(n, keys, c.want, pg); err != nil {
			t.Fatal(err)
		}
		if len(pg.Keys) != 3 || pg.SecondReads != c.second {
			t.Fatalf("plan %v: %d keys, %d second reads, want 3 and %d", c.want, len(pg.Keys), pg.SecondReads, c.second)
		}
		s, h, l := pg.Keys[0], pg.Keys[1], pg.Keys[2]
		if s.Type != "string" || s.Value != "8d0c5a01-3b2a-4c1d-9e8f-0a1b2c3d4e5f" || h.Type != "hash" || len(h.Fields) != 2 || h.Fields[1] != "1" || l.Type != "list" || l.Read {
			t.Errorf("plan %v: read %+v", c.want, pg.Keys)
		}
	}
}
