package release

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestDocsExampleConfig runs `dupctl doctor --config docs/examples/dupctl.yaml`,
// the file docs/ci.md shows, against the local services set up as that
// file describes (what a pipeline's own setup step does): every line the
// file configures must pass, with nothing at warn or above. Each run has a
// RabbitMQ vhost, a PostgreSQL schema (search_path) and a Redis database
// of its own, so the file's names need no prefix.
func TestDocsExampleConfig(t *testing.T) {
	bin := filepath.Join(installSource(t), "dupctl")
	// No --vhost: doctor reads the vhost the AMQP URL names (it once read
	// the management API for "/" whatever the URL said: "broker topology
	// of payments: not found", exit 3).
	env, _ := exampleStack(t)
	cmd := exec.Command(bin, "doctor", "--config", filepath.Join(root, "docs", "examples", "dupctl.yaml"),
		"-o", "json", "--fail-on", "warn")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("dupctl doctor --config docs/examples/dupctl.yaml: %v\n%s\n%s", err, stderr, out)
	}
	var doc struct {
		Findings []struct{ Code, Severity, Subject string } `json:"findings"`
		Data     struct {
			Checklist []struct {
				ID         int               `json:"id"`
				Title      string            `json:"title"`
				Status     string            `json:"status"`
				NotChecked []json.RawMessage `json:"not_checked"`
			} `json:"checklist"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, out)
	}
	// The lines the file's keys back (idempotency table, lock pattern and
	// TTL, durations, DLQ, retry queue, status cache) pass; where the
	// workers' logs would add to a line (the file leaves logs out) it is
	// partial, and only for that.
	want := map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true}
	for _, it := range doc.Data.Checklist {
		t.Logf("line %2d %-8s %s; not checked: %s", it.ID, it.Status, it.Title, it.NotChecked)
		if !want[it.ID] {
			continue
		}
		delete(want, it.ID)
		onlyLogs := len(it.NotChecked) > 0
		for _, nc := range it.NotChecked {
			onlyLogs = onlyLogs && strings.Contains(string(nc), "no logs.paths")
		}
		if it.Status != "pass" && (it.Status != "partial" || !onlyLogs) {
			t.Errorf("checklist line %d (%s) is %s (not checked: %s), want pass, or partial for the logs alone",
				it.ID, it.Title, it.Status, it.NotChecked)
		}
	}
	if len(want) > 0 {
		t.Errorf("checklist lines %v missing", want)
	}
	for _, f := range doc.Findings {
		if f.Severity != "info" {
			t.Errorf("finding %s %s %s", f.Severity, f.Code, f.Subject)
		}
	}
}

// exampleStack sets up what docs/examples/dupctl.yaml names and returns
// the DUPCTL_*_URL settings that reach it and its RabbitMQ vhost.
func exampleStack(t *testing.T) ([]string, string) {
	t.Helper()
	testenv.Need(t, testenv.AMQP)
	mgmt, amqpURL := testenv.Need(t, testenv.Management), testenv.Need(t, testenv.AMQP)
	vhost := testenv.UniqueName("docs")
	management(t, mgmt, http.MethodPut, "/api/vhosts/"+vhost, "")
	t.Cleanup(func() { management(t, mgmt, http.MethodDelete, "/api/vhosts/"+vhost, "") })
	u, err := url.Parse(mgmt)
	if err != nil {
		t.Fatal(err)
	}
	management(t, mgmt, http.MethodPut, "/api/permissions/"+vhost+"/"+u.User.Username(),
		`{"configure":".*","write":".*","read":".*"}`)
	amqpURL = strings.TrimSuffix(amqpURL, "/") + "/" + vhost
	exampleQueues(t, amqpURL)

	schema := testenv.NewPGSchema(t, "docs")
	schema.Exec(`CREATE TABLE {s}.payment_idempotency (idempotency_key text PRIMARY KEY, status text NOT NULL,
			attempts int NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO {s}.payment_idempotency SELECT 'payment:order-' || i, 'SUCCEEDED', 1, now() FROM generate_series(1, 200) i;
		CREATE TABLE {s}.job_runs (job_type text NOT NULL, duration_ms int NOT NULL, finished_at timestamptz NOT NULL);
		INSERT INTO {s}.job_runs SELECT 'payment', 500 + (i * 37) % 9500, now() - interval '1 hour' FROM generate_series(1, 1000) i`)
	pg, err := url.Parse(testenv.Postgres.ConnURL())
	if err != nil {
		t.Fatal(err)
	}
	q := pg.Query()
	q.Set("search_path", schema.Name)
	pg.RawQuery = q.Encode()

	rdb := testenv.RedisDB(t)
	ctx := context.Background()
	for i := 1; i <= 60; i++ {
		rdb.Set(ctx, fmt.Sprintf("lock:payment:order:%d", i), token(), 60*time.Second)
	}
	for i := 1; i <= 20; i++ {
		rdb.Set(ctx, fmt.Sprintf("payment:status:payment:order-%d", i), "SUCCEEDED", time.Hour)
	}
	redisURL := fmt.Sprintf("redis://%s/%d", rdb.Options().Addr, rdb.Options().DB)
	return []string{"DUPCTL_REDIS_URL=" + redisURL, "DUPCTL_DATABASE_URL=" + pg.String(), "DUPCTL_AMQP_URL=" + amqpURL,
		"DUPCTL_MANAGEMENT_URL=" + mgmt, "NO_COLOR=1"}, vhost
}

// exampleQueues declares the job's topology: the work queue dead-letters
// to payments.dlq through payments.dlx, the retry queue back to work.
func exampleQueues(t *testing.T, amqpURL string) {
	t.Helper()
	conn, err := amqp.Dial(amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []string{"payments.dlx", "payments"} {
		if err := ch.ExchangeDeclare(x, "direct", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	queues := []struct {
		name string
		args amqp.Table
	}{
		{"payments.dlq", nil},
		{"payments", amqp.Table{"x-dead-letter-exchange": "payments.dlx", "x-dead-letter-routing-key": "payments"}},
		{"payments.retry", amqp.Table{"x-dead-letter-exchange": "payments", "x-message-ttl": int32(5000)}},
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range [][2]string{{"payments.dlq", "payments.dlx"}, {"payments", "payments"}} {
		if err := ch.QueueBind(b[0], "payments", b[1], false, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func management(t *testing.T, base, method, path, body string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	user := u.User.Username()
	u.User = nil
	req, err := http.NewRequest(method, strings.TrimSuffix(u.String(), "/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
}

func token() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TestCIDocShowsTheExample: docs/ci.md shows docs/examples/dupctl.yaml
// whole, as the file TestDocsExampleConfig runs, so the two cannot drift.
func TestCIDocShowsTheExample(t *testing.T) {
	doc := readFile(filepath.Join(root, "docs", "ci.md"))
	example := readFile(filepath.Join(root, "docs", "examples", "dupctl.yaml"))
	if example == "" || !strings.Contains(doc, "```yaml\n"+example+"```\n") {
		t.Errorf("docs/ci.md does not show docs/examples/dupctl.yaml whole in a yaml block")
	}
	for _, stale := range []string{"@latest"} {
		if strings.Contains(doc, stale) {
			t.Errorf("docs/ci.md says %q: the module is not published", stale)
		}
	}
}
