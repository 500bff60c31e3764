package live

import (
	"context"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
)

// BenchmarkLockerAcquireRelease measures the practice's lock round trip on one
// connection: SET key token NX PX ttl, then the compare-and-delete script
// (EVALSHA). bench/live-locker compares it with redis-benchmark's SET and
// DEL on the same server.
func BenchmarkLockerAcquireRelease(b *testing.B) {
	ctx := context.Background()
	rdb, err := connect.Redis(ctx, testenv.Need(b, testenv.Redis))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rdb.Close() })
	l := &Locker{Client: rdb}
	key := testenv.UniqueName("bench") + ":lock"
	b.Cleanup(func() { rdb.Del(ctx, key) })
	b.ResetTimer()
	for b.Loop() {
		lease, ok, err := l.Acquire(ctx, key, 30*time.Second, false)
		if err != nil || !ok {
			b.Fatalf("acquire: %v %v", ok, err)
		}
		if released, err := l.Release(ctx, lease); err != nil || !released {
			b.Fatalf("release: %v %v", released, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}
