package cache_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// startCluster runs a three-master Redis Cluster of its own
// (testenv.RedisCluster), stopped at the end.
func startCluster(t *testing.T) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: testenv.RedisCluster(t, 3)})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCluster: every master is scanned, and the keys of each are read
// from their own node.
func TestCluster(t *testing.T) {
	fx := newFixture(t)
	c := startCluster(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.jobs SELECT 'k' || i, 'SUCCEEDED' FROM generate_series(1, 300) i`)
	ctx := context.Background()
	for i := 1; i <= 300; i++ {
		v := "SUCCEEDED"
		if i%100 == 0 {
			v = "PROCESSING"
		}
		if err := c.Set(ctx, fmt.Sprintf("%sk%d", fx.prefix, i), v, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var masters atomic.Int32 // ForEachMaster calls back concurrently
	_ = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		if n.DBSize(ctx).Val() > 0 {
			masters.Add(1)
		}
		return nil
	})
	if masters.Load() < 2 {
		t.Fatalf("keys on %d masters: the test needs them spread", masters.Load())
	}
	o := fx.options("jobs")
	o.Batch = 50
	res, err := auditcache.Run(ctx, auditcache.Deps{Cache: c, DB: fx.ro}, o)
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report()
	if res.Read != 300 || res.Agree != 297 || len(rep.Findings) != 1 || rep.Findings[0].Code != "CACHE_NOT_DONE_DB_SUCCEEDED" {
		t.Errorf("cluster: read %d agree %d findings %v", res.Read, res.Agree, fx.summary(rep))
	}
}

// TestSentinel: the cache behind Sentinels (testenv.RedisSentinel) is
// audited through a redis+sentinel:// URL, read from the master they name.
func TestSentinel(t *testing.T) {
	fx := newFixture(t)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{Password: "cache-pw"})
	ctx := context.Background()
	c, err := connect.Redis(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.jobs SELECT 'k' || i, 'SUCCEEDED' FROM generate_series(1, 40) i`)
	for i := 1; i <= 40; i++ {
		v := "SUCCEEDED"
		if i%20 == 0 {
			v = "PROCESSING"
		}
		if err := c.Set(ctx, fmt.Sprintf("%sk%d", fx.prefix, i), v, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	m := s.Node(s.MasterAddr(t))
	defer m.Close()
	if n := m.DBSize(ctx).Val(); n != 40 {
		t.Fatalf("the master holds %d keys, want the 40 written through the Sentinel URL", n)
	}
	res, err := auditcache.Run(ctx, auditcache.Deps{Cache: c, DB: fx.ro}, fx.options("jobs"))
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report()
	if res.Read != 40 || res.Agree != 38 || len(rep.Findings) != 1 || rep.Findings[0].Code != "CACHE_NOT_DONE_DB_SUCCEEDED" {
		t.Errorf("sentinel: read %d agree %d findings %v", res.Read, res.Agree, fx.summary(rep))
	}
}
