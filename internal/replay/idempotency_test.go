package replay

import (
	"context"
	"fmt"
	"testing"

	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestSkipSucceededLeavesOrParksFinishedJobs: jobs whose idempotency key
// is SUCCEEDED in PostgreSQL are not replayed.
func TestSkipSucceededLeavesOrParksFinishedJobs(t *testing.T) {
	pgURL := testenv.Need(t, testenv.Postgres)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgURL)
	must(t, err)
	t.Cleanup(func() { pool.Close() })
	schema := testenv.UniqueName("idem")
	tbl := pgx.Identifier{schema, "payments"}.Sanitize()
	_, err = pool.Exec(ctx, fmt.Sprintf(`CREATE SCHEMA %s; CREATE TABLE %s (idempotency_key text PRIMARY KEY, status text NOT NULL)`,
		pgx.Identifier{schema}.Sanitize(), tbl))
	must(t, err)
	t.Cleanup(func() { _, _ = pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE") })
	// payment:0..9 succeeded, payment:10..14 failed, the rest unknown.
	for i := 0; i < 15; i++ {
		st := "SUCCEEDED"
		if i >= 10 {
			st = "FAILED"
		}
		_, err := pool.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, $2)", fmt.Sprintf("payment:%d", i), st)
		must(t, err)
	}
	for _, park := range []bool{false, true} {
		t.Run(fmt.Sprintf("park=%v", park), func(t *testing.T) {
			r := dlqtest.NewRig(t, "")
			r.DeadLetter(dlqtest.Jobs(20))
			o, _ := replayOpts(r, true)
			o.Idempotency = &PGIdempotency{Pool: pool, Table: schema + ".payments", KeyColumn: "idempotency_key",
				Status: "status", Done: "SUCCEEDED"}
			o.IdempotencyKeys = classify.DefaultIdempotencyFields
			o.ParkSucceeded = park
			res, err := o.run(ctx)
			must(t, err)
			c := res.Counts
			if c.Succeeded != 10 || c.Replayed != 10 {
				t.Fatalf("counts: %+v", c)
			}
			if n := r.Count(r.Work); n != 10 {
				t.Fatalf("work got %d", n)
			}
			if park {
				if c.Parked != 10 || r.Count(r.DLQ+".parked") != 10 || r.Count(r.DLQ) != 0 {
					t.Fatalf("parked %d, park queue %d, dlq %d", c.Parked, r.Count(r.DLQ+".parked"), r.Count(r.DLQ))
				}
			} else {
				r.WaitCount(r.DLQ, 10)
			}
		})
	}
}
