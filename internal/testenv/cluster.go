package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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
	return startCluster(t, n, 0, 5000).Addrs
}

// Cluster is a Redis Cluster started for one test, whose nodes a test may
// kill (RedisClusterWithReplicas).
type Cluster struct {
	Addrs []string // every node, as started
	mu    sync.Mutex
	procs map[string]*exec.Cmd
}

// RedisClusterWithReplicas starts a Redis Cluster of masters, each with
// replicas replicas, as RedisCluster does, and waits until every replica
// is in sync with its master. The node timeout is 2s, so a killed master's
// replica is promoted within a few seconds; every replica may be promoted
// however long it was cut off (cluster-replica-validity-factor 0).
func RedisClusterWithReplicas(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	c := startCluster(t, masters*(1+replicas), replicas, 2000, "--cluster-replica-validity-factor", "0")
	for _, a := range c.Addrs {
		waitLinkUp(t, a)
	}
	return c
}

// startCluster starts n nodes and joins them, replicas per master.
func startCluster(t testing.TB, n, replicas, nodeTimeoutMs int, extra ...string) *Cluster {
	t.Helper()
	needRedisBinaries(t, "redis-server", "redis-cli")
	dir := t.TempDir()
	c := &Cluster{Addrs: make([]string, n), procs: map[string]*exec.Cmd{}}
	for i := range c.Addrs {
		port := freeClusterPort(t)
		c.Addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
		args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--cluster-enabled", "yes", "--cluster-config-file", fmt.Sprintf("nodes-%d.conf", port),
			"--cluster-node-timeout", strconv.Itoa(nodeTimeoutMs), "--dir", dir, "--save", "", "--appendonly", "no",
			"--logfile", fmt.Sprintf("%s/redis-%d.log", dir, port)}, extra...)
		cmd := exec.Command("redis-server", args...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server on %d: %v", port, err)
		}
		c.procs[c.Addrs[i]] = cmd
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		})
		waitPing(t, c.Addrs[i])
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	waitClusterOK(t, c.Addrs)
	return c
}

// Kill stops the node at addr at once (SIGKILL): no shutdown, no last
// replication, as when its machine dies.
func (c *Cluster) Kill(t testing.TB, addr string) {
	t.Helper()
	c.mu.Lock()
	cmd := c.procs[addr]
	delete(c.procs, addr)
	c.mu.Unlock()
	if cmd == nil {
		t.Fatalf("no live node of this cluster at %s", addr)
	}
	_ = cmd.Process.Kill()
	_, _ = cmd.Process.Wait()
}

// Roles reads, from a live node, each node's role: master address -> its
// replicas' addresses (nodes marked failed are left out).
func (c *Cluster) Roles(t testing.TB) map[string][]string {
	t.Helper()
	c.mu.Lock()
	var live string
	for a := range c.procs {
		live = a
		break
	}
	c.mu.Unlock()
	cl := redis.NewClient(&redis.Options{Addr: live})
	defer cl.Close()
	text, err := cl.ClusterNodes(context.Background()).Result()
	if err != nil {
		t.Fatalf("CLUSTER NODES on %s: %v", live, err)
	}
	byID := map[string]string{}
	type row struct{ addr, flags, master string }
	var rows []row
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		byID[f[0]] = addr
		rows = append(rows, row{addr, f[2], f[3]})
	}
	out := map[string][]string{}
	for _, r := range rows {
		switch {
		case strings.Contains(r.flags, "fail"):
		case strings.Contains(r.flags, "master"):
			if _, ok := out[r.addr]; !ok {
				out[r.addr] = nil
			}
		case strings.Contains(r.flags, "slave"):
			m := byID[r.master]
			out[m] = append(out[m], r.addr)
		}
	}
	return out
}

// waitLinkUp waits until a replica's link to its master is up (a master
// passes at once).
func waitLinkUp(t testing.TB, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && (strings.Contains(info, "role:master") || strings.Contains(info, "master_link_status:up")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not in sync: %v %s", addr, err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	waitPingAuth(t, addr, "")
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
