package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ownDBs are the Redis databases a test may hold alone (0 is shared, 13 and
// 14 the benchmarks', 15 the contract suite's wrong-password scan).
const firstOwnDB, lastOwnDB = 1, 12

// RedisDB gives t a Redis database of its own, empty, for a test that must
// read the whole keyspace (a scan without a pattern): other tests' keys,
// in this process or another package's, would otherwise join its families.
// The claim is a key in database 0 (with a TTL, so a killed run frees it);
// the database is flushed before and after.
func RedisDB(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(Need(t, Redis))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	shared := redis.NewClient(opts)
	defer shared.Close()
	token := UniqueName("claim")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		for db := firstOwnDB; db <= lastOwnDB; db++ {
			claim := fmt.Sprintf("dupctl-test:redis-db:%d", db)
			ok, err := shared.SetNX(ctx, claim, token, 10*time.Minute).Result()
			if err != nil {
				t.Fatalf("claiming a Redis database: %v", err)
			}
			if !ok {
				continue
			}
			o := *opts
			o.DB = db
			c := redis.NewClient(&o)
			if err := c.FlushDB(ctx).Err(); err != nil {
				t.Fatalf("emptying Redis database %d: %v", db, err)
			}
			t.Cleanup(func() {
				_ = c.FlushDB(ctx).Err()
				c.Close()
				release := redis.NewClient(opts)
				defer release.Close()
				// Only our own claim: after a TTL expiry another test may hold it.
				_ = release.Eval(ctx, `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`,
					[]string{claim}, token).Err()
			})
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Redis database %d-%d free for 2 minutes", firstOwnDB, lastOwnDB)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
