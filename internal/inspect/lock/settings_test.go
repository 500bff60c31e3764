package lock

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

func TestSettingsFindings(t *testing.T) {
	type got struct {
		code string
		sev  string
	}
	for _, c := range []struct {
		s    Server
		want []got
	}{
		{Server{Policy: "noeviction", AOF: true, Role: "master"}, nil},
		{Server{Policy: "allkeys-lru", MaxMemory: 1 << 30, AOF: true, Role: "master"}, []got{{"LOCK_REDIS_EVICTION", "error"}}},
		{Server{Policy: "volatile-ttl", AOF: true, Role: "master"}, []got{{"LOCK_REDIS_EVICTION", "warn"}}},
		{Server{Policy: "noeviction", EvictedKeys: 3, AOF: true, Role: "master"}, []got{{"LOCK_REDIS_EVICTED_KEYS", "error"}}},
		{Server{Policy: "noeviction", AOF: true, Role: "slave"}, []got{{"LOCK_REDIS_REPLICA", "warn"}}},
		{Server{Policy: "noeviction", Role: "master"}, []got{{"LOCK_REDIS_PERSISTENCE", "info"}}},
	} {
		var out []got
		for _, f := range settingsFindings(c.s) {
			out = append(out, got{f.Code, f.Severity.String()})
		}
		if fmt.Sprint(out) != fmt.Sprint(c.want) {
			t.Errorf("%+v: %v, want %v", c.s, out, c.want)
		}
	}
}

// TestSmallIntegerIdleTimes: Redis shares one object per integer 0-9999
// between keys, so a lock holding one (a 4-digit token) has no idle time
// of its own - unless the server shares no integers, as with a maxmemory
// and an LRU policy. On a server started with maxmemory 100mb and
// allkeys-lru, each such lock's idle time is read (one rewritten just
// before the scan is idle 0, the others for the seconds since they were
// set); on a server with the default settings they stay unknown (-1).
func TestSmallIntegerIdleTimes(t *testing.T) {
	servers := map[string]bool{ // address: idle times known
		testenv.RedisServer(t, "--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"): true,
		testenv.RedisServer(t): false,
	}
	ctx := context.Background()
	clients := map[string]*redis.Client{}
	for addr := range servers {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		clients[addr] = c
		for i := 1; i <= 5; i++ {
			if err := c.Set(ctx, fmt.Sprintf("lock:report:%d", i), strconv.Itoa(4800+i), time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(3 * time.Second)
	for addr, known := range servers {
		c := clients[addr]
		c.Set(ctx, "lock:report:1", "4811", time.Minute)
		res, err := Run(ctx, c, Options{LockPatterns: []string{"lock:*"}, Top: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data.Locks) != 5 {
			t.Fatalf("%s: %d locks, want 5", addr, len(res.Data.Locks))
		}
		for _, l := range res.Data.Locks {
			fresh := l.Key == "lock:report:1"
			switch {
			case !known && l.IdleS != -1:
				t.Errorf("default server: %s idle %ds, want unknown (-1): the shared integer's idle time", l.Key, l.IdleS)
			case known && fresh && (l.IdleS < 0 || l.IdleS > 1):
				t.Errorf("maxmemory + allkeys-lru: %s rewritten just now, idle %ds", l.Key, l.IdleS)
			case known && !fresh && l.IdleS < 2:
				t.Errorf("maxmemory + allkeys-lru: %s set 3s ago, idle %ds", l.Key, l.IdleS)
			}
		}
	}
}
