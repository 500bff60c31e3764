package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
)

// workerRunJSON is what the lanes test reads of a --worker run's JSON.
type workerRunJSON struct {
	Data struct {
		Workers int `json:"workers"`
		Runs    []struct {
			Fault *struct {
				T   int64 `json:"t_ms"`
				Seq int   `json:"seq"`
			} `json:"fault"`
			Keys []struct {
				Effects  int    `json:"effects"`
				Cause    string `json:"cause"`
				Deciding []int  `json:"deciding"`
			} `json:"keys"`
			Deliveries []struct {
				Redelivered bool `json:"redelivered"`
			} `json:"deliveries"`
			Leases []json.RawMessage `json:"leases"`
			Events []json.RawMessage `json:"events"`
		} `json:"runs"`
	} `json:"data"`
}

// runWorkerHTML runs goworker (no idempotency) under simulate crash at
// before-ack against the real services and writes the run's HTML and
// JSON; it returns both files.
func runWorkerHTML(t *testing.T, dir string) (string, string) {
	t.Helper()
	amqpURL := testenv.Need(t, testenv.AMQP)
	redisURL := testenv.Need(t, testenv.Redis)
	pgURL := testenv.Need(t, testenv.Postgres)
	bin := filepath.Join(dir, "goworker")
	if out, err := exec.Command("go", "build", "-o", bin, "../../testdata/workers/goworker").CombinedOutput(); err != nil {
		t.Fatalf("build goworker: %v\n%s", err, out)
	}
	ctx := context.Background()
	pool, err := connect.Postgres(ctx, pgURL, connect.PostgresOptions{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	tbl := testenv.UniqueName("lanes")
	if _, err := pool.Exec(ctx, fmt.Sprintf(`create table %[1]s_charges (order_id text not null, idempotency_key text, worker text);
		create table %[1]s_idem (key text primary key, status text not null)`, tbl)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Exec(context.Background(), fmt.Sprintf("drop table %[1]s_charges; drop table %[1]s_idem", tbl))
	})
	html, js := filepath.Join(dir, "worker.html"), filepath.Join(dir, "worker.json")
	runToFile(t, "simulate", "crash", "--worker", bin, "--amqp-url", amqpURL, "--redis-url", redisURL, "--database-url", pgURL,
		"--worker-env", "AMQP_URL={amqp}", "--worker-env", "REDIS_URL={redis}", "--worker-env", "DATABASE_URL={postgres}",
		"--worker-env", "QUEUE={prefix}.orders", "--worker-env", "WORKER=W{worker}", "--worker-env", "WORK=20ms", "--worker-env", "IDEM=none",
		"--worker-env", "CHARGES="+tbl+"_charges", "--worker-env", "IDEM_TABLE="+tbl+"_idem",
		"--publish", ":{prefix}.orders", "--effects-sql", "select order_id, count(*) from "+tbl+"_charges group by 1",
		"--jobs", "1", "--settle", "300ms", "--at", "before-ack", "--html", html, "-o", "json="+js)
	return html, js
}

// TestWorkerRunHTML: a worker run's page draws, from what the proxies saw,
// one lane per worker copy (and dupctl's own), one bar per delivery and
// per lock, the injected SIGKILL where it happened and ringed, the
// redelivery ringed, the second side effect once, on top, and the cause
// the JSON names above the picture; in Chromium, in four views, it holds
// every page's rules and passes axe-core.
func TestWorkerRunHTML(t *testing.T) {
	dir := t.TempDir()
	html, js := runWorkerHTML(t, dir)
	var rep workerRunJSON
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Data.Runs) != 1 || rep.Data.Runs[0].Fault == nil || len(rep.Data.Runs[0].Keys) != 1 {
		t.Fatalf("want one run whose fault came, of one key: %s", b)
	}
	rr := rep.Data.Runs[0]
	kv := rr.Keys[0]
	if kv.Effects != 2 || kv.Cause != "DUP_EFFECT_REDELIVERY" {
		t.Fatalf("key %+v: want a redelivery duplicate", kv)
	}
	pb, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	text := string(pb)
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(text, -1)) }
	// Marks are counted in the picture itself: the event-order strip and
	// the legend draw glyphs again.
	main := mainSVG(t, text)
	inMain := func(re string) int { return len(regexp.MustCompile(re).FindAllString(main, -1)) }
	redelivered := 0
	for _, d := range rr.Deliveries {
		if d.Redelivered {
			redelivered++
		}
	}
	for _, c := range []struct {
		what string
		re   string
		want int
		main bool // counted in the picture only
	}{
		{"lanes (W1, W2, dupctl)", `<g class="lane" data-lane="`, rep.Data.Workers + 1, true},
		{"delivery bars", `<rect class="bar delivery"`, len(rr.Deliveries), true},
		{"lease bars", `<rect class="bar lease"`, len(rr.Leases), true},
		{"second side effects", `<g class="mark duplicate"`, kv.Effects - 1, true},
		{"ringed SIGKILL at the fault's time", fmt.Sprintf(`<g class="mark crash" data-t-ms="%d" data-evidence="1"`, rr.Fault.T), 1, true},
		{"ringed redeliveries", `<g class="mark redelivery" data-t-ms="[0-9]+" data-evidence="1"`, redelivered, true},
		{"cause lines", `<p class="cause"><span class="cause-label">cause</span> <a href="#code-DUP_EFFECT_REDELIVERY">`, 1, false},
		{"events table rows", `<tr id="run-0-ev-[0-9]+">`, len(rr.Events), false},
		{"evidence badges in the table", `<span class="badge info">evidence</span>`, len(kv.Deciding), false},
	} {
		n := count
		if c.main {
			n = inMain
		}
		if got := n(c.re); got != c.want {
			t.Errorf("%s: %d on the page, want %d", c.what, got, c.want)
		}
	}
	if !strings.Contains(text, "t0 = ") {
		t.Error("no wall-clock t0 under the axis")
	}
	if !strings.Contains(text, "counted after the run by --effects-sql, which has no times") {
		t.Error("the page does not say the effects query has no times")
	}
	browse(t, html, "simulate-worker", views, func(t *testing.T, v view, p page) {
		checkScreen(t, v, p)
		c := p.content
		if len(c.Causes) != 1 || c.Causes[0].Code != "DUP_EFFECT_REDELIVERY" {
			t.Errorf("causes above the picture %+v", c.Causes)
		}
		if c.LastMark != "duplicate" {
			t.Errorf("the last mark drawn is a %s: the second side effect goes on top", c.LastMark)
		}
		if len(c.Lanes) < 2 || c.Lanes[0] != "W1" || c.Lanes[1] != "W2" {
			t.Errorf("lanes %q: one per worker copy first", c.Lanes)
		}
	})
}
