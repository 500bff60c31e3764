// Command naive is the straightforward Go program a user would write to
// list a Redis keyspace with its TTLs and values: go-redis, SCAN with
// COUNT 1000, and for each page one pipeline of PTTL and GET per key. It
// lists names, TTLs and values and classifies nothing. It is the baseline
// of bench/inspect-lock/run.sh. With -ttl-only it reads no values: SCAN
// and one PTTL per key, the least any tool that reports every key's TTL
// asks of Redis (run.sh's floor).
//
//	go run ./bench/inspect-lock/naive redis://127.0.0.1:6379/14 > keys.tsv
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"
)

func main() {
	ttlOnly := flag.Bool("ttl-only", false, "read each key's PTTL and no value")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: naive [-ttl-only] REDIS_URL")
		os.Exit(2)
	}
	opts, err := redis.ParseURL(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx := context.Background()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	var cursor uint64
	n := 0
	for {
		keys, next, err := c.Scan(ctx, cursor, "", 1000).Result()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		pipe := c.Pipeline()
		ttls := make([]*redis.DurationCmd, len(keys))
		values := make([]*redis.StringCmd, len(keys))
		for i, k := range keys {
			ttls[i] = pipe.PTTL(ctx, k)
			if !*ttlOnly {
				values[i] = pipe.Get(ctx, k)
			}
		}
		// GET on a hash or a list is a WRONGTYPE reply, not a failure.
		if _, err := pipe.Exec(ctx); err != nil && !isReply(err) {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		for i, k := range keys {
			ttl := int64(ttls[i].Val()) // -1 and -2 come back raw
			if ttl > 0 {
				ttl = ttls[i].Val().Milliseconds()
			}
			if *ttlOnly {
				fmt.Fprintf(w, "%s\t%d\n", k, ttl)
			} else {
				fmt.Fprintf(w, "%s\t%d\t%q\n", k, ttl, values[i].Val())
			}
		}
		n += len(keys)
		if cursor = next; cursor == 0 {
			break
		}
	}
	fmt.Fprintf(os.Stderr, "%d keys\n", n)
}

func isReply(err error) bool {
	_, ok := err.(redis.Error)
	return ok || err == redis.Nil
}
