package respproxy_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/resp"
	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/respproxy"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

type nopHandler struct{}

func (nopHandler) Command(*respproxy.Conn, *respproxy.Cmd) []byte            { return nil }
func (nopHandler) Reply(*respproxy.Conn, *respproxy.Cmd, *resp.Value) func() { return nil }
func (nopHandler) Closed(*respproxy.Conn)                                    {}

// BenchmarkGet measures one GET round trip straight to Redis and through
// the proxy (parse, hook, forward both ways): the proxy's cost per
// command a worker pays during a worker run.
func BenchmarkGet(b *testing.B) {
	raw := testenv.Need(b, testenv.Redis)
	u, _ := url.Parse(raw)
	gate := proxy.NewGate()
	ln, err := proxy.Listen(proxy.Config{
		Dial: proxy.DialTCP(u.Host), Gate: func() *proxy.Gate { return gate }, Pumps: respproxy.Pumps(nopHandler{}),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	for _, bc := range []struct{ name, addr string }{{"direct", u.Host}, {"proxied", ln.Addr()}} {
		b.Run(bc.name, func(b *testing.B) {
			c := redis.NewClient(&redis.Options{Addr: bc.addr, PoolSize: 1})
			defer c.Close()
			ctx := context.Background()
			key := testenv.UniqueName("bench")
			c.Set(ctx, key, "v", 0)
			defer c.Del(ctx, key)
			b.ResetTimer()
			for b.Loop() {
				if err := c.Get(ctx, key).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
