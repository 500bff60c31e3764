package watch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// start runs a watch in the background and returns its address and a
// stop that ends it and returns its result.
func start(t *testing.T, d Deps, o Options) (string, func() *Result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	o.Listen = "127.0.0.1:0"
	o.Listening = func(a string) { addr <- a }
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 2 * time.Second
	}
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Run(ctx, d, o)
		done <- out{res, err}
	}()
	var a string
	select {
	case a = <-addr:
	case r := <-done:
		t.Fatalf("watch ended before listening: %v", r.err)
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not listen in 5s")
	}
	var stopped *Result
	stop := func() *Result {
		if stopped != nil {
			return stopped
		}
		cancel()
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("watch: %v", r.err)
			}
			stopped = r.res
		case <-time.After(10 * time.Second):
			t.Fatal("watch did not stop within 10s of its context's end")
		}
		return stopped
	}
	t.Cleanup(func() { stop() })
	return a, stop
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// value is a sample's value in an exposition, or -1 when absent.
func value(metrics, series string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(metrics)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// hasValues holds when every series has its value.
func hasValues(want map[string]float64) func(string) bool {
	return func(m string) bool {
		for series, w := range want {
			if value(m, series) != w {
				return false
			}
		}
		return true
	}
}

// waitFor polls /metrics until cond holds, failing after 10s.
func waitFor(t *testing.T, addr string, what string, cond func(metrics string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := get(t, "http://"+addr+"/metrics")
		if cond(body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s; metrics:\n%s", what, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestChecksRunAloneAndFailuresAreCounted: a check slower than its
// interval never runs twice at once, a timed-out run and a failed one
// are counted with their result, a panic is a failed run, and the other
// check goes on; /readyz waits for every check's first run.
func TestChecksRunAloneAndFailuresAreCounted(t *testing.T) {
	var running, overlap, slowRuns atomic.Int32
	release := make(chan struct{})
	slow := Check{Name: "lock", Interval: time.Second, Timeout: 1500 * time.Millisecond,
		Run: func(ctx context.Context) (*Sample, error) {
			if running.Add(1) > 1 {
				overlap.Add(1)
			}
			defer running.Add(-1)
			if slowRuns.Add(1) == 1 {
				<-release // the first run waits to be let go, so /readyz is seen not ready
				return &Sample{}, nil
			}
			<-ctx.Done() // later runs outlast their timeout
			return nil, ctx.Err()
		}}
	var n atomic.Int32
	flaky := Check{Name: "store", Interval: time.Second, Run: func(ctx context.Context) (*Sample, error) {
		switch n.Add(1) {
		case 1:
			return nil, errors.New("relation does not exist")
		case 2:
			panic("broken")
		}
		return &Sample{Tables: []TableState{{Table: "payments_idem", StuckRows: 3, DuplicateKeys: 1}},
			Report: &findings.Report{Findings: []findings.Finding{{Code: "STORE_STUCK", Severity: findings.Warn, Subject: "k-1"}}}}, nil
	}}
	addr, stop := start(t, Deps{Checks: []Check{slow, flaky}}, Options{})
	if code, body := get(t, "http://"+addr+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready") {
		t.Errorf("/readyz before the first runs: %d %q", code, body)
	}
	if code, _ := get(t, "http://"+addr+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	close(release)
	body := waitFor(t, addr, "a timed-out lock run and store ok after an error and a panic", func(m string) bool {
		return value(m, `dupctl_check_runs_total{check="lock",result="timeout"}`) >= 1 &&
			value(m, `dupctl_check_runs_total{check="store",result="ok"}`) >= 1
	})
	if code, body := get(t, "http://"+addr+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after every check ran: %d %q", code, body)
	}
	// Each metric is gathered on its own goroutine: one scrape can show
	// the run counted and not yet its gauges, so they are waited for too.
	body = waitFor(t, addr, "the store run's gauges and the lock's timeout", hasValues(map[string]float64{
		`dupctl_check_runs_total{check="store",result="error"}`:             2, // the error and the panic
		`dupctl_store_stuck_processing_rows{table="payments_idem"}`:         3,
		`dupctl_store_duplicate_keys{table="payments_idem"}`:                1,
		`dupctl_findings{check="store",code="STORE_STUCK",severity="warn"}`: 1,
		`dupctl_check_up{check="store"}`:                                    1,
		`dupctl_check_up{check="lock"}`:                                     0,
	}))
	if strings.Contains(body, "k-1") {
		t.Error("a finding's subject (a key) is a label value")
	}
	res := stop()
	if overlap.Load() != 0 {
		t.Errorf("%d runs of the lock check started while one was running", overlap.Load())
	}
	if res.Runs["store"] < 3 || res.Failed["store"] != 2 || res.Failed["lock"] < 1 {
		t.Errorf("result: runs %v failed %v", res.Runs, res.Failed)
	}
}

// TestShutdownCancelsRunningChecks: a check that ignores nothing but its
// context is cancelled at the end, and Run returns within the shutdown
// timeout.
func TestShutdownCancelsRunningChecks(t *testing.T) {
	started := make(chan struct{}, 1)
	c := Check{Name: "dlq", Interval: time.Minute, Timeout: time.Hour, Run: func(ctx context.Context) (*Sample, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	before := runtime.NumGoroutine()
	_, stop := start(t, Deps{Checks: []Check{c}}, Options{ShutdownTimeout: 500 * time.Millisecond})
	<-started
	t0 := time.Now()
	res := stop()
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("shutdown took %s with a 500ms shutdown timeout", took)
	}
	if res.Failed["dlq"] != 0 {
		t.Errorf("a run cut short by the shutdown counted as failed: %v", res.Failed)
	}
	// Nothing of the watch is left running: its loops, server and runs.
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines after the watch ended, %d before it started", runtime.NumGoroutine(), before)
			break
		}
	}
}

// TestLabelsStayBounded: past MaxLabelValues, families add up under
// "other", the families without TTL first, and a later scan replaces the
// last one's families.
func TestLabelsStayBounded(t *testing.T) {
	m := newMetrics(2)
	m.apply("lock", &Sample{LockFamilies: []LockFamily{
		{Template: "a:{int}", Certainty: "likely", Keys: 10},
		{Template: "b:{int}", Certainty: "likely", Keys: 5, NoTTL: 2},
		{Template: "c:{int}", Certainty: "likely", Keys: 7},
		{Template: "d:{int}", Certainty: "likely", Keys: 1},
	}})
	got := map[string]float64{}
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "dupctl_lock_keys" {
			continue
		}
		for _, s := range mf.GetMetric() {
			got[s.GetLabel()[1].GetValue()] = s.GetGauge().GetValue() // labels sorted: certainty, family
		}
	}
	want := map[string]float64{"b:{int}": 5, "a:{int}": 10, Other: 8}
	if len(got) != len(want) {
		t.Fatalf("lock keys by family: %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("lock keys of %s = %g, want %g (all: %v)", k, got[k], v, got)
		}
	}
	m.apply("lock", &Sample{LockFamilies: []LockFamily{{Template: "e:{int}", Certainty: "confirmed", Keys: 1}}})
	mfs, _ = m.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "dupctl_lock_keys" && len(mf.GetMetric()) != 1 {
			t.Errorf("after a second scan with one family: %d series", len(mf.GetMetric()))
		}
	}
}

// TestFollowCounts: the follower's lines and duplicates become counters
// with bounded labels.
func TestFollowCounts(t *testing.T) {
	follow := func(ctx context.Context, seen func(LogRecord), duplicate func(string)) error {
		seen(LogRecord{Kind: "received", JobType: "charge"})
		seen(LogRecord{Kind: "lock_failed", JobType: "charge"})
		seen(LogRecord{Kind: "side_effect", JobType: "charge"})
		seen(LogRecord{Kind: "completed", JobType: "charge", Duration: 1500 * time.Millisecond})
		duplicate("DUP_EFFECT_REDELIVERY")
		<-ctx.Done()
		return nil
	}
	addr, _ := start(t, Deps{Follow: follow}, Options{})
	// A scrape gathers each metric on its own goroutine, so one scrape
	// may show the duplicate and not yet the lines counted before it (CI
	// saw that): wait until every series is there, then hold their values.
	want := map[string]float64{
		`dupctl_duplicates_total{cause="DUP_EFFECT_REDELIVERY"}`: 1,
		`dupctl_log_jobs_received_total{job_type="charge"}`:      1,
		`dupctl_log_locks_total{outcome="busy"}`:                 1,
		`dupctl_log_side_effects_total{job_type="charge"}`:       1,
		`dupctl_job_duration_seconds_sum{job_type="charge"}`:     1.5,
		`dupctl_log_events_total{kind="completed"}`:              1,
	}
	waitFor(t, addr, "every line and the duplicate counted once", hasValues(want))
	if code, _ := get(t, "http://"+addr+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with no check: %d", code)
	}
}

// TestFollowErrorsRestartAndEndsStop: a follow that fails is counted and
// started again; one whose sources ended (nil) is not started again.
func TestFollowErrorsRestartAndEndsStop(t *testing.T) {
	var calls atomic.Int32
	follow := func(ctx context.Context, seen func(LogRecord), duplicate func(string)) error {
		if calls.Add(1) == 1 {
			return errors.New("worker.log: permission denied")
		}
		return nil // stdin closed
	}
	addr, _ := start(t, Deps{Follow: follow}, Options{followPause: 50 * time.Millisecond})
	waitFor(t, addr, "the failed follow counted", func(m string) bool { return value(m, "dupctl_follow_errors_total") == 1 })
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := calls.Load(); n != 2 {
		t.Errorf("follower called %d times, want 2 (once failing, once ending)", n)
	}
}
