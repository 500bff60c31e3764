package testenv

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/sentinelask"
	"github.com/redis/go-redis/v9"
)

// SentinelOptions shape a Sentinel setup.
type SentinelOptions struct {
	Password         string // requirepass of the master and replica ("" for none)
	SentinelPassword string // requirepass of the Sentinels ("" for none)
	// Users are ACL SETUSER rules, one user each ("inspector on >secret
	// ~* -@all +@read"), made on the master and the replica: ACLs are not
	// replicated, and a client must log in to whichever is master.
	Users []string
}

// Sentinels is a Redis master, one replica and three Sentinels that
// monitor them under the name Master, on free loopback ports, for one
// test (RedisSentinel).
type Sentinels struct {
	Master    string   // the monitored name
	Sentinels []string // host:port of each Sentinel
	Servers   []string // host:port of the master, then the replica, as started
	URL       string   // redis+sentinel://... naming all of it, password included
	opts      SentinelOptions

	mu    sync.Mutex
	procs map[string]*exec.Cmd // by host:port
}

// sentinelMaster is the name the harness's Sentinels monitor.
const sentinelMaster = "dupctlmaster"

// RedisSentinel starts 1 master + 1 replica (redis-server) and 3 Sentinels
// (redis-server --sentinel with a generated config: redis-sentinel may not
// be installed) on free loopback ports in a temp dir, waits until the
// replica is in sync and every Sentinel knows the replica and the other
// Sentinels (so a failover can happen at once), and stops everything when
// the test ends. It skips without redis-server, or fails under
// DUPCTL_INTEGRATION=required. Down-after is 1s, so a killed master is
// replaced within seconds.
func RedisSentinel(t testing.TB, o SentinelOptions) *Sentinels {
	t.Helper()
	needRedisBinaries(t, "redis-server")
	dir := t.TempDir()
	s := &Sentinels{Master: sentinelMaster, opts: o, procs: map[string]*exec.Cmd{}}
	auth := []string{}
	if o.Password != "" {
		auth = []string{"--requirepass", o.Password, "--masterauth", o.Password}
	}
	master := s.start(t, dir, auth)
	replica := s.start(t, dir, append([]string{"--replicaof", "127.0.0.1", portOf(master)}, auth...))
	s.Servers = []string{master, replica}
	s.waitInSync(t, replica)
	for _, addr := range s.Servers {
		s.addUsers(t, addr)
	}
	for range 3 {
		s.Sentinels = append(s.Sentinels, s.startSentinel(t, dir, master))
	}
	s.waitKnown(t)
	u := url.URL{Scheme: "redis+sentinel", Host: strings.Join(s.Sentinels, ","), Path: "/" + s.Master}
	if o.Password != "" {
		u.User = url.UserPassword("default", o.Password)
	}
	if o.SentinelPassword != "" {
		u.RawQuery = url.Values{"sentinel_password": {o.SentinelPassword}}.Encode()
	}
	s.URL = u.String()
	return s
}

// RedisServer starts one redis-server with extra arguments
// ("--maxmemory", "100mb") on a free loopback port for one test, as
// RedisSentinel starts its servers, and returns its address.
func RedisServer(t testing.TB, extra ...string) string {
	t.Helper()
	needRedisBinaries(t, "redis-server")
	s := &Sentinels{procs: map[string]*exec.Cmd{}}
	return s.start(t, t.TempDir(), extra)
}

// needRedisBinaries skips (or fails, when integration is required) a test
// whose harness needs Redis programs that are not on PATH.
func needRedisBinaries(t testing.TB, bins ...string) {
	t.Helper()
	for _, bin := range bins {
		if _, err := exec.LookPath(bin); err != nil {
			msg := fmt.Sprintf("%s is not on PATH: install redis (see CONTRIBUTING.md)", bin)
			if Required() {
				t.Fatalf("DUPCTL_INTEGRATION=required: %s", msg)
			}
			t.Skip(msg)
		}
	}
}

// start runs a redis-server on a free port and waits until it answers.
func (s *Sentinels) start(t testing.TB, dir string, extra []string) string {
	t.Helper()
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir, "--save", "", "--appendonly", "no",
		"--logfile", filepath.Join(dir, fmt.Sprintf("redis-%d.log", port))}, extra...)
	s.run(t, addr, exec.Command("redis-server", args...))
	waitPingAuth(t, addr, s.opts.Password)
	return addr
}

// addUsers makes the options' ACL users on one data node.
func (s *Sentinels) addUsers(t testing.TB, addr string) {
	t.Helper()
	c := s.Node(addr)
	defer c.Close()
	for _, u := range s.opts.Users {
		args := []any{"ACL", "SETUSER"}
		for _, f := range strings.Fields(u) {
			args = append(args, f)
		}
		if err := c.Do(context.Background(), args...).Err(); err != nil {
			t.Fatalf("ACL SETUSER on %s: %v", addr, err)
		}
	}
}

// startSentinel runs a Sentinel monitoring master. Sentinel rewrites its
// config file, so each gets one of its own.
func (s *Sentinels) startSentinel(t testing.TB, dir, master string) string {
	t.Helper()
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	conf := []string{
		"port " + strconv.Itoa(port),
		"bind 127.0.0.1",
		"dir " + dir,
		"logfile " + filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", port)),
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %s 2", s.Master, portOf(master)),
		fmt.Sprintf("sentinel down-after-milliseconds %s 1000", s.Master),
		fmt.Sprintf("sentinel failover-timeout %s 10000", s.Master),
	}
	if s.opts.Password != "" {
		conf = append(conf, fmt.Sprintf("sentinel auth-pass %s %s", s.Master, s.opts.Password))
	}
	if s.opts.SentinelPassword != "" {
		conf = append(conf, "requirepass "+s.opts.SentinelPassword)
		// The Sentinels talk to each other with the same password.
		conf = append(conf, "sentinel sentinel-pass "+s.opts.SentinelPassword)
	}
	file := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", port))
	if err := os.WriteFile(file, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.run(t, addr, exec.Command("redis-server", file, "--sentinel"))
	waitPingAuth(t, addr, s.opts.SentinelPassword)
	return addr
}

// run starts a process and stops it (SIGKILL) when the test ends.
func (s *Sentinels) run(t testing.TB, addr string, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", strings.Join(cmd.Args, " "), err)
	}
	s.mu.Lock()
	s.procs[addr] = cmd
	s.mu.Unlock()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
}

// Kill stops the server at addr at once (SIGKILL): no shutdown, no last
// replication, as when its machine dies.
func (s *Sentinels) Kill(t testing.TB, addr string) {
	t.Helper()
	s.mu.Lock()
	cmd := s.procs[addr]
	s.mu.Unlock()
	if cmd == nil {
		t.Fatalf("no server of this setup at %s", addr)
	}
	_ = cmd.Process.Kill()
	_, _ = cmd.Process.Wait()
}

// Client is a client of one Sentinel.
func (s *Sentinels) Client(i int) *redis.SentinelClient {
	return s.clientAt(s.Sentinels[i])
}

func (s *Sentinels) clientAt(addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: addr, Password: s.opts.SentinelPassword})
}

// Node is a client of one data node (master or replica) by address.
func (s *Sentinels) Node(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Password: s.opts.Password})
}

// MasterAddr is where the first Sentinel says the master is.
func (s *Sentinels) MasterAddr(t testing.TB) string {
	t.Helper()
	c := s.Client(0)
	defer c.Close()
	addr, err := sentinelask.Master(context.Background(), c, s.Master)
	if err != nil {
		t.Fatalf("SENTINEL GET-MASTER-ADDR-BY-NAME: %v", err)
	}
	return addr
}

// Failover makes the Sentinels promote the replica (SENTINEL FAILOVER,
// retried while the Sentinel does not yet deem the replica fit) and waits
// until every Sentinel names the new master and it says it is one. It
// returns the new master's address.
func (s *Sentinels) Failover(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	old := s.MasterAddr(t)
	c := s.Client(0)
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Failover(ctx, s.Master).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SENTINEL FAILOVER: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return s.WaitNewMaster(t, old)
}

// WaitNewMaster waits until every Sentinel names a master other than old
// and that server says it is one (ROLE); it returns its address.
func (s *Sentinels) WaitNewMaster(t testing.TB, old string) string {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		addr, ok := s.agreed(ctx, old)
		if ok {
			n := s.Node(addr)
			role, err := n.Do(ctx, "ROLE").Slice()
			n.Close()
			if err == nil && len(role) > 0 && role[0] == "master" {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinels did not agree on a new master in place of %s", old)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// agreed is the master every Sentinel names, when they all name the same
// one and it is not old.
func (s *Sentinels) agreed(ctx context.Context, old string) (string, bool) {
	addr, err := sentinelask.Agreed(s.Sentinels, func(a string) (string, error) {
		c := s.clientAt(a)
		defer c.Close()
		return sentinelask.Master(ctx, c, s.Master)
	})
	return addr, err == nil && addr != old
}

// waitInSync waits until the replica's link to its master is up.
func (s *Sentinels) waitInSync(t testing.TB, replica string) {
	t.Helper()
	c := s.Node(replica)
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not in sync: %v %s", replica, err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitKnown waits until every Sentinel knows the replica and the two
// other Sentinels: before that, a failover finds no replica to promote or
// no quorum.
func (s *Sentinels) waitKnown(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for i := range s.Sentinels {
		c := s.Client(i)
		for {
			reps, err1 := c.Replicas(ctx, s.Master).Result()
			sens, err2 := c.Sentinels(ctx, s.Master).Result()
			if err1 == nil && err2 == nil && len(reps) == 1 && len(sens) == len(s.Sentinels)-1 {
				break
			}
			if time.Now().After(deadline) {
				c.Close()
				t.Fatalf("Sentinel %s knows %d replicas and %d other Sentinels (%v %v)", s.Sentinels[i], len(reps), len(sens), err1, err2)
			}
			time.Sleep(100 * time.Millisecond)
		}
		c.Close()
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// waitPingAuth waits until the server at addr answers PING.
func waitPingAuth(t testing.TB, addr, password string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password})
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
