package pgproxy_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/sim/chaos/pgproxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

type recorder struct {
	mu        sync.Mutex
	seen      []string
	committed []string
	drop      string // withhold the commit reply of writes holding this
	cut       bool   // withhold a COMMIT and drop the connection
	pending   []string
}

func (r *recorder) Committing(c *pgproxy.Conn, ws []*pgproxy.Statement) bool {
	for _, w := range ws {
		if r.drop != "" && strings.Contains(string(w.Raw), r.drop) {
			return false
		}
	}
	return true
}

func (r *recorder) Statement(c *pgproxy.Conn, s *pgproxy.Statement) bool {
	if r.cut && pgproxy.Commits(s.SQL) {
		ws := c.PendingWrites()
		r.mu.Lock()
		for _, w := range ws {
			r.pending = append(r.pending, w.SQL)
		}
		r.mu.Unlock()
		c.Pair.Close()
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.Contains(s.SQL, "chaos_t") {
		r.seen = append(r.seen, s.Kind.String())
	}
	return true
}

func (r *recorder) Committed(c *pgproxy.Conn, ws []*pgproxy.Statement) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var params []string
	for _, w := range ws {
		// the business key travels in the Bind's parameter values
		i := strings.Index(string(w.Raw), "key-")
		params = append(params, string(w.Raw[i:i+5]))
	}
	r.committed = append(r.committed, strings.Join(params, "+"))
}

func (r *recorder) Closed(*pgproxy.Conn) {}

// TestCommittedSeesDurableWritesOnly runs pgx (extended protocol, cached
// prepared statements) through the proxy: an autocommit insert, a
// transaction of two inserts, a rolled-back one and a failed one. Only the
// first two are reported as committed, with their parameter values.
func TestCommittedSeesDurableWritesOnly(t *testing.T) {
	rec := &recorder{}
	_, conn, table := throughProxy(t, rec)
	ctx := context.Background()
	ins := "insert into " + table + " (k) values ($1)"
	mustExec := func(sql string, args ...any) {
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	mustExec("create index on " + table + " (k)") // DDL: other
	mustExec(ins, "key-1")
	var n int
	if err := conn.QueryRow(ctx, "select count(*) from "+table+" where k = $1", "key-1").Scan(&n); err != nil || n != 1 {
		t.Fatal(err, n)
	}
	tx, _ := conn.Begin(ctx)
	tx.Exec(ctx, ins, "key-2")
	tx.Exec(ctx, ins, "key-3")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx, _ = conn.Begin(ctx)
	tx.Exec(ctx, ins, "key-4")
	tx.Rollback(ctx)
	tx, _ = conn.Begin(ctx)
	tx.Exec(ctx, ins, "key-5")
	if _, err := tx.Exec(ctx, ins, "key-1"); err == nil {
		t.Fatal("duplicate key accepted")
	}
	tx.Commit(ctx) // the server answers ROLLBACK
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := strings.Join(rec.committed, ","); got != "key-1,key-2+key-3" {
		t.Fatalf("committed %q, want key-1,key-2+key-3", got)
	}
	if got := strings.Join(rec.seen, ","); !strings.HasPrefix(got, "other,write,read,write,write") {
		t.Fatalf("statements classified %q", got)
	}
}

func TestClassify(t *testing.T) {
	for sql, want := range map[string]pgproxy.Kind{
		"INSERT INTO t VALUES (1)":                                  pgproxy.KindWrite,
		"  /* c */ -- x\n update t set a=1":                         pgproxy.KindWrite,
		"with x as (insert into t values (1) returning *) select 1": pgproxy.KindWrite,
		"with x as (select 1) select * from x":                      pgproxy.KindRead,
		"(select 1)":                                                pgproxy.KindRead,
		"begin":                                                     pgproxy.KindTxn,
		"create table t (a int)":                                    pgproxy.KindOther,
		"select 1; delete from t":                                   pgproxy.KindWrite,
	} {
		if got := pgproxy.Classify(sql); got != want {
			t.Errorf("Classify(%q) = %s, want %s", sql, got, want)
		}
	}
}

// A commit whose reply the handler withholds: the client's connection dies
// without the answer, the write is durable all the same, and Committed
// still learns of it.
func TestCommitReplyWithheld(t *testing.T) {
	rec := &recorder{drop: "key-9"}
	direct, conn, table := throughProxy(t, rec)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "insert into "+table+" (k) values ($1)", "key-9"); err == nil {
		t.Fatal("the insert succeeded although its reply was withheld")
	}
	var n int
	if err := direct.QueryRow(ctx, "select count(*) from "+table+" where k = 'key-9'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the write is not durable (%d rows, %v)", n, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := strings.Join(rec.committed, ","); got != "key-9" {
		t.Fatalf("committed %q, want key-9", got)
	}
}

func TestCommits(t *testing.T) {
	for sql, want := range map[string]bool{
		"COMMIT": true, "commit;": true, "END": true, " commit work ": true, "end transaction": true,
		"COMMIT PREPARED 'x'": false, "commit; select 1": false, "begin": false, "insert into t values (1)": false, "": false,
	} {
		if got := pgproxy.Commits(sql); got != want {
			t.Errorf("Commits(%q) = %v, want %v", sql, got, want)
		}
	}
}

// A COMMIT the handler withholds while it drops the connection: the
// handler saw the transaction's writes, the client gets an error, and the
// server rolled the writes back.
func TestCommitWithheldRollsBack(t *testing.T) {
	rec := &recorder{cut: true}
	direct, conn, table := throughProxy(t, rec)
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "insert into "+table+" (k) values ($1)", "key-7"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err == nil {
		t.Fatal("the commit succeeded although it was withheld")
	}
	var n int
	if err := direct.QueryRow(ctx, "select count(*) from "+table+" where k = 'key-7'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the write survived (%d rows, %v)", n, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.pending) != 1 || !strings.HasPrefix(rec.pending[0], "insert into "+table) {
		t.Fatalf("pending writes at the commit %q, want the insert", rec.pending)
	}
}

// throughProxy creates a table of its own and returns a direct connection
// and one through the proxy with h watching it.
func throughProxy(t *testing.T, h pgproxy.Handler) (direct, proxied *pgx.Conn, table string) {
	t.Helper()
	raw := testenv.Need(t, testenv.Postgres)
	u, _ := url.Parse(raw)
	gate := proxy.NewGate()
	ln, err := proxy.Listen(proxy.Config{Dial: proxy.DialTCP(u.Host), Gate: func() *proxy.Gate { return gate }, Pumps: pgproxy.Pumps(h)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ctx := context.Background()
	if direct, err = pgx.Connect(ctx, raw); err != nil {
		t.Fatal(err)
	}
	table = testenv.UniqueName("chaos_t")
	if _, err := direct.Exec(ctx, "create table "+table+" (k text primary key)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		direct.Exec(context.Background(), "drop table "+table)
		direct.Close(context.Background())
	})
	pu := *u
	pu.Host = ln.Addr()
	if proxied, err = pgx.Connect(ctx, pu.String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxied.Close(context.Background()) })
	return direct, proxied, table
}

// replier is a recorder that also learns each statement's reply tag.
type replier struct {
	recorder
	tags []string
}

func (r *replier) Replied(_ *pgproxy.Conn, s *pgproxy.Statement, tag string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.Contains(s.SQL, "chaos_t") {
		r.tags = append(r.tags, s.Kind.String()+" "+tag)
	}
}

// TestReplierLearnsEachAnswer: a handler that is a Replier learns what
// the server answered each statement (extended protocol, and a simple
// query): a read that found no row is told apart from one that found
// one.
func TestReplierLearnsEachAnswer(t *testing.T) {
	rec := &replier{}
	_, conn, table := throughProxy(t, rec)
	ctx := context.Background()
	var k string
	if err := conn.QueryRow(ctx, "select k from "+table+" where k = $1", "key-1").Scan(&k); err != pgx.ErrNoRows {
		t.Fatalf("read of a missing row: %v", err)
	}
	if _, err := conn.Exec(ctx, "insert into "+table+" (k) values ($1)", "key-1"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "select k from "+table+" where k = $1", "key-1").Scan(&k); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "select k from "+table, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := "read SELECT 0|write INSERT 0 1|read SELECT 1|read SELECT 1"
	if got := strings.Join(rec.tags, "|"); got != want {
		t.Errorf("replies %q, want %q", got, want)
	}
}

// TestStartupRequests: the untyped messages that open a connection are
// forwarded. An SSLRequest gets the server's answer: encrypted, the
// proxy forwards bytes only and sees no statement; not, it reads them as
// usual. A CancelRequest on its own connection cancels the running query.
func TestStartupRequests(t *testing.T) {
	rec := &recorder{}
	_, conn, table := throughProxy(t, rec)
	ctx := context.Background()
	for _, mode := range []string{"prefer", "disable"} {
		cfg := conn.Config().ConnString()
		u, _ := url.Parse(cfg)
		q := u.Query()
		q.Set("sslmode", mode)
		u.RawQuery = q.Encode()
		c, err := pgx.Connect(ctx, u.String())
		if err != nil {
			t.Fatalf("sslmode=%s through the proxy: %v", mode, err)
		}
		_, encrypted := c.PgConn().Conn().(*tls.Conn)
		t.Logf("sslmode=%s: encrypted %v", mode, encrypted)
		rec.mu.Lock()
		before := len(rec.seen)
		rec.mu.Unlock()
		if _, err := c.Exec(ctx, "select count(*) from "+table); err != nil {
			t.Fatalf("sslmode=%s: %v", mode, err)
		}
		c.Close(ctx)
		rec.mu.Lock()
		seen := len(rec.seen) - before
		rec.mu.Unlock()
		if seen != map[bool]int{false: 1, true: 0}[encrypted] {
			t.Errorf("sslmode=%s, encrypted %v: the handler saw %d statements", mode, encrypted, seen)
		}
	}
	done := make(chan error, 1)
	go func() { _, err := conn.Exec(ctx, "select pg_sleep(30)"); done <- err }()
	for {
		// Until the query has started, a cancel has nothing to cancel.
		if err := conn.PgConn().CancelRequest(ctx); err != nil {
			t.Fatalf("cancel request through the proxy: %v", err)
		}
		select {
		case err := <-done:
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "57014" {
				t.Fatalf("the query ended with %v, want query_canceled (57014)", err)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
