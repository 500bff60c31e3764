package store_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// now is the clock every test inspects at; fixtures are written relative
// to it.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fixture is one test's own schema on the real PostgreSQL, dropped at the
// end, and ro, the read-only session the inspection uses.
type fixture struct {
	*testenv.PGSchema
	t  *testing.T
	ro *pgxpool.Pool
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{PGSchema: testenv.NewPGSchema(t, "store"), t: t}
	var err error
	fx.ro, err = connect.Postgres(context.Background(), testenv.Postgres.ConnURL(),
		connect.PostgresOptions{ReadOnly: true, StatementTimeout: time.Minute, LockTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fx.ro.Close)
	return fx
}

func (fx *fixture) exec(sql string) { fx.t.Helper(); fx.Exec(sql) }

func (fx *fixture) table(name string) string { return fx.Table(name) }

func (fx *fixture) inspect(o store.Options) (*findings.Report, *store.Result) {
	fx.t.Helper()
	rep, err := fx.tryInspect(o)
	if err != nil {
		fx.t.Fatal(err)
	}
	return rep, rep.Data.(*store.Result) // the report carries its result
}

func (fx *fixture) tryInspect(o store.Options) (*findings.Report, error) {
	if o.Statuses.Describe() == "" {
		o.Statuses = idemtable.DefaultStatuses()
	}
	if o.StuckAfter == 0 {
		o.StuckAfter = 15 * time.Minute
	}
	o.Now = now
	res, err := store.Run(context.Background(), fx.ro, o)
	if err != nil {
		return nil, err
	}
	return res.Report(), nil
}

// codes is "SEVERITY CODE" of every finding, sorted.
func codes(rep *findings.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Severity.String()+" "+f.Code)
	}
	slices.Sort(out)
	return out
}

func finding(t *testing.T, rep *findings.Report, code string) findings.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s finding in %v", code, codes(rep))
	return findings.Finding{}
}

// TestCatalogCoverage: one table per way a key can (fail to) be unique.
func TestCatalogCoverage(t *testing.T) {
	fx := newFixture(t)
	cases := []struct {
		name, ddl string
		key       string
		coverage  string
		want      []string
	}{
		{name: "pk", ddl: `CREATE TABLE {s}.pk (idempotency_key text PRIMARY KEY, status text)`,
			coverage: "unique: primary key pk_pkey (idempotency_key)"},
		{name: "uniq", ddl: `CREATE TABLE {s}.uniq (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, status text);
			CREATE UNIQUE INDEX uniq_key ON {s}.uniq (idempotency_key)`,
			coverage: "unique: unique index uniq_key (idempotency_key)"},
		{name: "include", ddl: `CREATE TABLE {s}.include (idempotency_key text NOT NULL, attempt int, status text);
			CREATE UNIQUE INDEX include_key ON {s}.include (idempotency_key) INCLUDE (attempt)`,
			coverage: "unique: unique index include_key (idempotency_key)"},
		{name: "partial", ddl: `CREATE TABLE {s}.partial (idempotency_key text NOT NULL, status text NOT NULL);
			CREATE UNIQUE INDEX partial_key ON {s}.partial (idempotency_key) WHERE status <> 'FAILED';
			INSERT INTO {s}.partial VALUES ('a', 'FAILED'), ('a', 'FAILED'), ('b', 'SUCCEEDED')`,
			coverage: "not fully unique: partial_key (partial)",
			want:     []string{"error STORE_DUPLICATE_KEYS", "warn STORE_UNIQUE_PARTIAL"}},
		{name: "expr", ddl: `CREATE TABLE {s}.expr (idempotency_key text, status text);
			CREATE UNIQUE INDEX expr_key ON {s}.expr (lower(idempotency_key));
			INSERT INTO {s}.expr VALUES (NULL, 'FAILED'), ('A', 'SUCCEEDED')`,
			coverage: "not fully unique: expr_key (expression)",
			want:     []string{"warn STORE_KEY_NULLABLE", "warn STORE_UNIQUE_EXPRESSION"}},
		{name: "wide", ddl: `CREATE TABLE {s}.wide (idempotency_key text NOT NULL, attempt int NOT NULL, status text);
			CREATE UNIQUE INDEX wide_key ON {s}.wide (idempotency_key, attempt)`,
			coverage: "not fully unique: wide_key (extra columns)",
			want:     []string{"error STORE_UNIQUE_TOO_WIDE"}},
		{name: "composite",
			ddl: `CREATE TABLE {s}.composite (tenant_id int, idempotency_key text, status text, PRIMARY KEY (tenant_id, idempotency_key))`,
			key: "tenant_id,idempotency_key", coverage: "unique: primary key composite_pkey (tenant_id, idempotency_key)"},
		// The same table with the key guessed as idempotency_key alone: the
		// tenant may be the key's scope, so a warning with the hint.
		{name: "composite", key: "", coverage: "not fully unique: composite_pkey (extra columns)",
			want: []string{"warn STORE_UNIQUE_TOO_WIDE"}},
		{name: "narrow", ddl: `CREATE TABLE {s}.narrow (tenant_id int NOT NULL, idempotency_key text NOT NULL UNIQUE, status text)`,
			key: "tenant_id,idempotency_key", coverage: "unique on part of the key: unique constraint narrow_idempotency_key_key (idempotency_key)",
			want: []string{"info STORE_UNIQUE_NARROWER"}},
		{name: "none", ddl: `CREATE TABLE {s}.none (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, status text)`,
			coverage: "not unique: no unique index or constraint on the key",
			want:     []string{"error STORE_NO_UNIQUE_KEY"}},
		{name: "deferrable", ddl: `CREATE TABLE {s}.deferrable (idempotency_key text NOT NULL, status text,
			CONSTRAINT deferrable_key UNIQUE (idempotency_key) DEFERRABLE INITIALLY DEFERRED)`,
			coverage: "not fully unique: deferrable_key (deferrable)",
			want:     []string{"warn STORE_UNIQUE_DEFERRABLE"}},
		{name: "nullable", ddl: `CREATE TABLE {s}.nullable (idempotency_key text UNIQUE, status text);
			INSERT INTO {s}.nullable VALUES (NULL, 'SUCCEEDED'), (NULL, 'SUCCEEDED')`,
			coverage: "unique: unique constraint nullable_idempotency_key_key (idempotency_key)",
			want:     []string{"warn STORE_KEY_NULLABLE"}},
	}
	for _, c := range cases {
		if c.ddl != "" {
			fx.exec(c.ddl)
		}
		rep, res := fx.inspect(store.Options{Table: fx.table(c.name), KeyColumns: c.key,
			Checks: []string{store.CheckCatalog, store.CheckDuplicates}})
		if got := res.Tables[0].Coverage; got != c.coverage {
			t.Errorf("%s (key %q): coverage %q, want %q", c.name, c.key, got, c.coverage)
		}
		if got := codes(rep); !slices.Equal(got, c.want) {
			t.Errorf("%s (key %q): findings %q, want %q", c.name, c.key, got, c.want)
		}
	}
}

func TestCatalogDetails(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.partial (idempotency_key text NOT NULL, status text NOT NULL);
		CREATE UNIQUE INDEX partial_key ON {s}.partial (idempotency_key) WHERE status <> 'FAILED';
		INSERT INTO {s}.partial SELECT 'k' || i, CASE WHEN i % 4 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END FROM generate_series(1, 100) i;
		CREATE TABLE {s}.nnd (idempotency_key text, status text, CONSTRAINT nnd_key UNIQUE NULLS NOT DISTINCT (idempotency_key))`)
	rep, res := fx.inspect(store.Options{Table: fx.table("partial"), Checks: []string{store.CheckCatalog}})
	ix := res.Tables[0].Indexes[0]
	if ix.UncoveredRows == nil || *ix.UncoveredRows != 25 || ix.Predicate != "(status <> 'FAILED'::text)" {
		t.Errorf("partial index: %+v", ix)
	}
	if f := finding(t, rep, "STORE_UNIQUE_PARTIAL"); !strings.Contains(f.Message, "25 rows are outside it") {
		t.Errorf("partial finding: %s", f.Message)
	}
	// NULLS NOT DISTINCT (PostgreSQL 15+) makes a nullable key safe.
	var version int
	if err := fx.Admin.QueryRow(context.Background(), "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version >= 150000 {
		rep, res = fx.inspect(store.Options{Table: fx.table("nnd"), Checks: []string{store.CheckCatalog}})
		if got := codes(rep); len(got) != 0 || !res.Tables[0].Indexes[0].NullsNotDistinct {
			t.Errorf("NULLS NOT DISTINCT: %v %+v", got, res.Tables[0].Indexes[0])
		}
	}
}

// TestInvalidIndex makes an INVALID index the way it happens in production:
// CREATE UNIQUE INDEX CONCURRENTLY over duplicate data.
func TestInvalidIndex(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, status text NOT NULL,
		created_at timestamptz NOT NULL);
		INSERT INTO {s}.jobs (idempotency_key, status, created_at) VALUES
		('pay:1', 'SUCCEEDED', '2026-12-01T10:00:00Z'), ('pay:1', 'SUCCEEDED', '2026-12-01T10:00:05Z'),
		('pay:2', 'SUCCEEDED', '2026-12-01T10:01:00Z')`)
	sql := "CREATE UNIQUE INDEX CONCURRENTLY jobs_key ON " + fx.table("jobs") + " (idempotency_key)"
	if _, err := fx.Admin.Exec(context.Background(), sql); err == nil || !strings.Contains(err.Error(), "could not create unique index") {
		t.Fatalf("CREATE UNIQUE INDEX CONCURRENTLY over duplicates: %v", err)
	}
	rep, res := fx.inspect(store.Options{Table: fx.table("jobs"), Checks: []string{store.CheckCatalog, store.CheckDuplicates}})
	if got, want := codes(rep), []string{"error STORE_DUPLICATE_KEYS", "error STORE_INDEX_INVALID"}; !slices.Equal(got, want) {
		t.Fatalf("findings %v, want %v", got, want)
	}
	tr := res.Tables[0]
	if tr.Coverage != "only an INVALID index: unique index jobs_key (idempotency_key)" {
		t.Errorf("coverage %q", tr.Coverage)
	}
	dup := finding(t, rep, "STORE_DUPLICATE_KEYS")
	want := `key "pay:1": 2 rows: SUCCEEDED created_at 2026-12-01T10:00:00Z; SUCCEEDED created_at 2026-12-01T10:00:05Z`
	if dup.Message != "1 key has more than one row (2 rows, 1 extra)" || len(dup.Evidence) != 1 || dup.Evidence[0] != want {
		t.Errorf("duplicate finding: %s %q", dup.Message, dup.Evidence)
	}
}

// TestOddIdentifiers: mixed case, spaces, quotes and an SQL injection
// attempt as names. They must be found and inspected, and no user text may
// reach SQL except as a quoted identifier.
func TestOddIdentifiers(t *testing.T) {
	fx := newFixture(t)
	evil := `pay"; DROP TABLE victim; --`
	fx.exec(`CREATE TABLE {s}.victim (x int);
		CREATE TABLE {s}."Payments" ("IdempotencyKey" text NOT NULL, "Status" text);
		INSERT INTO {s}."Payments" VALUES ('a', 'SUCCEEDED'), ('a', 'SUCCEEDED'), ('b', 'Weird');
		CREATE TABLE {s}."pay""; DROP TABLE victim; --" ("key""; DROP TABLE victim; --" text, status text);
		INSERT INTO {s}."pay""; DROP TABLE victim; --" VALUES ('x', 'SUCCEEDED'), ('x', 'FAILED')`)

	rep, res := fx.inspect(store.Options{Table: fx.table("Payments"), KeyColumns: `"IdempotencyKey"`, StatusColumn: `"Status"`})
	if got, want := codes(rep), []string{"error STORE_DUPLICATE_KEYS", "error STORE_NO_UNIQUE_KEY", "info STORE_NO_TRANSITION_EVIDENCE",
		"warn STORE_UNKNOWN_STATUS"}; !slices.Equal(got, want) {
		t.Errorf("mixed case: %v, want %v", got, want)
	}
	if tr := res.Tables[0]; tr.Table != `"`+fx.Name+`"."Payments"` && tr.Table != fx.Name+`."Payments"` {
		t.Errorf("table shown as %s", tr.Table)
	}

	// Unquoted Payments reads as payments, which does not exist: an input
	// error that says how to quote it.
	_, err := fx.tryInspect(store.Options{Table: fx.Name + ".Payments"})
	if !isInput(err) || !strings.Contains(err.Error(), `did you mean `+fx.Name+`."Payments"`) {
		t.Errorf("unquoted mixed case: %v", err)
	}
	_, err = fx.tryInspect(store.Options{Table: fx.table("Payments"), KeyColumns: "idempotencykey"})
	if !isInput(err) || !strings.Contains(err.Error(), `did you mean "IdempotencyKey"`) {
		t.Errorf("unquoted mixed-case column: %v", err)
	}

	// The injection attempt as a real (quoted) name: inspected as a name.
	var logged []string
	db := &loggingDB{pool: fx.ro, log: &logged}
	res, err = store.Run(context.Background(), db, store.Options{
		Table: fx.table(evil), KeyColumns: pgx.Identifier{`key"; DROP TABLE victim; --`}.Sanitize(),
		Statuses: mustStatuses(t, `succeeded=x'); DROP TABLE victim; --`), StuckAfter: time.Hour, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	rep = res.Report()
	if got := codes(rep); !slices.Contains(got, "error STORE_NO_UNIQUE_KEY") || !slices.Contains(got, "error STORE_DUPLICATE_KEYS") {
		t.Errorf("injection-named table: %v", got)
	}
	quotedTable, quotedCol := pgx.Identifier{evil}.Sanitize(), pgx.Identifier{`key"; DROP TABLE victim; --`}.Sanitize()
	for _, sql := range logged {
		rest := strings.NewReplacer(quotedTable, "", quotedCol, "").Replace(sql)
		if strings.Contains(rest, "DROP") || strings.Contains(rest, "victim") {
			t.Errorf("user text outside a quoted identifier in SQL: %s", sql)
		}
	}
	// Unquoted, the same text is not a name at all: rejected before any SQL.
	_, err = fx.tryInspect(store.Options{Table: "victim; DROP TABLE victim"})
	if !isInput(err) {
		t.Errorf("unquoted injection: %v", err)
	}
	var n int
	if err := fx.Admin.QueryRow(context.Background(), "SELECT count(*) FROM "+fx.table("victim")).Scan(&n); err != nil {
		t.Errorf("the victim table is gone: %v", err)
	}
}

func mustStatuses(t *testing.T, specs ...string) store.Statuses {
	t.Helper()
	s, err := idemtable.ParseStatuses(specs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loggingDB records every SQL text the checks send.
type loggingDB struct {
	pool *pgxpool.Pool
	log  *[]string
}

func (l *loggingDB) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) {
	tx, err := l.pool.BeginTx(ctx, o)
	return &loggingTx{Tx: tx, log: l.log}, err
}

type loggingTx struct {
	pgx.Tx
	log *[]string
}

func (l *loggingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	*l.log = append(*l.log, sql)
	return l.Tx.Query(ctx, sql, args...)
}

func (l *loggingTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	*l.log = append(*l.log, sql)
	return l.Tx.QueryRow(ctx, sql, args...)
}

// TestDataChecks1M runs every data check over a million rows with a known
// number of each problem.
func TestDataChecks1M(t *testing.T) {
	if testing.Short() {
		t.Skip("1M rows")
	}
	fx := newFixture(t)
	// Rows i = 1..1,000,000, key 'pay:i', order i, SUCCEEDED, no attempts:
	//   i % 100000 = 0 (10 rows)  a second row with the same key (duplicates)
	//   i % 50000 = 1 (20 rows)   a second row 'PAY:i ' (normalised duplicates)
	//   i % 200000 = 2 (5 rows)   a second SUCCEEDED row for order i under 'pay:i:retry'
	//   i % 100000 = 3 (10 rows)  PROCESSING since 2h ago; i % 100000 = 4 (10) PROCESSING since 5m ago
	//   i % 250000 = 5 (4 rows)   FAILED but succeeded_at set (overwritten)
	//   i % 500000 = 6 (2 rows)   'DONE' (unknown status)
	fx.exec(`CREATE TABLE {s}.payments (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, order_id bigint NOT NULL,
		status text NOT NULL, updated_at timestamptz NOT NULL, succeeded_at timestamptz);
		INSERT INTO {s}.payments (idempotency_key, order_id, status, updated_at, succeeded_at)
		SELECT 'pay:' || i, i,
		  CASE WHEN i % 100000 IN (3, 4) THEN 'PROCESSING' WHEN i % 250000 = 5 THEN 'FAILED' WHEN i % 500000 = 6 THEN 'DONE'
		    ELSE 'SUCCEEDED' END,
		  CASE WHEN i % 100000 = 3 THEN timestamptz '2026-12-01T10:00:00Z' ELSE timestamptz '2026-12-01T11:55:00Z' END,
		  CASE WHEN i % 100000 IN (3, 4) OR i % 500000 = 6 THEN NULL ELSE timestamptz '2026-12-01T11:55:00Z' END
		FROM generate_series(1, 1000000) i;
		INSERT INTO {s}.payments (idempotency_key, order_id, status, updated_at, succeeded_at)
		SELECT 'pay:' || i, i, 'SUCCEEDED', timestamptz '2026-12-01T11:56:00Z', timestamptz '2026-12-01T11:56:00Z'
		  FROM generate_series(100000, 1000000, 100000) i
		UNION ALL SELECT 'PAY:' || i || ' ', i, 'SUCCEEDED', timestamptz '2026-12-01T11:56:00Z', timestamptz '2026-12-01T11:56:00Z'
		  FROM generate_series(1, 1000000) i WHERE i % 50000 = 1
		UNION ALL SELECT 'pay:' || i || ':retry', i, 'SUCCEEDED', timestamptz '2026-12-01T11:56:00Z', timestamptz '2026-12-01T11:56:00Z'
		  FROM generate_series(1, 1000000) i WHERE i % 200000 = 2;
		ANALYZE {s}.payments`)
	start := time.Now()
	rep, res := fx.inspect(store.Options{Table: fx.table("payments"), BusinessColumns: "order_id", Samples: 3})
	t.Logf("inspected 1M rows in %s", time.Since(start))
	tr := res.Tables[0]
	if got, want := codes(rep), []string{
		"error STORE_DUPLICATE_KEYS", "error STORE_MULTIPLE_SUCCEEDED", "error STORE_NO_UNIQUE_KEY", "error STORE_SUCCEEDED_OVERWRITTEN",
		"warn STORE_DUPLICATE_KEYS_NORMALIZED", "warn STORE_FAILED_NO_ATTEMPTS", "warn STORE_STUCK_PROCESSING", "warn STORE_UNKNOWN_STATUS",
	}; !slices.Equal(got, want) {
		t.Errorf("findings\n%q\nwant\n%q", got, want)
	}
	if *tr.Rows != 1_000_035 {
		t.Errorf("rows %d", *tr.Rows)
	}
	check := func(name string, g *store.Groups, groups, rows int64, firstKey string) {
		t.Helper()
		if g == nil || g.Groups != groups || g.Rows != rows || len(g.Samples) != 3 || g.Samples[0].Key != firstKey {
			t.Errorf("%s: %+v, want %d groups, %d rows, first %s", name, g, groups, rows, firstKey)
		}
	}
	check("duplicates", tr.Duplicates, 10, 20, "pay:100000")
	check("normalized", tr.NormalizedDuplicates, 20, 40, "pay:1")
	// 'PAY:i ' beside 'pay:i' is also two keys for one order: 20 + 5.
	check("business", tr.MultipleSucceeded, 25, 50, "1")
	if s := tr.Stuck; s == nil || s.Rows != 10 || len(s.Samples) != 3 || s.Samples[0].Key != "pay:100003" || s.Samples[0].Age != "2h" {
		t.Errorf("stuck: %+v", s)
	}
	if ow := tr.Overwritten; ow == nil || ow.Rows != 4 || !slices.Equal(ow.Evidence, []string{"current row: succeeded_at is set"}) ||
		ow.Samples[0].Key != "pay:250005" {
		t.Errorf("overwritten: %+v", ow)
	}
	f := finding(t, rep, "STORE_UNKNOWN_STATUS")
	if !slices.Equal(f.Evidence, []string{"DONE: 2 rows"}) {
		t.Errorf("unknown status evidence %q", f.Evidence)
	}
	f = finding(t, rep, "STORE_DUPLICATE_KEYS")
	if f.Evidence[0] != `key "pay:100000": 2 rows: SUCCEEDED updated_at 2026-12-01T11:55:00Z; SUCCEEDED updated_at 2026-12-01T11:56:00Z` {
		t.Errorf("duplicate evidence %q", f.Evidence[0])
	}
}

// TestHistory reads transitions from a <table>_history table with lag().
func TestHistory(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.jobs VALUES ('a', 'FAILED'), ('b', 'SUCCEEDED'), ('c', 'SUCCEEDED');
		CREATE TABLE {s}.jobs_history (id bigserial, idempotency_key text, status text, changed_at timestamptz);
		INSERT INTO {s}.jobs_history (idempotency_key, status, changed_at) VALUES
		('a', 'PROCESSING', '2026-12-01T10:00:00Z'), ('a', 'SUCCEEDED', '2026-12-01T10:01:00Z'), ('a', 'FAILED', '2026-12-01T10:02:00Z'),
		('b', 'PROCESSING', '2026-12-01T10:00:00Z'), ('b', 'SUCCEEDED', '2026-12-01T10:01:00Z'),
		('c', 'SUCCEEDED', '2026-12-01T10:00:00Z'), ('c', 'processing', '2026-12-01T10:00:00Z'), ('c', 'SUCCEEDED', '2026-12-01T10:03:00Z');
		CREATE TABLE {s}.other (idempotency_key text PRIMARY KEY, status text NOT NULL);
		CREATE TABLE {s}.notime (idempotency_key text, status text)`)
	rep, res := fx.inspect(store.Options{Table: fx.table("jobs"), Checks: []string{store.CheckOverwritten}})
	f := finding(t, rep, "STORE_SUCCEEDED_OVERWRITTEN")
	want := []string{`key "c": SUCCEEDED then processing at 2026-12-01T10:00:00Z`, `key "a": SUCCEEDED then FAILED at 2026-12-01T10:02:00Z`}
	if !slices.Equal(f.Evidence, want) || res.Tables[0].Overwritten.Rows != 2 {
		t.Errorf("history evidence %q, want %q", f.Evidence, want)
	}
	if ev := res.Tables[0].Overwritten.Evidence; len(ev) != 1 || !strings.HasPrefix(ev[0], "history table ") {
		t.Errorf("evidence used: %q", ev)
	}
	// --history-table names it explicitly for a table without the suffix.
	_, res = fx.inspect(store.Options{Table: fx.table("other"), HistoryTable: fx.table("jobs_history"),
		Checks: []string{store.CheckOverwritten}})
	if res.Tables[0].Overwritten.Rows != 2 {
		t.Errorf("explicit history: %+v", res.Tables[0].Overwritten)
	}
	// Nothing to read: said as an info finding.
	rep, _ = fx.inspect(store.Options{Table: fx.table("other"), Checks: []string{store.CheckOverwritten}})
	if got := codes(rep); !slices.Equal(got, []string{"info STORE_NO_TRANSITION_EVIDENCE"}) {
		t.Errorf("no evidence: %v", got)
	}
	// A named history table that cannot be ordered is an input error.
	_, err := fx.tryInspect(store.Options{Table: fx.table("other"), HistoryTable: fx.table("notime"),
		Checks: []string{store.CheckOverwritten}})
	if !isInput(err) || !strings.Contains(err.Error(), "no timestamp column") {
		t.Errorf("history without time: %v", err)
	}
}

// TestDiscover finds idempotency tables without --table, and not their
// history tables.
func TestDiscover(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.payments (idempotency_key text PRIMARY KEY, status text);
		CREATE TABLE {s}.payments_history (idempotency_key text, status text, changed_at timestamptz);
		CREATE TABLE {s}."Inbox" ("MessageId" text, "State" text);
		CREATE TABLE {s}.users (id int, status text)`)
	rep, res := fx.inspect(store.Options{Schema: pgx.Identifier{fx.Name}.Sanitize(), Checks: []string{store.CheckCatalog}})
	var got []string
	for _, c := range res.Discovered {
		got = append(got, fmt.Sprintf("%s %s %s", c.Name.Name, c.Key, c.Status))
	}
	if want := []string{"Inbox MessageId State", "payments idempotency_key status"}; !slices.Equal(got, want) {
		t.Errorf("discovered %q, want %q", got, want)
	}
	if len(res.Tables) != 2 || !slices.Equal(codes(rep), []string{"error STORE_NO_UNIQUE_KEY", "warn STORE_KEY_NULLABLE"}) {
		t.Errorf("discovery inspection: %d tables, %v", len(res.Tables), codes(rep))
	}
	_, err := fx.tryInspect(store.Options{Schema: pgx.Identifier{fx.Name + "_none"}.Sanitize()})
	if !isInput(err) || !strings.Contains(err.Error(), "no likely idempotency table") {
		t.Errorf("empty schema: %v", err)
	}
}

// TestStatementTimeout: a check cut off by statement_timeout says what to do.
func TestStatementTimeout(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.big (idempotency_key text, status text);
		INSERT INTO {s}.big SELECT 'k' || (i % 10000), 'SUCCEEDED' FROM generate_series(1, 20000) i`)
	slow, err := connect.Postgres(context.Background(), testenv.Postgres.ConnURL(),
		connect.PostgresOptions{ReadOnly: true, StatementTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_, err = store.Run(context.Background(), slow, store.Options{Table: fx.table("big"), Statuses: idemtable.DefaultStatuses(),
		StuckAfter: time.Hour, Now: now})
	if !isSystem(err) || !strings.Contains(err.Error(), "raise {StatementTimeout}") {
		t.Errorf("timeout: %v", err)
	}
}

// TestCompositeKeyData: the data checks on a two-column key, including
// reading the duplicate rows back by key tuple.
func TestCompositeKeyData(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.inbox (tenant_id int NOT NULL, message_id text NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL);
		INSERT INTO {s}.inbox VALUES
		(1, 'm1', 'SUCCEEDED', '2026-12-01T10:00:00Z'), (1, 'm1', 'FAILED', '2026-12-01T10:01:00Z'),
		(2, 'm1', 'SUCCEEDED', '2026-12-01T10:02:00Z'), (2, 'M1 ', 'SUCCEEDED', '2026-12-01T10:03:00Z'),
		(3, 'm(1,"x")', 'SUCCEEDED', '2026-12-01T10:04:00Z'), (3, 'm(1,"x")', 'SUCCEEDED', '2026-12-01T10:05:00Z')`)
	rep, res := fx.inspect(store.Options{Table: fx.table("inbox"), KeyColumns: "tenant_id, message_id",
		Checks: []string{store.CheckDuplicates, store.CheckNormalized}})
	f := finding(t, rep, "STORE_DUPLICATE_KEYS")
	want := []string{
		`key "(1,m1)": 2 rows: SUCCEEDED created_at 2026-12-01T10:00:00Z; FAILED created_at 2026-12-01T10:01:00Z`,
		`key "(3,\"m(1,\"\"x\"\")\")": 2 rows: SUCCEEDED created_at 2026-12-01T10:04:00Z; SUCCEEDED created_at 2026-12-01T10:05:00Z`,
	}
	if !slices.Equal(f.Evidence, want) {
		t.Errorf("composite duplicates:\n%q\nwant\n%q", f.Evidence, want)
	}
	if n := res.Tables[0].NormalizedDuplicates; n == nil || n.Groups != 1 || n.Samples[0].Key != "(2,m1)" {
		t.Errorf("composite normalised: %+v", n)
	}
}

func isInput(err error) bool {
	var in *problem.Input
	return errors.As(err, &in)
}

func isSystem(err error) bool {
	var u *problem.Unavailable
	return errors.As(err, &u)
}
