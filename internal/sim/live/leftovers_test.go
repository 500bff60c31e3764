package live

import (
	"context"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/connect"
)

// assertNoLeftovers checks that nothing named with a run's prefix exists:
// no schema, no Redis key, no queue.
func assertNoLeftovers(t *testing.T, prefix, redisURL, pgURL, amqpURL string) {
	t.Helper()
	if prefix == "" {
		t.Fatal("the run never started")
	}
	ctx := context.Background()
	pool, err := connect.Postgres(ctx, pgURL, connect.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, prefix).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("schema %s left behind", prefix)
	}
	rdb, err := connect.Redis(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	keys, _, err := rdb.Scan(ctx, 0, prefix+":*", 100000).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
	conn, err := connect.AMQP(ctx, amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	topo := Topology{Prefix: prefix}
	for _, q := range []string{topo.Work(), topo.Retry(), topo.DLQ()} {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		// A passive declare of a queue that does not exist fails (404) and
		// closes the channel.
		if _, err := ch.QueueDeclarePassive(q, false, false, false, false, nil); err == nil {
			t.Errorf("queue %s left behind", q)
			ch.Close()
		}
	}
}
