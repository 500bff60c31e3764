package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/testenv"
)

// The lines are shapes real workers write, not goworker's alone: Go's
// log/slog JSON handler (time, level, msg, then the attributes), a
// Logback/logstash-logback-encoder line (@timestamp, message, MDC fields
// at the top level), pino (time in ms, level as a number, msg), and
// goworker's own event lines.
//
// One JSON object per line, verbatim as written: three lines exceed the
// 139-character rule on purpose (size_pending_test.go counts them).
const effectLines = `{"time":"2026-12-03T10:00:00.001Z","level":"INFO","msg":"charged card","order_id":"dc0a1b2c3d-1","idempotency_key":"charge:dc0a1b2c3d-1"}
{"@timestamp":"2026-12-03T10:00:00.002Z","@version":"1","message":"Payment captured","logger_name":"com.acme.PaymentListener","thread_name":"ntContainer#0-1","level":"INFO","orderId":"dc0a1b2c3d-2","idempotencyKey":"charge:dc0a1b2c3d-2"}
{"level":30,"time":1796292000003,"pid":7,"hostname":"w1","msg":"email sent","jobId":"mail-dc0a1b2c3d-3"}
{"time":"2026-12-03T10:00:00.004Z","event":"side_effect","orderId":"dc0a1b2c3d-1","idempotencyKey":"charge:dc0a1b2c3d-1","worker":"W2"}
{"time":"2026-12-03T10:00:00.005Z","event":"side_effect","orderId":"dc0a1b2c3d-2","idempotencyKey":"charge:dc0a1b2c3d-2:attempt-2","worker":"W1"}
{"time":"2026-12-03T10:00:00.006Z","level":"INFO","msg":"payment received","order_id":"dc0a1b2c3d-1"}
{"time":"2026-12-03T10:00:00.007Z","level":"INFO","msg":"charged card for order dc0a1b2c3d-4"}
not json at all
{"time":"2026-12-03T10:00:00.008Z","level":"INFO","msg":"charged card","order_id":"dc0a1b2c3d-12"}
{"time":"2026-12-03T10:00:00.009Z","level":"INFO","msg":"charged card","order_id":"dcffffffff-1"}
`

var testKeyRe = regexp.MustCompile(regexp.QuoteMeta("dc0a1b2c3d") + `-([0-9]+)`)

func TestLogEffectsCountsPerKeyInShapesRealLibrariesWrite(t *testing.T) {
	rows, tally, err := logEffects(context.Background(), "workers", strings.NewReader(effectLines), nil, testKeyRe)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		n    int
		idem int // -1: not known
	}
	wants := map[string]want{
		"dc0a1b2c3d-1":  {2, 1},  // slog + goworker, same idempotency key
		"dc0a1b2c3d-2":  {2, 2},  // logback + goworker, the key changed per attempt
		"dc0a1b2c3d-3":  {1, -1}, // pino: the key only inside the job id
		"dc0a1b2c3d-12": {1, -1}, // not confused with -1
	}
	if len(rows) != len(wants) {
		t.Errorf("rows %v, want keys %v", rows, wants)
	}
	for k, w := range wants {
		got, ok := rows[k]
		switch {
		case !ok:
			t.Errorf("%s: no effects counted", k)
		case got.n != w.n:
			t.Errorf("%s: %d effects, want %d", k, got.n, w.n)
		case w.idem < 0 && got.idem != nil:
			t.Errorf("%s: %d idempotency keys, want unknown", k, *got.idem)
		case w.idem >= 0 && (got.idem == nil || *got.idem != w.idem):
			t.Errorf("%s: idempotency keys %v, want %d", k, got.idem, w.idem)
		}
	}
	// The key only in the message text, and another run's key, are not
	// this run's: counted as effects without a key, never guessed.
	if tally.effects != 8 || tally.unkeyed != 2 || tally.lines != 10 {
		t.Errorf("tally %+v, want 8 effects of which 2 without a key, 10 lines", tally)
	}
}

func TestLogEffectsWithTheUsersMapping(t *testing.T) {
	var c logs.Config
	if err := c.AddEventFlag("side_effect=ledger * booked"); err != nil {
		t.Fatal(err)
	}
	if err := c.AddFieldFlag("businessKey=ctx.order"); err != nil {
		t.Fatal(err)
	}
	m, err := logs.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	in := `{"ts":"2026-12-03T10:00:00Z","msg":"ledger entry booked","ctx":{"order":"dc0a1b2c3d-1"}}
{"ts":"2026-12-03T10:00:01Z","msg":"ledger entry booked","ctx":{"order":"dc0a1b2c3d-1"}}
`
	rows, _, err := logEffects(context.Background(), "workers", strings.NewReader(in), m, testKeyRe)
	if err != nil {
		t.Fatal(err)
	}
	if rows["dc0a1b2c3d-1"].n != 2 {
		t.Fatalf("rows %v, want 2 effects on dc0a1b2c3d-1", rows)
	}
}

func TestNoEffectsReadIsAnInputError(t *testing.T) {
	for _, tc := range []struct {
		tally logTally
		want  string
	}{
		{logTally{}, "held no line during the run"},
		{logTally{lines: 40, malformed: 3}, "none of the 40 lines of the workers' output was read as a side effect"},
		{logTally{lines: 40, malformed: 40}, "none of the 40 lines of the workers' output could be read as log lines"},
		{logTally{lines: 40, effects: 3, unkeyed: 3}, "the 3 side-effect lines of the workers' output name none of the run's business keys"},
	} {
		err := noEffectsRead(WorkerOutput, tc.tally)
		var in *problem.Input
		if !errors.As(err, &in) || in.Field != "EffectsLog" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an input error on EffectsLog saying %q", tc.tally, err, tc.want)
		}
	}
}

// A file the workers log to is read from where it ended when the run
// started; a file rotated during the run is read whole.
func TestEffectsLogFileReadsWhatTheRunAdded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	before := `{"event":"side_effect","orderId":"dc0a1b2c3d-1"}` + "\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	el, err := startEffectsLog(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"event":"side_effect","orderId":"dc0a1b2c3d-2"}` + "\n")
	f.Close()
	in, err := el.lines(&run{})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := logEffects(context.Background(), path, in, nil, testKeyRe)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows["dc0a1b2c3d-2"].n != 1 {
		t.Fatalf("rows %v, want only dc0a1b2c3d-2's effect, written during the run", rows)
	}

	// Rotated during the run (renamed away, a new file of the same length
	// in its place), then truncated to less than the offset: read whole.
	line := func(n int) string { return fmt.Sprintf(`{"event":"side_effect","orderId":"dc0a1b2c3d-%d"}`+"\n", n) }
	for _, tc := range []struct {
		name    string
		replace func()
	}{
		{"rotated", func() {
			os.Rename(path, path+".1")
			os.WriteFile(path, []byte(line(3)), 0o644)
		}},
		{"truncated", func() { os.WriteFile(path, []byte(strings.TrimSpace(line(4))), 0o644) }},
	} {
		el, err := startEffectsLog(path)
		if err != nil {
			t.Fatal(err)
		}
		tc.replace()
		if in, err = el.lines(&run{}); err != nil {
			t.Fatal(err)
		}
		rows, _, _ = logEffects(context.Background(), path, in, nil, testKeyRe)
		if len(rows) != 1 {
			t.Fatalf("%s: rows %v, want the one effect of the new content", tc.name, rows)
		}
	}

	if _, err := startEffectsLog(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	el, _ = startEffectsLog(filepath.Join(t.TempDir(), "never-written.log"))
	if _, err := el.lines(&run{}); err == nil || !strings.Contains(err.Error(), "wrote no such file") {
		t.Errorf("a file never written: %v", err)
	}
}

// A dupctl.yaml job that counts its effects in logs reads them with the
// job's own logs mapping; a mapping that does not compile is the job's
// error, before any run.
func TestJobOptionsEffectsLogUsesTheJobsMapping(t *testing.T) {
	job := config.Job{Name: "payment", Worker: &config.Worker{Command: "./w", EffectsLog: WorkerOutput},
		Logs: config.Logs{
			Fields: map[string]string{"businessKey": "ctx.order"},
			Events: map[string][]string{"side_effect": {"ledger * booked"}},
		}}
	o, err := JobOptions(job, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.EffectsLog != WorkerOutput || o.LogMapping == nil {
		t.Fatalf("options %+v: want the effects log and a mapping", o)
	}
	line := `{"msg":"ledger entry booked","ctx":{"order":"dc0a1b2c3d-7"}}` + "\n"
	rows, _, err := logEffects(context.Background(), "workers", strings.NewReader(line), o.LogMapping, testKeyRe)
	if err != nil || rows["dc0a1b2c3d-7"].n != 1 {
		t.Fatalf("rows %v, %v: want the job's phrase and field read", rows, err)
	}
	job.Logs.Fields = map[string]string{"orderNumber": "x"}
	if _, err := JobOptions(job, Options{}); err == nil || !strings.Contains(err.Error(), "job payment's logs mapping") {
		t.Errorf("a bad field name: %v", err)
	}
}

// A worker that logs plain text (Spring Boot's default console pattern):
// every line is counted as not JSON, and the error says so.
func TestPlainTextWorkerOutput(t *testing.T) {
	// Spring Boot's default console layout: read as text, the order named
	// in the sentence is the key (issue 29: it used to be "not JSON").
	in := `2026-12-03T10:00:00.123Z  INFO 4242 --- [ntContainer#0-1] c.a.p.PaymentListener : Charged card for order dc0a1b2c3d-1
2026-12-03T10:00:00.130Z  INFO 4242 --- [ntContainer#0-1] c.a.p.PaymentListener : Acked message
`
	counts, tally, err := logEffects(context.Background(), "workers", strings.NewReader(in), nil, testKeyRe)
	if err != nil {
		t.Fatal(err)
	}
	if tally.lines != 2 || tally.malformed != 0 || tally.effects != 1 || counts["dc0a1b2c3d-1"].n != 1 {
		t.Fatalf("tally %+v, counts %+v", tally, counts)
	}
}

// TestEffectsSQLThatWritesIsRefusedAsSuch: a query that would change the
// effects says it must be read-only (issue 31: "returns 0 column(s)").
func TestEffectsSQLThatWritesIsRefusedAsSuch(t *testing.T) {
	url := testenv.Need(t, testenv.Postgres)
	pool, err := connect.Postgres(context.Background(), url, connect.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	tbl := testenv.UniqueName("effects_ro")
	if _, err := pool.Exec(context.Background(), "create table "+tbl+" (order_id text)"); err != nil {
		t.Fatal(err)
	}
	defer pool.Exec(context.Background(), "drop table "+tbl)
	for _, q := range []string{"delete from " + tbl, "update " + tbl + " set order_id = 'x' returning order_id, 1"} {
		err := checkEffectsSQL(context.Background(), pool, q)
		if err == nil || !strings.Contains(err.Error(), "must be read-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
}
