package respproxy_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/resp"
	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/respproxy"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

type recorder struct {
	mu      sync.Mutex
	replies []string
	hold    string // answer SET on this key ourselves

	// Reply for a command on block waits for release, after closing
	// entered; its then records "then <key>" and closes thenRan.
	block                     string
	entered, release, thenRan chan struct{}
}

func (r *recorder) Command(c *respproxy.Conn, cmd *respproxy.Cmd) []byte {
	if cmd.Name() == "SET" && cmd.Arg(1) == r.hold {
		return []byte("+OK\r\n")
	}
	return nil
}

func (r *recorder) Reply(c *respproxy.Conn, cmd *respproxy.Cmd, v *resp.Value) func() {
	r.mu.Lock()
	r.replies = append(r.replies, cmd.Name()+" "+cmd.Arg(1)+" -> "+v.String())
	r.mu.Unlock()
	if r.block == "" || cmd.Arg(1) != r.block {
		return nil
	}
	close(r.entered)
	<-r.release
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.replies = append(r.replies, "then "+cmd.Arg(1))
		close(r.thenRan)
	}
}

func (r *recorder) Closed(*respproxy.Conn) {}

// TestProxyPairsRepliesWithCommands runs go-redis (RESP3 after HELLO 3, as
// go-redis v9 negotiates by default) through the proxy, pipelined, with
// one command answered by the proxy in the middle: every reply must reach
// the right caller and the hook must see each command with its reply.
func TestProxyPairsRepliesWithCommands(t *testing.T) {
	raw := testenv.Need(t, testenv.Redis)
	u, _ := url.Parse(raw)
	rec := &recorder{}
	gate := proxy.NewGate()
	ln, err := proxy.Listen(proxy.Config{Dial: proxy.DialTCP(u.Host), Gate: func() *proxy.Gate { return gate }, Pumps: respproxy.Pumps(rec)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	key := testenv.UniqueName("resp")
	rec.hold = key + ":held"
	c := redis.NewClient(&redis.Options{Addr: ln.Addr()})
	defer c.Close()
	ctx := context.Background()
	defer c.Del(ctx, key, key+":held")
	pipe := c.Pipeline()
	set := pipe.SetNX(ctx, key, "tok", 5*time.Second)
	held := pipe.Set(ctx, key+":held", "v", 0)
	get := pipe.Get(ctx, key)
	again := pipe.SetNX(ctx, key, "other", 5*time.Second)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	if !set.Val() || held.Val() != "OK" || get.Val() != "tok" || again.Val() {
		t.Fatalf("replies mixed up: setnx=%v held=%q get=%q again=%v", set.Val(), held.Val(), get.Val(), again.Val())
	}
	if n, _ := c.Exists(ctx, key+":held").Result(); n != 0 {
		t.Fatal("the held SET reached Redis")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{"SET " + key + " -> OK", "GET " + key + " -> tok", "SET " + key + " -> nil"}
	if !strings.Contains(strings.Join(rec.replies, "\n"), strings.Join(want, "\n")) {
		t.Fatalf("hook saw %q, want %q in a row", rec.replies, want)
	}
}

// TestReplyIsToldBeforeTheWorkerHasIt: the hook sees a reply before the
// client can (so what the client does next, seen by another proxy, is
// never recorded first), and its then runs after the client has it.
func TestReplyIsToldBeforeTheWorkerHasIt(t *testing.T) {
	raw := testenv.Need(t, testenv.Redis)
	u, _ := url.Parse(raw)
	key := testenv.UniqueName("resp")
	rec := &recorder{block: key, entered: make(chan struct{}), release: make(chan struct{}), thenRan: make(chan struct{})}
	gate := proxy.NewGate()
	ln, err := proxy.Listen(proxy.Config{Dial: proxy.DialTCP(u.Host), Gate: func() *proxy.Gate { return gate }, Pumps: respproxy.Pumps(rec)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := redis.NewClient(&redis.Options{Addr: ln.Addr()})
	defer c.Close()
	ctx := context.Background()
	got := make(chan error, 1)
	go func() { got <- c.Get(ctx, key).Err() }()
	<-rec.entered
	// The old order (forward, then tell) hands the client its reply well
	// within this wait; the hook now holds it.
	select {
	case <-got:
		close(rec.release) // else the proxy's pump, and ln.Close, wait forever
		t.Fatal("the client had its reply while the hook was still being told of it")
	case <-time.After(100 * time.Millisecond):
	}
	close(rec.release)
	if err := <-got; err != redis.Nil {
		t.Fatalf("GET %s: %v, want redis.Nil", key, err)
	}
	select {
	case <-rec.thenRan:
	case <-time.After(time.Minute):
		t.Fatal("then never ran")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if last := rec.replies[len(rec.replies)-1]; last != "then "+key {
		t.Fatalf("then did not run after the reply: hook saw %q last", last)
	}
}

// TestLatencyDelaysReplies: --slow redis=D holds every reply at least D
// (a lower bound only: a loaded machine may add more).
func TestLatencyDelaysReplies(t *testing.T) {
	raw := testenv.Need(t, testenv.Redis)
	u, _ := url.Parse(raw)
	gate := proxy.NewGate()
	const d = 150 * time.Millisecond
	ln, err := proxy.Listen(proxy.Config{
		Dial: proxy.DialTCP(u.Host), Gate: func() *proxy.Gate { return gate }, Pumps: respproxy.Pumps(&recorder{}), Latency: d,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := redis.NewClient(&redis.Options{Addr: ln.Addr(), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	start := time.Now()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d {
		t.Fatalf("PING answered in %s through a proxy with %s latency", took, d)
	}
}
