// Command setup plants (or, with -clean, removes) the soak's own data on the
// shared services for bench/watch/soak.sh: lock and status-cache keys under a
// Redis prefix, an idempotency table in a PostgreSQL schema, and a DLQ whose
// messages died by expiry in a work queue.
//
//	setup -prefix P -schema S -queue Q [-clean]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

func main() {
	redisURL := flag.String("redis", "redis://127.0.0.1:6379/0", "Redis URL")
	pgURL := flag.String("pg", "postgres://127.0.0.1:5432/test", "PostgreSQL URL")
	amqpURL := flag.String("amqp", "amqp://guest:guest@127.0.0.1:5672/", "AMQP URL")
	prefix := flag.String("prefix", "", "Redis key prefix (required)")
	schema := flag.String("schema", "", "PostgreSQL schema (required)")
	queue := flag.String("queue", "", "DLQ name; its work queue is <queue>.work (required)")
	locks := flag.Int("locks", 200, "lock keys with a TTL (plus 5 without)")
	rows := flag.Int("rows", 10000, "idempotency rows, and as many status-cache keys / 10")
	dead := flag.Int("dead", 100, "dead letters in the DLQ")
	clean := flag.Bool("clean", false, "remove what setup planted")
	flag.Parse()
	if *prefix == "" || *schema == "" || *queue == "" {
		log.Fatal("-prefix, -schema and -queue are required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts, err := redis.ParseURL(*redisURL)
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	db, err := pgx.Connect(ctx, *pgURL)
	if err != nil {
		log.Fatalf("postgres: %v", err)
	}
	defer db.Close(ctx)
	conn, err := amqp.Dial(*amqpURL)
	if err != nil {
		log.Fatalf("amqp: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	if *clean {
		cleanup(ctx, rdb, db, ch, *prefix, *schema, *queue)
		return
	}
	if err := plantRedis(ctx, rdb, *prefix, *locks, *rows/10); err != nil {
		log.Fatalf("redis: %v", err)
	}
	if err := plantTable(ctx, db, *schema, *rows); err != nil {
		log.Fatalf("postgres: %v", err)
	}
	if err := plantDLQ(ctx, ch, *queue, *dead); err != nil {
		log.Fatalf("amqp: %v", err)
	}
	fmt.Printf("planted: %d+5 locks and %d cache keys under %s, %d rows in %s.idempotency_keys, %d dead letters in %s\n",
		*locks, *rows/10, *prefix, *rows, *schema, *dead, *queue)
}

// plantRedis writes lock keys (a TTL of a day, so none expires during the
// soak; five without a TTL, a finding each run) and the status cache of the
// first keys of the table, agreeing with it: a disagreement makes audit cache
// look again 2 s later (its Recheck), and the soak wants a run every second.
func plantRedis(ctx context.Context, rdb *redis.Client, prefix string, locks, cached int) error {
	p := rdb.Pipeline()
	for i := 1; i <= locks; i++ {
		p.Set(ctx, fmt.Sprintf("%s:lock:payment:order:%d", prefix, i), fmt.Sprintf("%016x", i*7919), 24*time.Hour)
	}
	for i := 1; i <= 5; i++ {
		p.Set(ctx, fmt.Sprintf("%s:lock:payment:order:9%04d", prefix, i), fmt.Sprintf("%016x", i), 0)
	}
	for i := 1; i <= cached; i++ {
		status := "SUCCEEDED"
		if i%100 == 0 {
			status = "PROCESSING"
		}
		p.Set(ctx, fmt.Sprintf("%s:job:status:key-%d", prefix, i), status, 24*time.Hour)
	}
	_, err := p.Exec(ctx)
	return err
}

// plantTable writes the idempotency table: rows done three hours ago, 1% stuck
// in PROCESSING for two hours, and one key written twice.
func plantTable(ctx context.Context, db *pgx.Conn, schema string, rows int) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`CREATE SCHEMA %[1]s;
		CREATE TABLE %[1]s.idempotency_keys (idempotency_key text NOT NULL, status text NOT NULL,
			created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
		INSERT INTO %[1]s.idempotency_keys SELECT 'key-' || g,
			CASE WHEN g %% 100 = 0 THEN 'PROCESSING' ELSE 'SUCCEEDED' END,
			now() - interval '3 hours', now() - interval '2 hours' FROM generate_series(1, %[2]d) g;
		INSERT INTO %[1]s.idempotency_keys VALUES ('key-7', 'SUCCEEDED', now(), now());
		ANALYZE %[1]s.idempotency_keys`, pgx.Identifier{schema}.Sanitize(), rows))
	return err
}

// plantDLQ declares the DLQ and a work queue dead-lettering into it, and
// publishes to the work queue with a 1 ms TTL: the messages die by expiry,
// with the x-death RabbitMQ writes.
func plantDLQ(ctx context.Context, ch *amqp.Channel, queue string, n int) error {
	if _, err := ch.QueueDeclare(queue, false, false, false, false, nil); err != nil {
		return err
	}
	work := queue + ".work"
	args := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": queue, "x-message-ttl": int32(1)}
	if _, err := ch.QueueDeclare(work, false, false, false, false, args); err != nil {
		return err
	}
	for i := range n {
		body := fmt.Sprintf(`{"orderId":"ord-%d"}`, i)
		if err := ch.PublishWithContext(ctx, "", work, false, false, amqp.Publishing{Body: []byte(body)}); err != nil {
			return err
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		if err != nil {
			return err
		}
		if q.Messages >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s holds %d messages after 30s, want %d", queue, q.Messages, n)
		}
	}
}

func cleanup(ctx context.Context, rdb *redis.Client, db *pgx.Conn, ch *amqp.Channel, prefix, schema, queue string) {
	var n int
	iter := rdb.Scan(ctx, 0, prefix+":*", 1000).Iterator()
	for iter.Next(ctx) {
		n++
		rdb.Del(ctx, iter.Val())
	}
	if err := iter.Err(); err != nil {
		log.Printf("redis: %v", err)
	}
	if _, err := db.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		log.Printf("postgres: %v", err)
	}
	for _, q := range []string{queue, queue + ".work"} {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			log.Printf("amqp: %v", err)
		}
	}
	fmt.Printf("removed %d keys, schema %s, queues %s\n", n, schema, queue)
}
