package cache_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"slices"
	"strings"
	"testing"
	"time"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// fixture is one test's schema on the real PostgreSQL and key prefix on
// the real Redis, both removed at the end.
type fixture struct {
	*testenv.PGSchema
	t      *testing.T
	ro     *pgxpool.Pool
	redis  *redis.Client
	prefix string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	redisURL := testenv.Need(t, testenv.Redis)
	fx := &fixture{PGSchema: testenv.NewPGSchema(t, "cache"), t: t}
	fx.prefix = fx.Name + ":job:"
	var err error
	if fx.ro, err = connect.Postgres(context.Background(), testenv.Postgres.ConnURL(),
		connect.PostgresOptions{ReadOnly: true, StatementTimeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fx.ro.Close)
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	fx.redis = redis.NewClient(opts)
	t.Cleanup(func() {
		testenv.DeleteKeys(context.Background(), fx.redis, fx.Name)
		fx.redis.Close()
	})
	return fx
}

func (fx *fixture) exec(sql string) { fx.t.Helper(); fx.Exec(sql) }

// set writes cache entries: key suffix -> value, with a TTL (0: none).
func (fx *fixture) set(ttl time.Duration, kv ...string) {
	fx.t.Helper()
	ctx := context.Background()
	for i := 0; i < len(kv); i += 2 {
		if err := fx.redis.Set(ctx, fx.prefix+kv[i], kv[i+1], ttl).Err(); err != nil {
			fx.t.Fatal(err)
		}
	}
}

func (fx *fixture) options(table string) auditcache.Options {
	p, err := auditcache.ParsePattern(fx.prefix + "{key}")
	if err != nil {
		fx.t.Fatal(err)
	}
	return auditcache.Options{Pattern: p, Decoder: auditcache.Decoder{Kind: "string"}, Table: pgx.Identifier{fx.Name, table}.Sanitize(),
		Statuses: idemtable.DefaultStatuses(), Batch: 1000, Samples: 5}
}

func (fx *fixture) audit(o auditcache.Options) (*findings.Report, *auditcache.Result) {
	fx.t.Helper()
	res, err := auditcache.Run(context.Background(), auditcache.Deps{Cache: fx.redis, DB: fx.ro}, o)
	if err != nil {
		fx.t.Fatal(err)
	}
	return res.Report(), res
}

// summary is "severity CODE count: sample keys" per finding, sorted.
func (fx *fixture) summary(rep *findings.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		var keys []string
		for _, e := range f.Evidence {
			k, _, _ := strings.Cut(strings.TrimPrefix(e, fx.prefix), ":")
			keys = append(keys, k)
		}
		out = append(out, fmt.Sprintf("%s %s %s", f.Severity, f.Code, strings.Join(keys, ",")))
	}
	slices.Sort(out)
	return out
}

// TestEveryDisagreement: a cache with one key of each kind of disagreement,
// graded by what is known about live messages.
func TestEveryDisagreement(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL,
			updated_at timestamptz NOT NULL DEFAULT '2026-12-01T10:00:00Z');
		INSERT INTO {s}.jobs (idempotency_key, status) VALUES
		('agree', 'SUCCEEDED'), ('notdone', 'SUCCEEDED'), ('notdone2', 'SUCCEEDED'), ('done', 'PROCESSING'),
		('stale', 'FAILED'), ('nottl', 'PROCESSING'), ('missing', 'SUCCEEDED'), ('lower', 'SUCCEEDED')`)
	fx.set(time.Hour, "agree", "SUCCEEDED", "notdone", "PROCESSING", "notdone2", "FAILED", "done", "SUCCEEDED",
		"doneorphan", "SUCCEEDED", "stale", "PROCESSING", "orphan", "PROCESSING", "weird", "DONE", "lower", "succeeded")
	fx.set(0, "nottl", "PROCESSING")
	if err := fx.redis.HSet(context.Background(), fx.prefix+"hash", "status", "SUCCEEDED").Err(); err != nil {
		t.Fatal(err)
	}
	o := fx.options("jobs")
	want := []string{
		"info CACHE_ORPHAN orphan",
		"warn CACHE_DONE_DB_NOT done,doneorphan",
		"warn CACHE_NOT_DONE_DB_SUCCEEDED notdone,notdone2",
		"warn CACHE_NO_TTL hash,nottl",
		"warn CACHE_STALE stale",
		"warn CACHE_UNDECODABLE hash",
		"warn CACHE_UNKNOWN_STATUS weird",
	}
	// Both ways of reading the table give the same answer.
	for _, lookup := range []string{auditcache.LookupBatch, auditcache.LookupScan} {
		o.Lookup = lookup
		rep, res := fx.audit(o)
		if got := fx.summary(rep); !slices.Equal(got, want) {
			t.Errorf("%s, unknown liveness:\n%q\nwant\n%q", lookup, got, want)
		}
		if res.Read != 11 || res.Compared != 9 || res.Agree != 3 || res.Transient != 0 || res.Lookup != lookup {
			t.Errorf("%s: read %d compared %d agree %d transient %d lookup %s", lookup, res.Read, res.Compared, res.Agree,
				res.Transient, res.Lookup)
		}
	}
	o.Lookup = ""

	// Live keys known: live ones are errors, the rest info; a live key
	// missing from the cache while SUCCEEDED is reported.
	o.LiveKeys, o.LiveSource = []string{"notdone", fx.prefix + "missing", "agree"}, "--live-keys test"
	rep, _ := fx.audit(o)
	got := fx.summary(rep)
	for _, w := range []string{"error CACHE_NOT_DONE_DB_SUCCEEDED notdone", "info CACHE_NOT_DONE_DB_SUCCEEDED notdone2",
		"warn CACHE_MISSING_SUCCEEDED missing"} {
		if !slices.Contains(got, w) {
			t.Errorf("live keys: no %q in %q", w, got)
		}
	}
	o.CacheAuthoritative = true
	rep, _ = fx.audit(o)
	if got := fx.summary(rep); !slices.Contains(got, "error CACHE_MISSING_SUCCEEDED missing") {
		t.Errorf("authoritative cache: %q", got)
	}
	o.LiveKeys, o.CacheAuthoritative, o.AssumeLive = nil, false, true
	rep, _ = fx.audit(o)
	if got := fx.summary(rep); !slices.Contains(got, "error CACHE_NOT_DONE_DB_SUCCEEDED notdone,notdone2") {
		t.Errorf("assume live: %q", got)
	}
	f := rep.Findings[0]
	if f.Code != "CACHE_NOT_DONE_DB_SUCCEEDED" || f.Evidence[0] != fx.prefix+"notdone: cache PROCESSING (ttl 1h), "+
		"database SUCCEEDED (updated_at 2026-12-01T10:00:00Z)" {
		t.Errorf("evidence: %s %q", f.Code, f.Evidence)
	}
}

// TestStaleAndTypes: a stale non-final status, and keys that cannot be a
// value of the key column's type never fail a batch.
func TestStaleAndTypes(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (id bigint PRIMARY KEY, state text NOT NULL);
		INSERT INTO {s}.jobs VALUES (1, 'FAILED'), (2, 'PROCESSING'), (3, 'SUCCEEDED')`)
	fx.set(time.Hour, "1", "PROCESSING", "2", "FAILED", "3", "SUCCEEDED", "abc", "PROCESSING", "99999999999999999999999", "FAILED")
	o := fx.options("jobs")
	o.KeyColumn = "id"
	rep, res := fx.audit(o)
	want := []string{"info CACHE_ORPHAN 99999999999999999999999,abc", "warn CACHE_STALE 1,2"}
	if got := fx.summary(rep); !slices.Equal(got, want) || res.StatusColumn != "state" {
		t.Errorf("got %q (status column %q), want %q", got, res.StatusColumn, want)
	}
	// A bigint key compares by value (007 = 7): only the database can match it.
	o.Lookup = auditcache.LookupScan
	if _, err := auditcache.Run(context.Background(), auditcache.Deps{Cache: fx.redis, DB: fx.ro}, o); !isInput(err) ||
		!strings.Contains(err.Error(), "compared by value") {
		t.Errorf("--lookup scan on a bigint key: %v", err)
	}
}

// TestJSONAndHashValues decodes statuses from JSON paths and hash fields.
func TestJSONAndHashValues(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.jobs VALUES ('a', 'SUCCEEDED'), ('b', 'SUCCEEDED'), ('c', 'SUCCEEDED')`)
	fx.set(time.Hour, "a", `{"data":{"state":"SUCCEEDED"}}`, "b", `{"data":{"state":"PROCESSING"}}`, "c", `{"data":{}}`, "d", "not json")
	o := fx.options("jobs")
	if o.Decoder, _ = auditcache.ParseDecoder("json:data.state"); o.Decoder.Kind != "json" {
		t.Fatal("decoder")
	}
	rep, _ := fx.audit(o)
	want := []string{"warn CACHE_NOT_DONE_DB_SUCCEEDED b", "warn CACHE_UNDECODABLE c,d"}
	if got := fx.summary(rep); !slices.Equal(got, want) {
		t.Errorf("json: %q, want %q", got, want)
	}
	undecodable := rep.Findings[1].Evidence
	if !strings.HasSuffix(undecodable[0], "no data.state in the JSON") || !strings.Contains(undecodable[1], "not JSON") {
		t.Errorf("json problems: %q", undecodable)
	}

	ctx := context.Background()
	fx.redis.Del(ctx, fx.prefix+"a", fx.prefix+"b", fx.prefix+"c", fx.prefix+"d")
	fx.redis.HSet(ctx, fx.prefix+"a", "status", "SUCCEEDED", "at", "1")
	fx.redis.HSet(ctx, fx.prefix+"b", "status", "FAILED")
	fx.redis.HSet(ctx, fx.prefix+"c", "other", "x")
	fx.set(0, "d", "SUCCEEDED")
	o.Decoder, _ = auditcache.ParseDecoder("hash:status")
	rep, _ = fx.audit(o)
	want = []string{"warn CACHE_NOT_DONE_DB_SUCCEEDED b", "warn CACHE_NO_TTL a,b,c,d", "warn CACHE_UNDECODABLE c,d"}
	if got := fx.summary(rep); !slices.Equal(got, want) {
		t.Errorf("hash: %q, want %q", got, want)
	}
}

// TestInFlightIsNotAFinding: a disagreement that is gone at the re-read
// (the cache write arrived) is counted as in flight, not reported.
func TestInFlightIsNotAFinding(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.jobs VALUES ('a', 'SUCCEEDED'), ('b', 'SUCCEEDED')`)
	fx.set(time.Hour, "a", "PROCESSING", "b", "PROCESSING")
	o := fx.options("jobs")
	o.Recheck = 50 * time.Millisecond
	// The meter hears of the batch once it is compared, before the grace
	// period: the cache catches up for "a" then.
	o.Progress = &onAdd{fn: func() { fx.set(time.Hour, "a", "SUCCEEDED") }}
	rep, res := fx.audit(o)
	if got, want := fx.summary(rep), []string{"warn CACHE_NOT_DONE_DB_SUCCEEDED b"}; !slices.Equal(got, want) || res.Transient != 1 {
		t.Errorf("got %q, %d in flight; want %q, 1", got, res.Transient, want)
	}
}

type onAdd struct {
	fn   func()
	done bool
}

func (m *onAdd) SetTotal(int64) {}
func (m *onAdd) Done()          {}
func (m *onAdd) Add(int64) {
	if !m.done {
		m.done = true
		m.fn()
	}
}

// TestManyKeys crosses SCAN pages and database batches.
func TestManyKeys(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.jobs SELECT 'k' || i, 'SUCCEEDED' FROM generate_series(1, 5000) i;
		ANALYZE {s}.jobs`)
	ctx := context.Background()
	pipe := fx.redis.Pipeline()
	for i := 1; i <= 5000; i++ {
		v := "SUCCEEDED"
		if i%1000 == 0 {
			v = "PROCESSING"
		}
		pipe.Set(ctx, fmt.Sprintf("%sk%d", fx.prefix, i), v, time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	o := fx.options("jobs")
	o.Batch = 300
	rep, res := fx.audit(o)
	// The cache may hold the whole (analysed, small) table: one scan of it.
	if res.Read != 5000 || res.Agree != 4995 || len(rep.Findings) != 1 || !strings.HasPrefix(rep.Findings[0].Message, "5 keys:") ||
		res.Lookup != "scan" {
		t.Errorf("read %d agree %d lookup %s findings %q", res.Read, res.Agree, res.Lookup, fx.summary(rep))
	}
	if got := fx.summary(rep); got[0] != "warn CACHE_NOT_DONE_DB_SUCCEEDED k1000,k2000,k3000,k4000,k5000" {
		t.Errorf("samples not sorted by key: %q", got)
	}
}

func TestInputErrors(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.nokey (id int, payload text)`)
	o := fx.options("nokey")
	_, err := auditcache.Run(context.Background(), auditcache.Deps{Cache: fx.redis, DB: fx.ro}, o)
	if !isInput(err) || !strings.Contains(err.Error(), "cannot tell the key column") {
		t.Errorf("no key column: %v", err)
	}
	o.KeyColumn = "id"
	_, err = auditcache.Run(context.Background(), auditcache.Deps{Cache: fx.redis, DB: fx.ro}, o)
	if !isInput(err) || !strings.Contains(err.Error(), "{StatusColumn}") {
		t.Errorf("no status column: %v", err)
	}
	o.Table = pgx.Identifier{fx.Name, "missing"}.Sanitize()
	_, err = auditcache.Run(context.Background(), auditcache.Deps{Cache: fx.redis, DB: fx.ro}, o)
	if !isInput(err) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("no table: %v", err)
	}
}

// TestNoKeys: a pattern that matches nothing must not pass silently.
func TestNoKeys(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL)`)
	rep, _ := fx.audit(fx.options("jobs"))
	if len(rep.Findings) != 1 || rep.Findings[0].Code != "CACHE_NO_KEYS" || rep.Findings[0].Severity != findings.Warn {
		t.Errorf("findings %+v", rep.Findings)
	}
}

func isInput(err error) bool {
	var in *problem.Input
	return errors.As(err, &in)
}
