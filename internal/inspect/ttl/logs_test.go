package ttl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

// workerLog is verbatim worker output, one JSON object a line, so its
// longer lines stay whole (issue 28).
const workerLog = `{"ts":"2026-12-01T10:00:00.000Z","event":"lock_acquired","jobId":"j1","attempt":1,"jobType":"payment","lockKey":"lock:payment:order:1","lockToken":"a1","lockTtlMs":30000}
{"ts":"2026-12-01T10:00:00.500Z","event":"lock_acquired","jobId":"j2","attempt":1,"jobType":"payment","lockKey":"lock:payment:order:2","lockToken":"b1","lockTtlMs":30000}
{"ts":"2026-12-01T10:00:20.000Z","event":"lock_released","lockKey":"lock:payment:order:1","lockToken":"a1"}
{"ts":"2026-12-01T10:00:21.000Z","event":"acked","jobId":"j1","attempt":1}
{"ts":"2026-12-01T10:00:45.500Z","event":"acked","jobId":"j2","attempt":1,"jobType":"payment"}
{"ts":"2026-12-01T10:00:50.000Z","event":"lock_acquired","jobId":"j3","attempt":2,"jobType":"payment","lockKey":"lock:payment:order:3","lockToken":"c1","lockTtlMs":5000}
{"ts":"2026-12-01T10:00:57.000Z","event":"lock_released","jobId":"j3","attempt":2,"lockKey":"lock:payment:order:3","lockToken":"c1"}
{"ts":"2026-12-01T10:01:00.000Z","event":"lock_acquired","jobId":"j4","attempt":1,"jobType":"payment","lockKey":"lock:payment:order:4","lockToken":"d1","lockTtlMs":30000}
{"ts":"2026-12-01T10:01:00.000Z","event":"completed","jobId":"j9","jobType":"payment","durationMs":99000}
this is not json
{"ts":"2026-12-01T10:02:00.000Z","event":"completed","jobId":"e1","jobType":"email","durationMs":1200}
{"ts":"2026-12-01T10:02:01.000Z","event":"completed","jobId":"e2","jobType":"email","durationMs":800,"lockTtlMs":1000}
`

func readLog(t *testing.T, in string, o CollectOptions) *Collector {
	t.Helper()
	c := NewCollector(o)
	if _, err := ReadLogs(context.Background(), []logs.Source{logs.ReaderSource("worker.log", strings.NewReader(in))},
		logs.Options{}, "", c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadLogsPairsLockSpans(t *testing.T) {
	c := readLog(t, workerLog, CollectOptions{})
	// payment: spans only (j1 released by token, j2 closed by its ack,
	// j3 by job id + attempt); j9's durationMs is not counted on top;
	// j4 never released. email: durations from the field.
	assertRuns(t, c, map[string][]time.Duration{
		"payment": {7 * time.Second, 20 * time.Second, 45 * time.Second},
		"email":   {800 * time.Millisecond, 1200 * time.Millisecond},
	})
	pay := c.types["payment"]
	if pay.outlived != 2 || pay.judged != 3 {
		t.Errorf("payment outlived %d of %d, want 2 (j2 45s > 30s, j3 7s > 5s) of 3", pay.outlived, pay.judged)
	}
	if em := c.types["email"]; em.outlived != 0 || em.judged != 1 {
		t.Errorf("email outlived %d of %d, want 0 of 1 (only e2 has a TTL... 800ms < 1s)", em.outlived, em.judged)
	}
	if c.skipped.Rows != 2 || !slices.ContainsFunc(c.skipped.Examples, func(s string) bool {
		return strings.HasPrefix(s, "worker.log:8: lock acquired and never released")
	}) || !slices.ContainsFunc(c.skipped.Examples, func(s string) bool { return strings.HasPrefix(s, "worker.log:10: malformed line") }) {
		t.Errorf("skipped %d %v, want the unreleased lock of line 8 and the malformed line 10", c.skipped.Rows, c.skipped.Examples)
	}
	res := c.Analyze(AnalyzeOptions{MinSamples: 1})
	for _, js := range res.JobTypes {
		if js.JobType == "payment" && (js.TTLMS != 30000 || js.TTLSource != SourceData || len(js.TTLsSeen) != 2) {
			t.Errorf("payment TTL %vms from %s, seen %v", js.TTLMS, js.TTLSource, js.TTLsSeen)
		}
	}
}

// A lock span includes the queue wait when the lock is taken at enqueue;
// a bare duration field does not, so --include-wait skips it.
func TestReadLogsIncludeWait(t *testing.T) {
	c := readLog(t, workerLog, CollectOptions{IncludeWait: true})
	if _, ok := c.types["email"]; ok || c.types["payment"].n != 3 {
		t.Errorf("types %v", c.types)
	}
	if c.skipped.Rows != 5 {
		t.Errorf("skipped %d %v, want 5 (2 email + j9 durations, the unreleased lock, the malformed line)", c.skipped.Rows, c.skipped.Examples)
	}
}

// A configured TTL wins over lockTtl.
func TestReadLogsConfiguredTTL(t *testing.T) {
	c := readLog(t, workerLog, CollectOptions{TTLs: TTLs{Default: 10 * time.Second, DefaultSource: SourceFlag}})
	if pay := c.types["payment"]; pay.outlived != 2 {
		t.Errorf("payment outlived %d, want 2 (20s and 45s > 10s)", pay.outlived)
	}
}

// A CSV and logs into one collector: the logs' duration fields join the
// CSV's runs of the same job type.
func TestReadLogsAfterCSV(t *testing.T) {
	c, err := readString(t, "email,5000\n", CollectOptions{}, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLogs(context.Background(), []logs.Source{logs.ReaderSource("worker.log", strings.NewReader(workerLog))},
		logs.Options{}, "", c); err != nil {
		t.Fatal(err)
	}
	assertRuns(t, c, map[string][]time.Duration{
		"payment": {7 * time.Second, 20 * time.Second, 45 * time.Second},
		"email":   {800 * time.Millisecond, 1200 * time.Millisecond, 5 * time.Second},
	})
}

// Any log text pairs into consistent runs: never a negative duration,
// never a crash.
func FuzzReadLogs(f *testing.F) {
	f.Add(workerLog)
	f.Add(`{"event":"lock_acquired","lockKey":"k","ts":1}` + "\n" + `{"event":"lock_released","lockKey":"k","ts":0}` + "\n")
	f.Fuzz(func(t *testing.T, in string) {
		c := NewCollector(CollectOptions{ExactMax: 2})
		if _, err := ReadLogs(context.Background(), []logs.Source{logs.ReaderSource("f", strings.NewReader(in))},
			logs.Options{Workers: 1}, "", c); err != nil {
			return
		}
		for _, s := range c.types {
			if s.n > 0 && (s.min < 0 || s.max < s.min || s.outlived > s.judged) {
				t.Fatalf("inconsistent series %+v", s)
			}
		}
	})
}

// A run whose lock another token took over is counted per token: worker
// 1 holds t1 past its 5s TTL, worker 2 acquires the key with t2 at 6s,
// worker 1 logs only that it lost the lock at 9s (no release, no ack: its
// token-checked unlock found t2). That run outlived its TTL - it is not
// "acquired and never released" - and the takeover is its evidence. The
// same with no tokens logged, found by job id.
func TestReadLogsTakeover(t *testing.T) {
	// verbatim JSON lines: the longer ones stay whole (issue 28)
	for name, in := range map[string]string{
		"tokens": `{"ts":"2026-12-01T10:00:00Z","msg":"lock acquired","lock":{"key":"lock:pay:1","token":"t1","ttl":5000000000},"job":{"type":"payment"}}
{"ts":"2026-12-01T10:00:06Z","msg":"lock acquired","lock":{"key":"lock:pay:1","token":"t2","ttl":5000000000},"job":{"type":"payment"}}
{"ts":"2026-12-01T10:00:06.5Z","msg":"lock released","lock":{"key":"lock:pay:1","token":"t2"},"job":{"type":"payment"}}
{"ts":"2026-12-01T10:00:09Z","msg":"failed to release lock: token mismatch","lock":{"key":"lock:pay:1","token":"t1"},"job":{"type":"payment"}}
`,
		"job ids": `{"ts":"2026-12-01T10:00:00Z","event":"lock_acquired","jobId":"a","attempt":1,"lockKey":"lock:pay:1","lockTtlMs":5000,"jobType":"payment"}
{"ts":"2026-12-01T10:00:06Z","event":"lock_acquired","jobId":"b","attempt":1,"lockKey":"lock:pay:1","lockTtlMs":5000,"jobType":"payment"}
{"ts":"2026-12-01T10:00:06.5Z","event":"lock_released","jobId":"b","attempt":1,"lockKey":"lock:pay:1"}
{"ts":"2026-12-01T10:00:09Z","event":"side_effect","jobId":"a","attempt":1}
`,
	} {
		t.Run(name, func(t *testing.T) {
			c := readLog(t, in, CollectOptions{})
			assertRuns(t, c, map[string][]time.Duration{"payment": {500 * time.Millisecond, 9 * time.Second}})
			pay := c.types["payment"]
			if pay.outlived != 1 || pay.judged != 2 || pay.takenOver != 1 || len(pay.takeovers) != 1 || c.skipped.Rows != 0 {
				t.Fatalf("outlived %d of %d, taken over %d %+v, skipped %v", pay.outlived, pay.judged, pay.takenOver, pay.takeovers,
					c.skipped.Examples)
			}
			tk := pay.takeovers[0]
			if tk.Run != "worker.log:1" || tk.Where != "worker.log:2" || tk.Until != "worker.log:4" || tk.Held != 9*time.Second {
				t.Errorf("takeover %+v", tk)
			}
			res := c.Analyze(AnalyzeOptions{MinSamples: 1})
			if !slices.ContainsFunc(res.Report().Findings, func(f findings.Finding) bool {
				return slices.ContainsFunc(f.Evidence, func(e string) bool {
					return strings.Contains(e, "acquired the lock at 10:00:06.000 while the run that acquired it at worker.log:1 (TTL 5s) still worked")
				})
			}) {
				t.Error("no finding cites the takeover")
			}
		})
	}
	// Taken over and never heard of again: a crash, skipped as before.
	c := readLog(t, `{"ts":"2026-12-01T10:00:00Z","event":"lock_acquired","jobId":"a","lockKey":"k","lockToken":"t1","lockTtlMs":5000}
{"ts":"2026-12-01T10:00:06Z","event":"lock_acquired","jobId":"b","lockKey":"k","lockToken":"t2","lockTtlMs":5000}
{"ts":"2026-12-01T10:00:07Z","event":"lock_released","jobId":"b","lockKey":"k","lockToken":"t2"}
`, CollectOptions{})
	if c.Runs() != 1 || c.skipped.Rows != 1 || !strings.Contains(c.skipped.Examples[0], "taken over at worker.log:2") {
		t.Fatalf("%d runs, skipped %v", c.Runs(), c.skipped.Examples)
	}
}

// TestLogsAgreeWithAudit: on a generated message-only fleet log, every
// lock-expiry duplicate audit logs proves is a run inspect ttl counts as
// outlived, with its takeover as evidence.
func TestLogsAgreeWithAudit(t *testing.T) {
	for _, d := range []loggen.Dialect{loggen.Camel, loggen.SlogMsg, loggen.Logback} {
		t.Run(string(d), func(t *testing.T) {
			var b bytes.Buffer
			if _, err := loggen.Write(loggen.Config{Seed: 2, Jobs: 900, IncidentEvery: 10, Dialect: d}, loggen.Single(&b)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "fleet.log")
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := logs.File(path)
			if err != nil {
				t.Fatal(err)
			}
			audit, err := auditlogs.Run(context.Background(), []logs.Source{src}, auditlogs.Options{ClockSkew: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			expiries := 0
			for _, dup := range audit.Duplicates {
				if dup.Cause == auditlogs.RuleLockExpiry.Code {
					expiries++
				}
			}
			res, err := Run(context.Background(), Deps{}, Options{Files: []string{path}, Analyze: AnalyzeOptions{MinSamples: 1}})
			if err != nil {
				t.Fatal(err)
			}
			var outlived, taken int64
			for _, js := range res.JobTypes {
				outlived += js.Outlived
				taken += js.TakenOver
			}
			if expiries == 0 || taken != int64(expiries) || outlived < taken {
				t.Errorf("audit proves %d lock expiries; ttl counts %d runs taken over, %d outlived", expiries, taken, outlived)
			}
		})
	}
}
