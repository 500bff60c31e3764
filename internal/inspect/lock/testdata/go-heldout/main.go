// A held-out keyspace (issue 30): keys written by Go libraries' own code
// that dupctl's catalogue was not built from - locks, job queues, rate
// limits, caches and sessions, each in its library's default layout -
// held live until stdin closes. Usage:
//
//	REDIS_URL=redis://127.0.0.1:6379/3 go run .
//
// It prints one line "ready" when every lock is held.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strconv"
	"time"

	"github.com/adjust/rmq/v5"
	redislocker "github.com/go-co-op/gocron-redis-lock/v2"
	"github.com/go-redis/cache/v9"
	"github.com/go-redis/redis_rate/v10"
	"github.com/gocraft/work"
	redigo "github.com/gomodule/redigo/redis"
	"github.com/rbcervilla/redisstore/v9"
	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	limiterredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	url := os.Getenv("REDIS_URL")
	opts, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)

	// gocraft/work: a job type with MaxConcurrency holds <ns>:jobs:<name>:lock
	// (a count of running jobs, INCR) and :lock_info (pool id -> count,
	// HINCRBY) while its handlers run (redis.go redisLuaFetchJob); unique
	// jobs (EnqueueUnique: <ns>:unique:<name>:<args json> = 1, EX 86400); the
	// pool's heartbeat and the workers' observations.
	pool := &redigo.Pool{MaxActive: 20, MaxIdle: 5, Wait: true, Dial: func() (redigo.Conn, error) { return redigo.DialURL(url) }}
	const ns = "shop-work"
	enq := work.NewEnqueuer(ns, pool)
	block := make(chan struct{})
	wp := work.NewWorkerPool(struct{}{}, 4, ns, pool)
	wp.JobWithOptions("send_receipt", work.JobOptions{MaxConcurrency: 2}, func(*work.Job) error { <-block; return nil })
	for i := range 5 {
		if _, err := enq.Enqueue("send_receipt", work.Q{"order_id": 100 + i}); err != nil {
			return err
		}
	}
	for i := range 4 {
		if _, err := enq.EnqueueUnique("export_report", work.Q{"report_id": i}); err != nil {
			return err
		}
	}
	wp.Start()

	// go-co-op/gocron-redis-lock v2: redsync mutexes named by the job
	// (gocron's executor calls Locker.Lock(ctx, job name)).
	locker, err := redislocker.NewRedisLocker(rdb, redislocker.WithExpiry(time.Minute), redislocker.WithTries(1))
	if err != nil {
		return err
	}
	for i := range 4 {
		if _, err := locker.Lock(ctx, "cleanup-tenant-"+strconv.Itoa(i)); err != nil {
			return err
		}
	}

	// adjust/rmq v5: each connection's heartbeat (1 with a one-minute TTL,
	// connection.go updateHeartbeat), queues, consumers and unacked
	// deliveries; three connections, as three processes open.
	for range 3 {
		conn, err := rmq.OpenConnectionWithRedisClient("thumbnailer", rdb, nil)
		if err != nil {
			return err
		}
		q, err := conn.OpenQueue("thumbnails")
		if err != nil {
			return err
		}
		for i := range 2 {
			if err := q.Publish(fmt.Sprintf(`{"image":%d}`, i)); err != nil {
				return err
			}
		}
		if err := q.StartConsuming(1, 10*time.Millisecond); err != nil {
			return err
		}
		if _, err := q.AddConsumerFunc("resize", func(rmq.Delivery) { <-block }); err != nil {
			return err
		}
	}

	// go-redis/redis_rate v10: rate:<key> holds the GCRA's theoretical
	// arrival time (a float), EX until it is reached.
	rl := redis_rate.NewLimiter(rdb)
	for i := range 5 {
		for range i + 1 {
			if _, err := rl.Allow(ctx, "user:"+strconv.Itoa(i), redis_rate.PerHour(20)); err != nil {
				return err
			}
		}
	}

	// ulule/limiter v3: limiter:<key> = hits, PX period.
	store, err := limiterredis.NewStoreWithOptions(rdb, limiter.StoreOptions{Prefix: limiter.DefaultPrefix})
	if err != nil {
		return err
	}
	ul := limiter.New(store, limiter.Rate{Period: time.Minute, Limit: 100})
	for i := range 5 {
		for range 2 * i {
			if _, err := ul.Get(ctx, "10.1.0."+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}

	// go-redis/cache v9: msgpack values (s2-compressed past 64 bytes).
	type product struct {
		ID    int
		Name  string
		Price float64
		Tags  []string
	}
	c := cache.New(&cache.Options{Redis: rdb})
	for i := range 6 {
		p := product{ID: i, Name: "Product " + strconv.Itoa(i), Price: 9.5 * float64(i)}
		if i%2 == 0 {
			p.Tags = []string{"kitchen", "garden", "clearance", "spring-sale", "bundle"}
		}
		if err := c.Set(&cache.Item{Ctx: ctx, Key: "product:" + strconv.Itoa(i), Value: p, TTL: time.Hour}); err != nil {
			return err
		}
	}

	// rbcervilla/redisstore v9: gorilla/sessions in Redis, session:<id>
	// holding the gob-encoded values, TTL MaxAge.
	ss, err := redisstore.NewRedisStore(ctx, rdb)
	if err != nil {
		return err
	}
	for i := range 5 {
		req := httptest.NewRequest("GET", "/", nil)
		s, err := ss.New(req, "sid")
		if err != nil {
			return err
		}
		s.Values["user_id"] = 40 + i
		s.Values["cart_items"] = i
		if err := ss.Save(req, httptest.NewRecorder(), s); err != nil {
			return err
		}
	}

	// The concurrency lock is taken when the pool fetches the jobs.
	for deadline := time.Now().Add(20 * time.Second); ; {
		if n, _ := rdb.Get(ctx, ns+":jobs:send_receipt:lock").Int(); n == 2 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gocraft/work took no 2 concurrency slots in 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}
