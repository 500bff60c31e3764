package ttl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgSchema creates a schema of its own with a jobs table on the real
// PostgreSQL, dropped when the test ends.
func pgSchema(t *testing.T) (url, schema string) {
	t.Helper()
	url = testenv.Need(t, testenv.Postgres)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	schema = testenv.UniqueName("ttl")
	t.Cleanup(func() {
		conn.Exec(context.Background(), "drop schema if exists "+schema+" cascade") //nolint:errcheck
		conn.Close(context.Background())
	})
	for _, q := range []string{
		"create schema " + schema,
		"create table " + schema + ".jobs (job_type text, enqueued_at timestamptz, started_at timestamptz, finished_at timestamptz, " +
			"took interval, took_ms numeric)",
		"insert into " + schema + ".jobs values " +
			"('payment', '2026-12-01 10:00:00Z', '2026-12-01 10:00:10Z', '2026-12-01 10:01:40Z', '90 seconds', 90000.5)," +
			"('payment', '2026-12-01 10:00:00Z', '2026-12-01 10:00:01Z', '2026-12-01 10:00:31Z', '30 seconds', 30000)," +
			"('settlement', '2026-12-01 10:00:00Z', '2026-12-01 10:00:00Z', '2026-12-01 10:10:00Z', '1 day 10 minutes', 600000)," +
			"('settlement', '2026-12-01 10:00:00Z', null, null, null, null)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return url, schema
}

func runQuery(t *testing.T, url, q string, o CollectOptions) (*Collector, error) {
	t.Helper()
	ctx := context.Background()
	pool, err := connect.Postgres(ctx, url, connect.PostgresOptions{ReadOnly: true, StatementTimeout: 5 * time.Second, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	c := NewCollector(o)
	return c, Query(ctx, pool, q, TableOptions{}, c, nil)
}

func TestQueryColumns(t *testing.T) {
	url, schema := pgSchema(t)
	cases := []struct {
		name, q string
		o       CollectOptions
		want    map[string][]time.Duration
		skipped int64
	}{
		{"interval by position", "select job_type, took from " + schema + ".jobs order by 1, 2", CollectOptions{},
			map[string][]time.Duration{"payment": {30 * time.Second, 90 * time.Second}, "settlement": {24*time.Hour + 10*time.Minute}}, 1},
		{"numeric in ms by name", "select took_ms as duration_ms, job_type as type from " + schema + ".jobs", CollectOptions{},
			map[string][]time.Duration{"payment": {30 * time.Second, 90*time.Second + 500*time.Microsecond}, "settlement": {10 * time.Minute}}, 1},
		{"timestamps with wait", "select job_type, enqueued_at, started_at, finished_at from " + schema + ".jobs",
			CollectOptions{IncludeWait: true},
			map[string][]time.Duration{"payment": {31 * time.Second, 100 * time.Second}, "settlement": {10 * time.Minute}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := runQuery(t, url, tc.q, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if c.skipped.Rows != tc.skipped {
				t.Errorf("skipped %d %v, want %d", c.skipped.Rows, c.skipped.Examples, tc.skipped)
			}
			assertRuns(t, c, tc.want)
		})
	}
}

// The query runs read-only: a statement that writes fails, and nothing is
// written.
func TestQueryIsReadOnly(t *testing.T) {
	url, schema := pgSchema(t)
	_, err := runQuery(t, url, "insert into "+schema+".jobs (job_type, took) values ('x', '1 second') returning job_type, took",
		CollectOptions{})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25006" {
		t.Fatalf("write through Query: %v, want read_only_sql_transaction (25006)", err)
	}
	c, err := runQuery(t, url, "select job_type, took from "+schema+".jobs where job_type = 'x'", CollectOptions{})
	if err != nil || c.Runs() != 0 {
		t.Fatalf("after the refused write: %d runs, %v", c.Runs(), err)
	}
}

func TestQueryStatementTimeout(t *testing.T) {
	url := testenv.Need(t, testenv.Postgres)
	ctx := context.Background()
	pool, err := connect.Postgres(ctx, url, connect.PostgresOptions{ReadOnly: true, StatementTimeout: 100 * time.Millisecond, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	err = Query(ctx, pool, "select 'x' as job_type, pg_sleep(2)::text as duration", TableOptions{}, NewCollector(CollectOptions{}), nil)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("slow query: %v, want query_canceled (57014)", err)
	}
}

// Columns with unknown names are read by position; a row whose duration
// is not one is skipped with its reason.
func TestQueryByPositionSkipsNonDurations(t *testing.T) {
	url := testenv.Need(t, testenv.Postgres)
	c, err := runQuery(t, url, "select 'a' as owner, 'b' as label", CollectOptions{})
	if err != nil || c.Runs() != 0 || c.skipped.Rows != 1 || !strings.Contains(c.skipped.Examples[0], `row 1: "b" is not a duration`) {
		t.Fatalf("got %v, %d runs, skipped %v", err, c.Runs(), c.skipped)
	}
	_, err = runQuery(t, url, "select 1 as duration", CollectOptions{IncludeWait: true})
	if err == nil || !strings.Contains(err.Error(), "{IncludeWait} needs the queue wait") {
		t.Fatalf("got %v", err)
	}
}
