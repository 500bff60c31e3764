package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCluster starts a real Redis Cluster of n masters (no replicas) for
// one test: redis-server processes with --cluster-enabled yes on free
// loopback ports in a temp dir, joined with redis-cli --cluster create.
// Everything stops when the test ends. It needs redis-server and redis-cli
// on PATH, as the Redis tests do: it skips without them, and fails when
// DUPCTL_INTEGRATION=required.
func RedisCluster(t testing.TB, n int) []string {
	t.Helper()
	needRedisBinaries(t, "redis-server", "redis-cli")
	dir := t.TempDir()
	addrs := make([]string, n)
	for i := range addrs {
		port := freeClusterPort(t)
		addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--cluster-enabled", "yes", "--cluster-config-file", fmt.Sprintf("nodes-%d.conf", port),
			"--cluster-node-timeout", "5000", "--dir", dir, "--save", "", "--appendonly", "no",
			"--logfile", fmt.Sprintf("%s/redis-%d.log", dir, port))
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server on %d: %v", port, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		})
		waitPing(t, addrs[i])
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	waitClusterOK(t, addrs)
	return addrs
}

// freeClusterPort finds a port p such that p and its cluster bus port
// p+10000 are both free on loopback.
func freeClusterPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			bus.Close()
			return port
		}
	}
	t.Fatal("no free port pair for a cluster node")
	return 0
}

func waitPing(t testing.TB, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server at %s did not answer: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitClusterOK(t testing.TB, addrs []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		for {
			info, err := c.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				c.Close()
				t.Fatalf("cluster node %s not ok: %v %s", a, err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		c.Close()
	}
}
