// Issue 42's held-out keyspace, Go part: locks taken and held by the code
// of Go lock libraries dupctl's catalogue has no entry for (truth.json):
// rueidis' rueidislock (one random value on KeyMajority*2-1 keys,
// renewed) and go-zero's RedisLock (16 random letters and digits). Held
// until stdin closes. scs's redisstore writes ordinary session data
// beside them. go-zero's client always uses database 0. Usage:
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go run .
//
// It prints one line "ready" when every lock is held.
package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/alexedwards/scs/redisstore"
	"github.com/alexedwards/scs/v2"
	"github.com/gomodule/redigo/redis"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
	zredis "github.com/zeromicro/go-zero/core/stores/redis"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	u, err := url.Parse(os.Getenv("REDIS_URL"))
	if err != nil {
		return err
	}
	ctx := context.Background()

	// rueidislock lock.go: rueidislock:<i>:<name> for i < KeyMajority*2-1,
	// one rueidis.BinaryString(util.RandomBytes()) on each, 5 s, extended
	// every 2.5 s while held.
	locker, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{u.Host}, DisableCache: true},
	})
	if err != nil {
		return err
	}
	defer locker.Close()
	for i := 1; i <= 5; i++ {
		if _, _, err := locker.TryWithContext(ctx, fmt.Sprintf("settle-batch-%d", i)); err != nil {
			return fmt.Errorf("rueidislock: %w", err)
		}
	}

	// go-zero core/stores/redis/redislock.go: SET <key> stringx.Randn(16) NX PX <seconds*1000+500>.
	rds := zredis.New(u.Host)
	for i := 1; i <= 6; i++ {
		l := zredis.NewRedisLock(rds, fmt.Sprintf("order:pay:%d", 9000+i))
		l.SetExpire(30)
		ok, err := l.AcquireCtx(ctx)
		if err != nil || !ok {
			return fmt.Errorf("go-zero: lock %d not acquired: %v", i, err)
		}
	}
	// The second held-out set (truth.json "added": "locks"): scs sessions in
	// its redisstore, scs:session:<43-char random token> = gob, 24 h.
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.DialURL(u.String()) }}
	defer pool.Close()
	sm := scs.New()
	sm.Store = redisstore.New(pool)
	for i := 1; i <= 6; i++ {
		sctx, err := sm.Load(ctx, "")
		if err != nil {
			return fmt.Errorf("scs: %w", err)
		}
		sm.Put(sctx, "user_id", 700+i)
		if _, _, err := sm.Commit(sctx); err != nil {
			return fmt.Errorf("scs: %w", err)
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}
