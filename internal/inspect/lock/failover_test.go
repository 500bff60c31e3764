package lock

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestClusterMasterKilledMidScan: a Redis Cluster of 3 masters with a
// replica each (testenv.RedisClusterWithReplicas). A master is killed
// (SIGKILL) after the scan read its first page: the scan goes on on the
// promoted replica and reads every lock exactly once. Then a master and
// its replica are killed mid-scan: nothing serves their slots, and the
// report says which slots of which node were not read, as an error
// finding - never a silent partial result.
func TestClusterMasterKilledMidScan(t *testing.T) {
	c := testenv.RedisClusterWithReplicas(t, 3, 1)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	defer cc.Close()
	ctx := context.Background()
	const locks = 6000
	_, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range locks {
			p.Set(ctx, fmt.Sprintf("lock:order:%d", i), fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", i), time.Hour)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every lock on the replicas too: the failover must lose none, so
	// that a count short of 6000 can only be the scan's.
	err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if n, err := m.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
			return fmt.Errorf("WAIT on %s: %d %v", m.Options().Addr, n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	roles := c.Roles(t)
	var masters []string
	for m := range roles {
		masters = append(masters, m)
	}
	slices.Sort(masters)
	victim := masters[0]
	if len(roles[victim]) != 1 {
		t.Fatalf("roles %v: want one replica per master", roles)
	}
	promoted := roles[victim][0]

	res := scanKilling(t, cc, 30*time.Second, victim, func() { c.Kill(t, victim) })
	d := res.Data
	if len(d.Families) != 1 || d.Families[0].Keys != locks || d.Scan.Locks != locks {
		t.Errorf("after the failover: families %+v, scan %+v: want every one of the %d locks once", d.Families, d.Scan, locks)
	}
	moved := slices.ContainsFunc(d.Failovers, func(m Failover) bool { return m.From == victim && m.To == promoted })
	if !moved || len(d.Unread) != 0 || hasCode(res, judge.RuleScanIncomplete.Code) ||
		!slices.Contains(res.Checks, judge.RuleScanIncomplete.Code) {
		t.Errorf("after the failover: failovers %+v unread %+v findings %v", d.Failovers, d.Unread, codes(res))
	}

	if i := slices.IndexFunc(d.SlotMap, func(r SlotsRead) bool { return r.Master == victim }); i < 0 ||
		!d.SlotMap[i].Read || !slices.Equal(d.SlotMap[i].ReadOn, []string{victim, promoted}) {
		t.Errorf("slot map %+v: want %s's slots read on it, then on %s", d.SlotMap, victim, promoted)
	}
	if err := res.Incomplete(); err != nil {
		t.Errorf("a scan that read everything is incomplete: %v", err)
	}
	t.Logf("failovers: %+v; scan %d ms, %d locks", d.Failovers, d.Scan.ElapsedMs, d.Scan.Locks)

	// The promoted replica has no replica of its own (its master is dead):
	// killing it leaves slots nobody serves.
	second := promoted
	res = scanKilling(t, cc, 3*time.Second, second, func() { c.Kill(t, second) })
	d = res.Data
	i := slices.IndexFunc(d.Unread, func(u UnreadNode) bool { return u.Node == second })
	if i < 0 || len(d.Unread[i].Slots) == 0 || !hasCode(res, judge.RuleScanIncomplete.Code) {
		t.Fatalf("a master killed with no replica: unread %+v findings %v", d.Unread, codes(res))
	}
	if j := slices.IndexFunc(d.SlotMap, func(r SlotsRead) bool { return r.Master == second }); j < 0 || d.SlotMap[j].Read ||
		SlotsText(d.SlotMap[j].Slots) != SlotsText(d.Unread[i].Slots) || d.SlotMap[j].Why != d.Unread[i].Why {
		t.Errorf("slot map %+v: want %s's slots not read, with why", d.SlotMap, second)
	}
	err = res.Incomplete()
	if err == nil || !strings.Contains(err.Error(), "slots "+SlotsText(d.Unread[i].Slots)+" of master "+second) {
		t.Errorf("incomplete: %v", err)
	}
	var read int64
	for _, f := range d.Families {
		read += f.Keys
	}
	if read >= locks {
		t.Errorf("%d locks reported read though %s's slots were not", read, second)
	}
	t.Logf("unread: %+v; locks read %d of %d; scan %d ms", d.Unread, read, locks, d.Scan.ElapsedMs)
}

// scanKilling runs an inspection with small pages that calls kill once
// the first page from node arrived.
func scanKilling(t *testing.T, cc *redis.ClusterClient, wait time.Duration, node string, kill func()) *Result {
	t.Helper()
	var once sync.Once
	killed := false
	o := Options{Count: 50, FailoverWait: wait, afterPage: func(n string) {
		if n == node {
			once.Do(func() { kill(); killed = true })
		}
	}}
	res, err := Run(context.Background(), cc, o)
	if err != nil {
		t.Fatal(err)
	}
	if !killed {
		t.Fatalf("the scan read nothing from %s: the kill never happened", node)
	}
	return res
}

func hasCode(res *Result, code string) bool {
	return slices.ContainsFunc(res.Findings, func(f findings.Finding) bool { return f.Code == code })
}

func codes(res *Result) []string {
	var out []string
	for _, f := range res.Findings {
		out = append(out, f.Code)
	}
	return out
}

// TestSentinelMasterKilledMidScan: the master a group of Sentinels names
// (testenv.RedisSentinel: 1 master, 1 replica, 3 Sentinels, down-after
// 1s) is killed (SIGKILL) after the scan read its first page: the scan
// waits for the Sentinels to promote the replica and goes on there, from
// the start, skipping what it read - every lock once. Then the promoted
// master, which has no replica left, is killed mid-scan: the report
// stands, says the master's keys were not all read as an error finding,
// and Incomplete fails the run - never an error without the report, never
// a silent partial result.
func TestSentinelMasterKilledMidScan(t *testing.T) {
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{})
	killMastersMidScan(t, s, s.URL)
}

// TestSentinelFailoverUnderReadOnlyACL: the same failovers, scanned as the
// read-only user docs/inspect-lock.md names (-@all +@read), which may run
// neither ROLE nor INFO nor PING: the scan cannot learn the new master's
// run_id, so it reads it from the start (the filter skipping what was
// read) once the server the Sentinels name says it is a master (HELLO,
// which any user may run); with no master left, the report says what was
// not read.
func TestSentinelFailoverUnderReadOnlyACL(t *testing.T) {
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{Users: []string{"inspector on >secret ~* resetchannels -@all +@read"}})
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("inspector", "secret")
	as := redis.NewClient(&redis.Options{Addr: s.MasterAddr(t), Username: "inspector", Password: "secret"})
	defer as.Close()
	for _, cmd := range []string{"ROLE", "INFO", "PING"} {
		if err := as.Do(context.Background(), cmd).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("%s as the read-only user: %v, want NOPERM", cmd, err)
		}
	}
	killMastersMidScan(t, s, u.String())
}

// killMastersMidScan writes 3,000 locks to the master of s (replicated),
// scans them through target killing the master after its first page, and
// then the promoted one: the first scan reads every lock once on the
// promoted master, the second reports the master it lost unread.
func killMastersMidScan(t *testing.T, s *testenv.Sentinels, target string) {
	t.Helper()
	ctx := context.Background()
	first := s.MasterAddr(t)
	m := s.Node(first)
	defer m.Close()
	const locks = 3000
	_, err := m.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range locks {
			p.Set(ctx, fmt.Sprintf("lock:order:%d", i), fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", i), time.Hour)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := m.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d %v", n, err) // the failover must lose none
	}
	scan := func(wait time.Duration, victim string) *Result {
		t.Helper()
		// A client per scan: go-redis's pool answers with its last dial
		// error for a moment after dials failed (the first scan's wait).
		c, err := connect.Redis(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var once sync.Once
		killed := false
		res, err := Run(ctx, c, Options{Count: 50, FailoverWait: wait, afterPage: func(n string) {
			if strings.HasPrefix(n, victim+" ") {
				once.Do(func() { s.Kill(t, victim); killed = true })
			}
		}})
		if err != nil {
			t.Fatalf("killing %s mid-scan: %v", victim, err)
		}
		if !killed {
			t.Fatalf("the scan read nothing from %s: the kill never happened", victim)
		}
		return res
	}

	res := scan(30*time.Second, first)
	d := res.Data
	if len(d.Families) != 1 || d.Families[0].Keys != locks || d.Scan.Locks != locks {
		t.Errorf("after the failover: families %+v, scan %+v: want every one of the %d locks once", d.Families, d.Scan, locks)
	}
	second := s.WaitNewMaster(t, first)
	moved := slices.ContainsFunc(d.Failovers, func(m Failover) bool {
		return strings.HasPrefix(m.From, first+" ") && strings.HasPrefix(m.To, second+" ")
	})
	checked := slices.Contains(res.Checks, judge.RuleScanIncomplete.Code)
	if !moved || len(d.Unread) != 0 || hasCode(res, judge.RuleScanIncomplete.Code) || !checked {
		t.Errorf("after the failover: failovers %+v unread %+v findings %v", d.Failovers, d.Unread, codes(res))
	}
	if err := res.Incomplete(); err != nil {
		t.Errorf("a scan that read everything is incomplete: %v", err)
	}
	t.Logf("failovers: %+v; scan %d ms, %d locks", d.Failovers, d.Scan.ElapsedMs, d.Scan.Locks)

	res = scan(3*time.Second, second)
	d = res.Data
	if len(d.Unread) != 1 || !strings.HasPrefix(d.Unread[0].Node, second+" ") || !hasCode(res, judge.RuleScanIncomplete.Code) {
		t.Fatalf("the master killed with no replica: unread %+v findings %v", d.Unread, codes(res))
	}
	err = res.Incomplete()
	if err == nil || !strings.Contains(err.Error(), "the rest of the keys of master "+second) {
		t.Errorf("incomplete: %v", err)
	}
	var read int64
	for _, f := range d.Families {
		read += f.Keys
	}
	if read >= locks {
		t.Errorf("%d locks reported read though the master died mid-scan", read)
	}
	t.Logf("unread: %+v; locks read %d of %d", d.Unread, read, locks)
}
