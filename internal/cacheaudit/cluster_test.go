package cacheaudit_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cacheaudit"
	"github.com/redis/go-redis/v9"
)

// startCluster runs a three-master Redis Cluster of its own on free
// loopback ports (redis-server and redis-cli from PATH), stopped at the end.
func startCluster(t *testing.T) *redis.ClusterClient {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed: cannot start a local cluster")
	}
	dir := t.TempDir()
	var addrs []string
	for i := range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-config-file", fmt.Sprintf("%s/nodes-%d.conf", dir, i), "--dir", dir, "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addrs = append(addrs, addr)
	}
	for _, a := range addrs {
		waitPort(t, a)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { c.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := c.ClusterInfo(context.Background()).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster did not become ok: %v %s", err, info)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitPort(t *testing.T, addr string) {
	t.Helper()
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not open", addr)
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
	rep, err := cacheaudit.Audit(ctx, c, fx.ro, o)
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Data.(*cacheaudit.Result)
	if res.Read != 300 || res.Agree != 297 || len(rep.Findings) != 1 || rep.Findings[0].Code != "CACHE_NOT_DONE_DB_SUCCEEDED" {
		t.Errorf("cluster: read %d agree %d findings %v", res.Read, res.Agree, fx.summary(rep))
	}
}
