package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/mattn/go-runewidth"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/txtar"
)

var escapes = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// TestTablesFitTheTerminal runs each command with tables in its view, in
// process, on a terminal 60, 80, 120 and 200 columns wide, colour on, and
// fails on any line wider than the terminal: a table line never is, and a
// line of prose only when it holds a word wider than the terminal (a
// replay command's token, left whole so that it copies as one line; not
// a value shown cut, as dlq peek's headers, which is cut to the width).
func TestTablesFitTheTerminal(t *testing.T) {
	at := scriptFiles(t)
	prefix, redisURL := seedLocks(t)
	dlq := loadDLQ(t, at("dlq-stats-groups.txtar", "dlq.jsonl"))
	store, cache := seedStore(t, redisURL)
	amqpURL, pgURL := testenv.AMQP.ConnURL(), testenv.Postgres.ConnURL()
	tmp := t.TempDir()
	cases := [][]string{
		{"simulate", "crash"},
		{"simulate", "lock-expiry"},
		{"simulate", "matrix", "crash", "lock-expiry"},
		{"simulate", "replay", "dsim1_ZHNpbTF8Y3Jhc2h8MTAwMDAwMDAxMHx3Mi5qMS5rMS50dGwzMDAwMC5hY2swLnBhdXNlNjAwMDAubGFnNTAw" +
			"MC5iYWNrNTAwMC5hdHQ1LnJlbjIwMC5tYXgyMDAwLmppdDIwLmR1cGF0MC5kbDIwfGMxLjI1NC5wMC4wLmQwLnUwLm" +
			"YwfDEwc3wwfHMwLnMwLnMwLnQuczAuczAuYzY3MzI4LnMwLnMwLnMwLnQuczB8ZXhwZWN0ZWQ"},
		{"doctor", "--config", at("doctor-offline.txtar", "naive.yaml")},
		{"audit", "logs", at("audit-logs.txtar", "fleet.log")},
		{"audit", "logs", at("audit-logs.txtar", "fleet.log"), "--incident", "ord-0000010"},
		{"inspect", "ttl", at("inspect-ttl-csv.txtar", "runs.csv"), "--ttl", "2m,settlement=10m"},
		{"keys", "unstable", at("keys-unstable.txtar", "app.log")},
		{"explain", "--output", "table"},
		{"dlq", "stats", "--queue", dlq, "--amqp-url", testenv.AMQP.ConnURL()},
		{"inspect", "lock", "--redis-url", redisURL, "--pattern", prefix + ":*"},
		{"inspect", "lock", "--redis-url", redisURL, "--pattern", prefix + ":*", "-v"},
		{"inspect", "store", "--database-url", pgURL, "--table", store.Table("payments"), "--business-column", "order_id"},
		{"audit", "cache", "--database-url", pgURL, "--redis-url", redisURL, "--cache-pattern", cache + ":job:status:{key}",
			"--table", store.Table("jobs"), "--recheck", "0"},
		{"dlq", "peek", "--queue", dlq, "--amqp-url", amqpURL, "-n", "3"},
		{"dlq", "export", "--queue", dlq, "--amqp-url", amqpURL, "--out", filepath.Join(tmp, "export.jsonl"), "--force"},
		{"dlq", "replay", "--queue", dlq, "--amqp-url", amqpURL, "--journal", filepath.Join(tmp, "dry.journal")},
		// (its own random prefix for queues, schema and keys, removed after;
		// a virtual second of 5ms keeps it to half a second a width)
		{"simulate", "crash", "--live", "--time-scale", "5ms", "--redis-url", redisURL, "--database-url", pgURL, "--amqp-url", amqpURL},
	}
	for _, args := range cases {
		for _, width := range []int{60, 80, 120, 200} {
			name := strings.Join(args[:2], " ")
			if slices.Contains(args, "--live") {
				name += " live"
			}
			t.Run(fmt.Sprintf("%s/%d", name, width), func(t *testing.T) {
				ios, _, stdout, stderr := iostreams.Test()
				ios.SetStdoutTTY(true)
				ios.SetWidth(width)
				ios.Getenv = func(k string) string {
					return map[string]string{"DUPCTL_NOW": "2026-12-01T12:00:00Z", "COLUMNS": "999"}[k]
				}
				code := cli.Run(context.Background(), args, ios)
				out := stdout.String()
				coloured := strings.Contains(out, "\x1b[") || args[0] == "explain" // (explain's list has no colour)
				if code > 1 || !coloured || strings.Count(out, "\n") < 5 {
					t.Fatalf("%v: exit %d, want a coloured table view:\n%s%s", args, code, out, stderr)
				}
				for i, line := range strings.Split(escapes.ReplaceAllString(out, ""), "\n") {
					w, word := runewidth.StringWidth(line), 0
					for _, f := range strings.Fields(line) {
						// (a value shown cut is no token to copy whole: it fits)
						if !strings.HasSuffix(f, "...") && !strings.HasSuffix(f, "…") {
							word = max(word, runewidth.StringWidth(f))
						}
					}
					if w > width && word <= width-4 {
						t.Errorf("%v at %d columns: line %d is %d wide: %q", args, width, i+1, w, line)
					}
				}
			})
		}
	}
}

// TestPipedTablesKeepWholeRows: without a terminal and without $COLUMNS a
// table keeps whole rows (as the testscript goldens do), and no fitting
// mark reaches the output.
func TestPipedTablesKeepWholeRows(t *testing.T) {
	ios, _, stdout, _ := iostreams.Test()
	ios.Getenv = func(k string) string { return map[string]string{"DUPCTL_NOW": "2026-12-01T12:00:00Z"}[k] }
	if code := cli.Run(context.Background(), []string{"simulate", "crash"}, ios); code != 0 {
		t.Fatalf("exit %d", code)
	}
	row := regexp.MustCompile(`(?m)^safe +ok +ok +exhaustive, [0-9,]+ states +` +
		`the safe flow: business-key lock with token unlock and renewal, effect \+ record in one transaction, ` +
		`stable key, status from the database, guarded writes, ack after commit$`)
	if !row.MatchString(stdout.String()) || strings.Contains(stdout.String(), "\uE001") {
		t.Fatalf("piped output is not whole rows:\n%s", stdout)
	}
}

// scriptFiles returns at: at(script, name) is the path of a file of a
// testscript's archive (testdata/script/<script>), written with the
// archive's other files into a temporary directory of the test's own.
func scriptFiles(t *testing.T) func(script, name string) string {
	dir := t.TempDir()
	return func(script, name string) string {
		a, err := txtar.ParseFile(filepath.Join("../../testdata/script", script))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, name)
	}
}

// seedLocks writes a fleet of locks of several makers, some without a
// TTL, some with long keys, for inspect lock's tables.
func seedLocks(t *testing.T) (prefix, url string) {
	url = testenv.Need(t, testenv.Redis)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	prefix = testenv.UniqueName("fit")
	ctx := context.Background()
	t.Cleanup(func() { testenv.DeleteKeys(ctx, c, prefix); c.Close() })
	for i := range 6 {
		c.Set(ctx, fmt.Sprintf("%s:lock:payment:tenant-%04d:order:%012d", prefix, i, i*7919), fmt.Sprintf("tok-%08x", i*2654435761), time.Hour)
		c.Set(ctx, fmt.Sprintf("%s:lock:job:8d0c5a%02d-3b2a-4c1d-9e8f-0a1b2c3d4e5f", prefix, i), "1", 0)
	}
	c.HSet(ctx, prefix+":orders:7", "6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1")
	c.PExpire(ctx, prefix+":orders:7", time.Minute)
	return prefix, url
}

// seedStore writes, in a schema of the test's own, a payments table with
// every kind of gap (as inspect-store-gaps does) and a jobs table whose
// status cache, under keys of the test's own, disagrees with it in every
// way (as audit-cache-disagreements does).
func seedStore(t *testing.T, redisURL string) (s *testenv.PGSchema, cache string) {
	s = testenv.NewPGSchema(t, "fitstore")
	s.Exec(`CREATE TABLE {s}.payments (id bigserial PRIMARY KEY, idempotency_key text, order_id bigint NOT NULL,
		status text NOT NULL, attempt int NOT NULL DEFAULT 1, updated_at timestamptz NOT NULL, succeeded_at timestamptz);
	CREATE UNIQUE INDEX ON {s}.payments (idempotency_key, attempt);
	INSERT INTO {s}.payments (idempotency_key, order_id, status, attempt, updated_at, succeeded_at) VALUES
	  ('pay:1', 1, 'SUCCEEDED', 1, '2026-12-01T09:00:00Z', '2026-12-01T09:00:00Z'),
	  ('pay:1', 1, 'SUCCEEDED', 2, '2026-12-01T09:05:00Z', '2026-12-01T09:05:00Z'),
	  ('PAY:2 ', 2, 'SUCCEEDED', 1, '2026-12-01T09:10:00Z', '2026-12-01T09:10:00Z'),
	  ('pay:2', 2, 'SUCCEEDED', 1, '2026-12-01T09:11:00Z', '2026-12-01T09:11:00Z'),
	  ('pay:3', 3, 'PROCESSING', 1, '2026-12-01T10:30:00Z', NULL),
	  ('pay:4', 4, 'FAILED', 3, '2026-12-01T11:00:00Z', '2026-12-01T10:58:00Z'),
	  ('pay:5', 5, 'DONE', 1, '2026-12-01T11:00:00Z', NULL);
	CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL);
	INSERT INTO {s}.jobs VALUES ('1', 'SUCCEEDED', '2026-12-01T10:00:00Z'), ('2', 'SUCCEEDED', '2026-12-01T10:01:00Z'),
	  ('3', 'PROCESSING', '2026-12-01T10:02:00Z'), ('4', 'FAILED', '2026-12-01T10:03:00Z'),
	  ('5', 'SUCCEEDED', '2026-12-01T10:04:00Z'), ('10', 'SUCCEEDED', '2026-12-01T10:06:00Z');`)
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	cache = testenv.UniqueName("fitcache")
	ctx := context.Background()
	t.Cleanup(func() { testenv.DeleteKeys(ctx, c, cache); c.Close() })
	for k, v := range map[string]string{"1": "SUCCEEDED", "2": "PROCESSING", "3": "SUCCEEDED", "5": "FAILED",
		"7": "PROCESSING", "8": "SUCCEEDED", "9": "done"} {
		c.Set(ctx, cache+":job:status:"+k, v, 2*time.Hour)
	}
	c.Set(ctx, cache+":job:status:4", "PROCESSING", 0)
	c.HSet(ctx, cache+":job:status:10", "status", "SUCCEEDED")
	return s, cache
}

// loadDLQ publishes an export file's records to a queue of the test's own.
func loadDLQ(t *testing.T, file string) string {
	testenv.Need(t, testenv.AMQP)
	queue := testenv.UniqueName("fitdlq")
	conn, err := amqp.Dial(testenv.AMQP.ConnURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteQueue(queue); conn.Close() })
	ch, err := conn.Channel()
	if err == nil {
		_, err = ch.QueueDeclare(queue, true, false, false, false, nil)
	}
	if err == nil {
		err = ch.Confirm(false)
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := os.Expand(string(data), func(k string) string { return map[string]string{"DLQ": queue}[k] })
	err = deadletter.ReadRecords(strings.NewReader(text), func(m *deadletter.Message) error {
		dc, err := ch.PublishWithDeferredConfirm("", queue, true, false, m.Publishing())
		if err == nil && !dc.Wait() {
			err = fmt.Errorf("not confirmed")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return queue
}
