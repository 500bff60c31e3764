package cli_test

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

// Script commands that set up the real services for a script, with the
// clean-up deferred to the end of the script whatever happens:
//
//	sql setup.sql        run the statements of a file in the script's own
//	                     database, created on first use and named $PREFIX;
//	                     its URL is then $SQLDB
//	redis setup.redis    run the Redis commands of a file, one per line
//
// ${PREFIX} (and any other variable) is expanded in the file. A database of
// its own keeps table names (public.payments) and so the expected output
// the same from run to run. Everything named after $PREFIX is dropped at
// the end: the database and roles in PostgreSQL, keys and ACL users in
// Redis.

var cleanups sync.Map // *testscript.TestScript -> set of services registered

func deferCleanup(ts *testscript.TestScript, service string, fn func()) {
	v, _ := cleanups.LoadOrStore(ts, &sync.Map{})
	if _, done := v.(*sync.Map).LoadOrStore(service, true); !done {
		ts.Defer(fn)
	}
}

func scriptFile(ts *testscript.TestScript, args []string, usage string) string {
	if len(args) != 1 {
		ts.Fatalf("usage: %s", usage)
	}
	return os.Expand(ts.ReadFile(args[0]), ts.Getenv)
}

// cmdSQL runs each statement of a file (split on ';' at the end of a line)
// in autocommit, so CREATE INDEX CONCURRENTLY works; `! sql` expects the
// last statement to fail.
func cmdSQL(ts *testscript.TestScript, neg bool, args []string) {
	text := scriptFile(ts, args, "sql file.sql")
	ctx := context.Background()
	prefix := ts.Getenv("PREFIX")
	dbURL := ts.Getenv("SQLDB")
	if dbURL == "" {
		admin, err := pgx.Connect(ctx, testenv.Postgres.ConnURL())
		ts.Check(err)
		_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{prefix}.Sanitize())
		admin.Close(ctx)
		ts.Check(err)
		deferCleanup(ts, "postgres", func() { dropPostgres(prefix) })
		u, err := url.Parse(testenv.Postgres.ConnURL())
		ts.Check(err)
		u.Path = "/" + prefix
		dbURL = u.String()
		ts.Setenv("SQLDB", dbURL)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	ts.Check(err)
	defer conn.Close(ctx)
	stmts := splitSQL(text)
	for i, st := range stmts {
		_, err := conn.Exec(ctx, st)
		if err != nil && !(neg && i == len(stmts)-1) {
			ts.Fatalf("sql: %s: %v", st, err)
		}
		if err == nil && neg && i == len(stmts)-1 {
			ts.Fatalf("sql: %s: succeeded, want an error", st)
		}
	}
}

func splitSQL(text string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			if st := strings.TrimSpace(cur.String()); st != "" {
				out = append(out, st)
			}
			cur.Reset()
		}
	}
	if st := strings.TrimSpace(cur.String()); st != "" {
		out = append(out, st)
	}
	return out
}

func dropPostgres(prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Postgres.ConnURL())
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{prefix}.Sanitize()+" WITH (FORCE)")
	rows, err := conn.Query(ctx, "SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)", prefix)
	if err != nil {
		return
	}
	roles, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, r := range roles {
		_, _ = conn.Exec(ctx, "DROP ROLE "+pgx.Identifier{r}.Sanitize())
	}
}

// cmdRedis runs one Redis command per line of a file: words separated by
// spaces, 'single-quoted' words kept whole (JSON values).
func cmdRedis(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! redis")
	}
	text := scriptFile(ts, args, "redis file.redis")
	ctx := context.Background()
	opts, err := redis.ParseURL(testenv.Redis.ConnURL())
	ts.Check(err)
	c := redis.NewClient(opts)
	defer c.Close()
	prefix := ts.Getenv("PREFIX")
	deferCleanup(ts, "redis", func() { dropRedis(opts, prefix) })
	pipe := c.Pipeline()
	for _, line := range strings.Split(text, "\n") {
		words := splitWords(line)
		if len(words) == 0 || strings.HasPrefix(words[0], "#") {
			continue
		}
		cmd := make([]any, len(words))
		for i, w := range words {
			cmd[i] = w
		}
		pipe.Do(ctx, cmd...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		ts.Fatalf("redis: %v", err)
	}
}

func splitWords(line string) []string {
	var out []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '\'' {
			end := strings.IndexByte(line[1:], '\'')
			if end < 0 {
				return append(out, line[1:])
			}
			out = append(out, line[1:end+1])
			line = line[end+2:]
			continue
		}
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			return append(out, line)
		}
		out = append(out, line[:end])
		line = line[end:]
	}
	return out
}

func dropRedis(opts *redis.Options, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := redis.NewClient(opts)
	defer c.Close()
	testenv.DeleteKeys(ctx, c, prefix)
	users, _ := c.Do(ctx, "ACL", "USERS").StringSlice()
	for _, u := range users {
		if strings.HasPrefix(u, prefix) {
			c.Do(ctx, "ACL", "DELUSER", u)
		}
	}
}
