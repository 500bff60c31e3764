package doctor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

// agreeCase is data that a doctor line and the command it summarises
// both judge: doctor must say what the command says.
type agreeCase struct {
	name string
	// uses are the services the case fills and gives both runs.
	redis, postgres, amqp bool
	// yaml is dupctl.yaml's one job (after its name) and what follows
	// it; {schema} and {dlq} are the case's own.
	yaml string
	seed func(t *testing.T, fx *fixture)
	// commands are the standalone commands whose checks doctor runs on
	// the case's job, as a user runs them (the one job is taken).
	commands [][]string
	// want are codes and severities the commands must report (the data
	// is what the case says it is); lines are doctor's line states.
	want  map[string]string
	lines map[int]string
}

// fixture is one case's own Redis database, schema and queue.
type fixture struct {
	rdb    *redis.Client
	schema *testenv.PGSchema
	ch     *amqp.Channel
	dlq    string
	env    map[string]string
}

// TestDoctorAgreesWithTheCommands holds each doctor check against the
// command its line summarises (inspect lock, inspect store, audit cache,
// dlq stats), on the same data and the same dupctl.yaml: the same codes,
// severities, subjects and counts, and a line that says so - never "not
// checked" for keys the command judges.
func TestDoctorAgreesWithTheCommands(t *testing.T) {
	for _, c := range agreeCases() {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t, c)
			c.seed(t, fx)
			cfg := "version: 1\njobs:\n  - name: agree\n" + strings.NewReplacer("{schema}", schemaName(fx), "{dlq}", fx.dlq).Replace(c.yaml)
			path := filepath.Join(t.TempDir(), "dupctl.yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			doc := runJSON(t, fx.env, "doctor", "--config", path)
			seen := map[string]string{}
			for _, args := range c.commands {
				cmd := runJSON(t, fx.env, append(args, "--config", path)...)
				for _, f := range cmd.Findings {
					seen[f.Code] = f.Severity
				}
				compareFindings(t, strings.Join(args, " "), cmd, doc)
				compareLockScan(t, cmd, doc)
			}
			for code, sev := range c.want {
				if seen[code] != sev {
					t.Errorf("the commands report %s as %q, the case wants %s: the data is not what the case says", code, seen[code], sev)
				}
			}
			for id, want := range c.lines {
				if it := doc.line(id); it.Status != want {
					t.Errorf("doctor line %d is %s, want %s: %+v", id, it.Status, want, it)
				}
			}
		})
	}
}

func agreeCases() []agreeCase {
	lock := [][]string{{"inspect", "lock"}}
	return []agreeCase{
		{name: "a lock_pattern's keys without a TTL", redis: true, yaml: "    lock_pattern: \"lock:order:*\"\n",
			seed: orderLocks(0), commands: lock, want: map[string]string{"LOCK_NO_TTL": "error"}, lines: map[int]string{3: "fail"}},
		{name: "a lock_pattern's keys with a TTL", redis: true, yaml: "    lock_pattern: \"lock:order:*\"\n    lock_ttl: 30s\n",
			seed: orderLocks(time.Minute), commands: lock, lines: map[int]string{3: "partial"}},
		{name: "no key under the lock_pattern", redis: true, yaml: "    lock_pattern: \"lock:order:*\"\n",
			seed: notLocks, commands: lock, lines: map[int]string{3: "not checked"}},
		{name: "keys that are not locks, no lock_pattern", redis: true, yaml: "    queue: orders\n",
			seed: notLocks, commands: lock, lines: map[int]string{3: "not checked"}},
		{name: "lock-shaped keys nothing confirms", redis: true, yaml: "    queue: orders\n",
			seed: orderLocks(0), commands: lock, want: map[string]string{"LOCK_POSSIBLE_FAMILY": "info"}, lines: map[int]string{3: "not checked"}},
		{name: "keys locks.patterns names", redis: true, yaml: "    queue: orders\nlocks:\n  patterns: [\"lock:order:*\"]\n",
			seed: orderLocks(0), commands: lock, want: map[string]string{"LOCK_NO_TTL": "error"}, lines: map[int]string{3: "fail"}},
		{name: "locks held three hours, no lock_ttl", redis: true, yaml: "    lock_pattern: \"lock:order:*\"\n",
			seed: orderLocks(3 * time.Hour), commands: lock, want: map[string]string{"LOCK_TTL_LONG": "info"}, lines: map[int]string{3: "partial"}},
		{name: "a table without a unique key", postgres: true, yaml: "    idempotency: {table: {schema}.job_execution}\n",
			seed: table(false), commands: [][]string{{"inspect", "store"}},
			want: map[string]string{"STORE_NO_UNIQUE_KEY": "error"}, lines: map[int]string{2: "fail"}},
		{name: "a table with a primary key", postgres: true, yaml: "    idempotency: {table: {schema}.job_execution}\n",
			seed: table(true), commands: [][]string{{"inspect", "store"}}, lines: map[int]string{2: "partial"}},
		{name: "a cache that says not done", redis: true, postgres: true, yaml: cacheJob, seed: cache("PROCESSING"),
			commands: [][]string{{"audit", "cache"}, {"inspect", "store"}, {"inspect", "lock"}},
			want:     map[string]string{"CACHE_NOT_DONE_DB_SUCCEEDED": "warn"}, lines: map[int]string{8: "warn"}},
		{name: "a cache that agrees", redis: true, postgres: true, yaml: cacheJob, seed: cache("SUCCEEDED"),
			commands: [][]string{{"audit", "cache"}, {"inspect", "store"}}, lines: map[int]string{8: "partial"}},
		{name: "a DLQ of permanent errors retried", amqp: true, yaml: "    dlq: {dlq}\n", seed: deadLetters(3),
			commands: [][]string{{"dlq", "stats"}}, want: map[string]string{"DLQ_NON_RETRYABLE_RETRIED": "warn"}, lines: map[int]string{5: "warn"}},
		{name: "an empty DLQ", amqp: true, yaml: "    dlq: {dlq}\n", seed: deadLetters(0),
			commands: [][]string{{"dlq", "stats"}}, lines: map[int]string{5: "pass"}},
	}
}

const cacheJob = "    idempotency: {table: {schema}.job_execution, key_column: idempotency_key, status_column: status}\n" +
	"    cache_pattern: \"job:status:{key}\"\n"

// newFixture gives the case the services it uses, and only those: a Redis
// database of its own (doctor and inspect lock may read every key), a
// schema, a dead-letter queue.
func newFixture(t *testing.T, c agreeCase) *fixture {
	fx := &fixture{env: map[string]string{}}
	if c.redis {
		fx.rdb = testenv.RedisDB(t)
		u, err := url.Parse(testenv.Need(t, testenv.Redis))
		if err != nil {
			t.Fatal(err)
		}
		u.Path = fmt.Sprintf("/%d", fx.rdb.Options().DB)
		fx.env["DUPCTL_REDIS_URL"] = u.String()
	}
	if c.postgres {
		fx.schema = testenv.NewPGSchema(t, "docagree")
		fx.env["DUPCTL_DATABASE_URL"] = testenv.Need(t, testenv.Postgres)
	}
	if c.amqp {
		amqpURL := testenv.Need(t, testenv.AMQP)
		conn, err := connect.AMQP(context.Background(), amqpURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if fx.ch, err = conn.Channel(); err != nil {
			t.Fatal(err)
		}
		fx.dlq = testenv.UniqueName("docagree") + ".dlq"
		mustQueue(t, fx.ch, fx.dlq, nil)
		t.Cleanup(func() { fx.ch.QueueDelete(fx.dlq, false, false, false) })
		fx.env["DUPCTL_AMQP_URL"] = amqpURL
	}
	return fx
}

func schemaName(fx *fixture) string {
	if fx.schema == nil {
		return ""
	}
	return fx.schema.Name
}

// orderLocks writes lock:order:1..5, each holding a random token, with ttl
// (0: none).
func orderLocks(ttl time.Duration) func(*testing.T, *fixture) {
	return func(t *testing.T, fx *fixture) {
		for i := 1; i <= 5; i++ {
			if err := fx.rdb.Set(context.Background(), fmt.Sprintf("lock:order:%d", i), uuid4(), ttl).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// notLocks writes keys that are no locks: carts, sessions, a counter.
func notLocks(t *testing.T, fx *fixture) {
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		fx.rdb.Set(ctx, fmt.Sprintf("cart:%d", i), fmt.Sprintf(`{"items":[{"sku":"A-%d","qty":2}],"total":1999}`, i), 0)
		fx.rdb.HSet(ctx, "session:"+uuid4(), "user", fmt.Sprint(1000+i), "theme", "dark")
	}
	if err := fx.rdb.IncrBy(ctx, "stats:orders:count", 42).Err(); err != nil {
		t.Fatal(err)
	}
}

// table writes an idempotency table of 200 SUCCEEDED keys, one twice
// without a key that is unique.
func table(unique bool) func(*testing.T, *fixture) {
	return func(t *testing.T, fx *fixture) {
		if unique {
			fx.schema.Exec(`CREATE TABLE {s}.job_execution (idempotency_key text PRIMARY KEY, status text NOT NULL,
					attempts int NOT NULL DEFAULT 1, updated_at timestamptz NOT NULL DEFAULT now());
				INSERT INTO {s}.job_execution (idempotency_key, status) SELECT 'order-' || i, 'SUCCEEDED' FROM generate_series(1, 200) i`)
			return
		}
		fx.schema.Exec(`CREATE TABLE {s}.job_execution (idempotency_key text, status text NOT NULL);
			INSERT INTO {s}.job_execution SELECT 'order-' || i, 'SUCCEEDED' FROM generate_series(1, 200) i;
			INSERT INTO {s}.job_execution VALUES ('order-7', 'SUCCEEDED')`)
	}
}

// cache writes the table (every key SUCCEEDED) and a status cache of 20
// of its keys saying status.
func cache(status string) func(*testing.T, *fixture) {
	return func(t *testing.T, fx *fixture) {
		table(true)(t, fx)
		for i := 1; i <= 20; i++ {
			if err := fx.rdb.Set(context.Background(), fmt.Sprintf("job:status:order-%d", i), status, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// deadLetters puts n messages in the DLQ as RabbitMQ dead-letters them
// (x-death), each rejected three times with a validation error.
func deadLetters(n int) func(*testing.T, *fixture) {
	return func(t *testing.T, fx *fixture) {
		work := strings.TrimSuffix(fx.dlq, ".dlq")
		for i := 0; i < n; i++ {
			death := amqp.Table{"count": int64(3), "reason": "rejected", "queue": work, "time": time.Now().Add(-time.Hour).Truncate(time.Second),
				"exchange": "", "routing-keys": []any{work}}
			msg := amqp.Publishing{MessageId: uuid4(), ContentType: "application/json", Body: []byte(fmt.Sprintf(`{"orderId":%d}`, i)),
				Headers: amqp.Table{"x-death": []any{death}, "x-first-death-reason": "rejected", "x-first-death-queue": work,
					"x-first-death-exchange": "", "x-exception-message": "validation failed: card number is invalid"}}
			if err := fx.ch.PublishWithContext(context.Background(), "", fx.dlq, false, false, msg); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// reportJSON is the part of a command's -o json the comparison reads.
type reportJSON struct {
	Checks []struct {
		Code string `json:"code"`
	} `json:"checks"`
	Findings []struct {
		Code     string `json:"code"`
		Severity string `json:"severity"`
		Subject  string `json:"subject"`
		Message  string `json:"message"`
	} `json:"findings"`
	Data json.RawMessage `json:"data"`
}

type lineJSON struct {
	ID         int      `json:"id"`
	Status     string   `json:"status"`
	Checked    []string `json:"checked"`
	NotChecked []string `json:"not_checked"`
}

func (r reportJSON) line(id int) lineJSON {
	var d struct {
		Checklist []lineJSON `json:"checklist"`
	}
	_ = json.Unmarshal(r.Data, &d)
	for _, it := range d.Checklist {
		if it.ID == id {
			return it
		}
	}
	return lineJSON{ID: id, Status: "missing"}
}

// runJSON runs dupctl in-process with -o json; findings never fail it.
func runJSON(t *testing.T, env map[string]string, args ...string) reportJSON {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.Getenv = func(k string) string { return env[k] }
	args = append(args, "-o", "json", "--fail-on", "none")
	if code := cli.Run(context.Background(), args, ios); code != 0 {
		t.Fatalf("dupctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var r reportJSON
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("dupctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return r
}

// compareFindings: doctor's findings of the command's codes are the
// command's - code, severity, subject and the counts in the message (its
// words may differ: doctor names a dupctl.yaml key where the command
// names its flag).
func compareFindings(t *testing.T, name string, cmd, doc reportJSON) {
	t.Helper()
	codes := map[string]bool{}
	for _, c := range cmd.Checks {
		codes[c.Code] = true
	}
	var want, got []string
	for _, f := range cmd.Findings {
		codes[f.Code] = true
		want = append(want, findingKey(f.Code, f.Severity, f.Subject, f.Message))
	}
	for _, f := range doc.Findings {
		if codes[f.Code] {
			got = append(got, findingKey(f.Code, f.Severity, f.Subject, f.Message))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("%s and doctor disagree:\n  %s: %s\n  doctor: %s", name, name, strings.Join(want, "; "), strings.Join(got, "; "))
	}
}

var numbers = regexp.MustCompile(`[0-9]+`)

func findingKey(code, severity, subject, message string) string {
	return fmt.Sprintf("%s %s %q %v", severity, code, subject, numbers.FindAllString(message, -1))
}

// compareLockScan: where inspect lock found no lock, doctor's line says
// so with the keys the command scanned; where it found locks, doctor
// judged them.
func compareLockScan(t *testing.T, cmd, doc reportJSON) {
	t.Helper()
	var d struct {
		Scan *struct {
			Scanned int `json:"keys_scanned"`
			Locks   int `json:"locks"`
		} `json:"scan"`
	}
	if json.Unmarshal(cmd.Data, &d) != nil || d.Scan == nil {
		return // not inspect lock
	}
	line := doc.line(3)
	checked := slices.ContainsFunc(line.Checked, func(s string) bool { return strings.HasPrefix(s, "inspect lock") })
	if d.Scan.Locks > 0 && !checked {
		t.Errorf("inspect lock judged %d locks, doctor's line 3 did not check them: %+v", d.Scan.Locks, line)
	}
	reason := fmt.Sprintf("no lock key found (%d keys scanned)", d.Scan.Scanned)
	said := slices.ContainsFunc(line.NotChecked, func(s string) bool { return strings.HasSuffix(s, reason) })
	if d.Scan.Locks == 0 && (checked || !said) {
		t.Errorf("inspect lock found no lock in %d keys, doctor's line 3 says otherwise: %+v", d.Scan.Scanned, line)
	}
}
