package doctor_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// stack is one set of queues, tables, keys and durations, broken or not.
type stack struct {
	name   string // job name
	prefix string
	schema *testenv.PGSchema
	dir    string
}

type doctorJSON struct {
	Findings []struct {
		Code     string `json:"code"`
		Severity string `json:"severity"`
		Subject  string `json:"subject"`
	} `json:"findings"`
	Data struct {
		Checklist []struct {
			ID     int    `json:"id"`
			Status string `json:"status"`
		} `json:"checklist"`
	} `json:"data"`
}

// TestDoctorSmoke is the tool's own smoke test: doctor against a stack
// with every planted problem finds each one with the right code, and
// against a correct stack finds nothing at warn or above.
func TestDoctorSmoke(t *testing.T) {
	redisURL := testenv.Need(t, testenv.Redis)
	pgURL := testenv.Need(t, testenv.Postgres)
	amqpURL := testenv.Need(t, testenv.AMQP)
	mgmtURL := testenv.Need(t, testenv.Management)
	ctx := context.Background()

	conn, err := connect.AMQP(ctx, amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := connect.Redis(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })

	broken := &stack{name: "broken", prefix: testenv.WordName("docbroken"), schema: testenv.NewPGSchema(t, "docbroken"), dir: t.TempDir()}
	good := &stack{name: "good", prefix: testenv.WordName("docgood"), schema: testenv.NewPGSchema(t, "docgood"), dir: t.TempDir()}
	for _, s := range []*stack{broken, good} {
		s := s
		t.Cleanup(func() {
			testenv.DeleteKeys(context.Background(), rdb, s.prefix+":")
			for _, q := range []string{".work", ".dlq", ".retry"} {
				ch.QueueDelete(s.prefix+q, false, false, false)
			}
			ch.ExchangeDelete(s.prefix+".dlx", false, false)
			ch.ExchangeDelete(s.prefix+".work", false, false)
		})
	}

	// Broken: no DLX, no unique constraint, TTL below job p99, lock keys
	// from job ids with a constant token, a stale cache.
	mustQueue(t, ch, broken.prefix+".work", nil)
	broken.schema.Exec(`CREATE TABLE {s}.job_execution (idempotency_key text, status text NOT NULL);
		INSERT INTO {s}.job_execution SELECT 'payment:order-' || i, 'SUCCEEDED' FROM generate_series(1, 200) i;
		INSERT INTO {s}.job_execution VALUES ('payment:order-7', 'SUCCEEDED')`)
	for i := 0; i < 60; i++ {
		rdb.Set(ctx, broken.prefix+":lock:job:"+uuid4(), "1", 5*time.Minute)
	}
	for i := 1; i <= 20; i++ {
		rdb.Set(ctx, fmt.Sprintf("%s:status:payment:order-%d", broken.prefix, i), "PROCESSING", time.Hour)
	}
	writeDurations(t, broken, 240*time.Second) // p99 far above the 30s TTL

	// Good: DLX to a bound DLQ, a retry queue back to work, a primary key,
	// business-key locks with random tokens, a cache that agrees.
	mustExchange(t, ch, good.prefix+".dlx")
	mustExchange(t, ch, good.prefix+".work")
	mustQueue(t, ch, good.prefix+".dlq", nil)
	if err := ch.QueueBind(good.prefix+".dlq", "job", good.prefix+".dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	mustQueue(t, ch, good.prefix+".work", amqp.Table{"x-dead-letter-exchange": good.prefix + ".dlx", "x-dead-letter-routing-key": "job"})
	mustQueue(t, ch, good.prefix+".retry", amqp.Table{"x-dead-letter-exchange": good.prefix + ".work", "x-message-ttl": int32(5000)})
	good.schema.Exec(`CREATE TABLE {s}.job_execution (idempotency_key text PRIMARY KEY, status text NOT NULL,
			attempts int NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO {s}.job_execution SELECT 'payment:order-' || i, 'SUCCEEDED', 1, now() FROM generate_series(1, 200) i`)
	for i := 1; i <= 60; i++ {
		rdb.Set(ctx, fmt.Sprintf("%s:lock:payment:order:%d", good.prefix, i), uuid4(), 60*time.Second)
	}
	for i := 1; i <= 20; i++ {
		rdb.Set(ctx, fmt.Sprintf("%s:status:payment:order-%d", good.prefix, i), "SUCCEEDED", time.Hour)
	}
	writeDurations(t, good, 20*time.Second) // p99 well under the TTL

	env := map[string]string{"DUPCTL_REDIS_URL": redisURL, "DUPCTL_DATABASE_URL": pgURL, "DUPCTL_AMQP_URL": amqpURL,
		"DUPCTL_MANAGEMENT_URL": mgmtURL}

	got := runDoctor(t, env, broken, 30*time.Second)
	want := map[string]string{
		"TOPO_NO_DLX":                 broken.prefix + ".work",
		"TOPO_DLQ_MISSING":            broken.prefix + ".dlq",
		"STORE_NO_UNIQUE_KEY":         "",
		"TTL_BELOW_P99":               "",
		"LOCK_KEY_RANDOM_ID":          "",
		"LOCK_TOKEN_CONSTANT":         "",
		"CACHE_NOT_DONE_DB_SUCCEEDED": "",
	}
	codes := map[string]bool{}
	for _, f := range got.Findings {
		codes[f.Code] = true
	}
	for code, subject := range want {
		found := false
		for _, f := range got.Findings {
			if f.Code == code && (subject == "" || f.Subject == subject) {
				found = true
			}
		}
		if !found {
			t.Errorf("broken stack: planted problem %s not found; findings: %v", code, sortedKeys(codes))
		}
	}
	for _, it := range got.Data.Checklist {
		if it.ID != 9 && it.ID != 10 && it.Status == "pass" {
			t.Errorf("broken stack: checklist line %d passes", it.ID)
		}
	}

	got = runDoctor(t, env, good, 60*time.Second)
	for _, f := range got.Findings {
		if f.Severity != "info" {
			t.Errorf("correct stack: %s %s %s", f.Severity, f.Code, f.Subject)
		}
	}
	for _, it := range got.Data.Checklist {
		if it.Status == "fail" || it.Status == "warn" {
			t.Errorf("correct stack: checklist line %d is %s", it.ID, it.Status)
		}
	}
}

func runDoctor(t *testing.T, env map[string]string, s *stack, ttl time.Duration) doctorJSON {
	t.Helper()
	cfg := fmt.Sprintf(`version: 1
jobs:
  - name: %[1]s
    queue: %[2]s.work
    dlq: %[2]s.dlq
%[3]s    lock_pattern: "%[2]s:lock:*"
    lock_ttl: %[4]s
    idempotency: {table: %[5]s.job_execution, key_column: idempotency_key, status_column: status}
    cache_pattern: "%[2]s:status:{key}"
    durations: {csv: %[6]s}
`, s.name, s.prefix, retryLine(s), ttl, s.schema.Name, filepath.Join(s.dir, "durations.csv"))
	path := filepath.Join(s.dir, "dupctl.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := iostreams.Test()
	ios.Getenv = func(k string) string { return env[k] }
	code := cli.Run(context.Background(), []string{"doctor", "--config", path, "-o", "json", "--fail-on", "none"}, ios)
	if code != 0 {
		t.Fatalf("doctor on the %s stack: exit %d: %s", s.name, code, errOut)
	}
	var doc doctorJSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("doctor JSON: %v\n%s", err, out)
	}
	return doc
}

func retryLine(s *stack) string {
	if s.name == "good" {
		return "    retry_queue: " + s.prefix + ".retry\n"
	}
	return ""
}

// writeDurations writes 1,000 job durations whose p99 is about p99.
func writeDurations(t *testing.T, s *stack, p99 time.Duration) {
	t.Helper()
	var b strings.Builder
	b.WriteString("job_type,duration_ms\n")
	for i := 0; i < 1000; i++ {
		// a lognormal-ish spread: p50 = p99/8
		q := (float64(i) + 0.5) / 1000
		d := float64(p99.Milliseconds()) / 8 * math.Pow(8, q/0.99)
		fmt.Fprintf(&b, "%s,%d\n", s.name, int64(math.Min(d, float64(p99.Milliseconds())*1.05)))
	}
	if err := os.WriteFile(filepath.Join(s.dir, "durations.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustQueue(t *testing.T, ch *amqp.Channel, name string, args amqp.Table) {
	t.Helper()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
}

func mustExchange(t *testing.T, ch *amqp.Channel, name string) {
	t.Helper()
	if err := ch.ExchangeDeclare(name, "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
