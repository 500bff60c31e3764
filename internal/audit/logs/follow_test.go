package logs

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

// followRun runs Follow on a stream the test writes, in a goroutine; the
// findings arrive on a channel as found calls them.
type followRun struct {
	w        *io.PipeWriter
	findings chan Finding
	done     chan struct{}
	res      *Result
	err      error
	cancel   context.CancelFunc
}

// onFound, when set, sees each finding first and says whether it goes on
// the channel (a finding left on it is held in memory).
func startFollow(t *testing.T, o FollowOptions, onFound func(Finding) bool) *followRun {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	r := &followRun{w: pw, findings: make(chan Finding, 1<<12), done: make(chan struct{}), cancel: cancel}
	if o.Settle == 0 {
		o.Settle = 5 * time.Millisecond
	}
	go func() {
		defer close(r.done)
		o.Found = func(f Finding) error {
			if onFound == nil || onFound(f) {
				r.findings <- f
			}
			return nil
		}
		r.res, r.err = Follow(ctx, []logread.Source{logread.ReaderSource("-", pr)}, o)
	}()
	t.Cleanup(func() { cancel(); pw.Close(); <-r.done })
	return r
}

func (r *followRun) write(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(r.w, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next waits for the next finding (a hang fails the test; not a timing).
func (r *followRun) next(t *testing.T) Finding {
	t.Helper()
	select {
	case f := <-r.findings:
		return f
	case <-r.done:
		t.Fatalf("the follow ended (%v) before a finding", r.err)
	case <-time.After(time.Minute):
		t.Fatal("no finding in a minute")
	}
	return Finding{}
}

// end stops the follow as a signal does and returns its summary.
func (r *followRun) end(t *testing.T) *Result {
	t.Helper()
	r.cancel()
	<-r.done
	if r.err != nil {
		t.Fatalf("follow: %v", r.err)
	}
	return r.res
}

func line(at, ev, worker, order, msg string, attempt int) string {
	return fmt.Sprintf(`{"time":"2026-11-03T%sZ","event":%q,"consumerInstanceId":%q,"orderId":%q,"messageId":%q,"attempt":%d,`+
		`"idempotencyKey":"pay:%s"}`, at, ev, worker, order, msg, attempt, order)
}

// A duplicate is reported as soon as its second side effect is read -
// before the stream goes on - with the cause the batch audit's classifier
// gives on the key's lines so far; the summary on the end counts it.
func TestFollowReportsAtTheSecondSideEffect(t *testing.T) {
	r := startFollow(t, FollowOptions{}, nil)
	r.write(t,
		line("09:00:00.000", "received", "w1", "ord-1", "m1", 1),
		line("09:00:00.100", "side_effect", "w1", "ord-1", "m1", 1),
		line("09:00:00.200", "committed", "w1", "ord-1", "m1", 1),
		line("09:00:00.300", "crash", "w1", "ord-1", "m1", 1),
		line("09:00:05.000", "received", "w2", "ord-2", "m2", 1),
		line("09:00:05.100", "side_effect", "w2", "ord-2", "m2", 1),
		line("09:00:31.000", "received", "w2", "ord-1", "m1", 2),
		line("09:00:31.100", "side_effect", "w2", "ord-1", "m1", 2),
	)
	f := r.next(t)
	if f.Key != "ord-1" || f.Effects != 2 || f.Cause != RuleRedelivery.Code || f.Where != "-:8" ||
		!f.At.Equal(time.Date(2026, 11, 3, 9, 0, 31, 100e6, time.UTC)) {
		t.Fatalf("finding %+v", f)
	}
	// A third run of the effect is reported again, with its count.
	r.write(t, line("09:01:31.000", "received", "w3", "ord-1", "m1", 3), line("09:01:31.100", "side_effect", "w3", "ord-1", "m1", 3))
	if f := r.next(t); f.Key != "ord-1" || f.Effects != 3 || len(f.Pairs) != 2 {
		t.Fatalf("third: %+v", f)
	}
	res := r.end(t)
	if len(res.Duplicates) != 1 || res.Follow.Findings != 2 || res.Follow.DuplicateKeys != 1 || res.Effects != 4 ||
		len(res.Causes) != 1 || res.Causes[0] != (CauseCount{RuleRedelivery.Code, 1}) {
		t.Fatalf("summary %+v %+v", res, res.Follow)
	}
	if rep := res.Report(); len(rep.Findings) != 1 || rep.Findings[0].Code != RuleRedelivery.Code {
		t.Fatalf("report %+v", rep.Findings)
	}
}

// Keys leave the window by the logs' own times: a side effect again after
// more than the window is not a duplicate of the first (its state is
// gone), one within it is.
func TestFollowWindow(t *testing.T) {
	r := startFollow(t, FollowOptions{Window: time.Hour}, nil)
	r.write(t,
		line("09:00:00.000", "side_effect", "w1", "ord-1", "m1", 1),
		line("10:30:00.000", "side_effect", "w2", "ord-2", "m2", 1), // ord-1 leaves
		line("10:30:01.000", "side_effect", "w2", "ord-1", "m3", 1),
		line("10:40:00.000", "side_effect", "w3", "ord-2", "m4", 1), // within the hour
	)
	if f := r.next(t); f.Key != "ord-2" {
		t.Fatalf("want ord-2 only, got %s", f.Key)
	}
	res := r.end(t)
	if len(res.Duplicates) != 1 || res.Follow.KeysLeft != 1 || res.Follow.KeysInWindow != 2 {
		t.Fatalf("summary %+v", res.Follow)
	}
}

// Lines without a time are placed by when they arrive.
func TestFollowWindowByArrival(t *testing.T) {
	now := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	r := startFollow(t, FollowOptions{Window: time.Minute, Now: func() time.Time { return now }}, nil)
	untimed := func(order, msg string) string {
		return fmt.Sprintf(`{"event":"side_effect","orderId":%q,"messageId":%q}`, order, msg)
	}
	r.write(t, untimed("ord-1", "m1"))
	r.write(t, untimed("ord-1", "m2")) // the same minute
	if f := r.next(t); f.Key != "ord-1" {
		t.Fatalf("got %s", f.Key)
	}
	res := r.end(t)
	if res.Follow.KeysInWindow != 1 || res.Untimed != 2 {
		t.Fatalf("summary %+v, untimed %d", res.Follow, res.Untimed)
	}
}

// The summary of a whole log followed is the batch audit's: the same
// duplicated keys with the same causes (the classifier is one), and every
// one of them was reported as it was found.
func TestFollowAgreesWithTheBatchAudit(t *testing.T) {
	dir := t.TempDir()
	c := loggen.Config{Seed: 11, Jobs: scaled(1200), IncidentEvery: 20, Dialect: loggen.Camel, Skew: 40 * time.Millisecond}
	srcs, _ := writeCorpus(t, dir, c, false)
	batch, err := Run(context.Background(), srcs, Options{ClockSkew: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	src, err := logread.File(srcs[0].Name())
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	res, err := Follow(context.Background(), []logread.Source{streamOf(t, src)}, FollowOptions{
		Options: Options{ClockSkew: 250 * time.Millisecond}, Window: 24 * time.Hour,
		Found: func(f Finding) error { found[f.Key]++; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := func(ds []Duplicate) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Key+" "+d.Cause+" "+strings.Join(d.Candidates, ","))
		}
		slices.Sort(out)
		return out
	}
	b, f := verdicts(batch.Duplicates), verdicts(res.Duplicates)
	if len(b) == 0 || !slices.Equal(b, f) {
		t.Fatalf("batch and follow disagree:\nbatch  %v\nfollow %v", b, f)
	}
	for _, d := range batch.Duplicates {
		if found[d.Key] != d.Effects-1 {
			t.Fatalf("%s ran %d times: reported %d times as found, want %d", d.Key, d.Effects, found[d.Key], d.Effects-1)
		}
	}
}

// streamOf reads a file as a stream that ends (as stdin does).
func streamOf(t *testing.T, src logread.Source) logread.Source {
	t.Helper()
	rc, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return logread.ReaderSource(src.Name(), rc)
}

// TestFollowSoak: a day of a fleet's logs, time-compressed, followed with
// a one-hour window: the heap after a GC, measured every 5,000 lines once
// the window and the summary's list are full, stays within 10% - memory
// follows one window's keys, not the time followed.
func TestFollowSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a day of logs")
	}
	every := 5_000 // lines between two measures
	jobs := 21_600 // a job every 4 s for 24 h
	if underRace {
		jobs, every = jobs/4, every/4 // a quarter of the day at the same rate, as many measures
	}
	c := loggen.Config{Seed: 3, Jobs: jobs, Gap: 4 * time.Second, IncidentEvery: 20, Dialect: loggen.Camel}
	// A probe is a duplicate of its own every `every` lines: its finding
	// comes on the follow's goroutine with everything before it read, and
	// the heap is measured there.
	var heap []uint64
	probes := 0
	r := startFollow(t, FollowOptions{Window: time.Hour, MaxKept: 100}, func(f Finding) bool {
		if !strings.HasPrefix(f.Key, "probe-") {
			return false
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = append(heap, ms.HeapAlloc)
		return true
	})
	pw := &probing{w: r.w, every: every, probes: &probes}
	sum, err := loggen.Write(c, loggen.Single(pw))
	if err != nil {
		t.Fatal(err)
	}
	for range probes { // up to the last probe's finding
		r.next(t)
	}
	res := r.end(t)
	t.Logf("%d lines, %d findings, %d keys left the window, %d in it; heap (MB) every %d lines: %s",
		sum.Lines, res.Follow.Findings, res.Follow.KeysLeft, res.Follow.KeysInWindow, every, mb(heap))
	if len(heap) < 12 {
		t.Fatalf("only %d measures", len(heap))
	}
	// Warm-up: a window's keys (900 jobs, ~9,000 lines) and the summary's
	// list (100 duplicates, one every 20 jobs: 2,000 jobs, ~20,000 lines)
	// fill first; the first quarter of the measures is left out (under the
	// race detector the list is still filling then: a few hundred KB).
	steady := heap[len(heap)/4:]
	lo, hi := slices.Min(steady), slices.Max(steady)
	if growth := float64(hi)/float64(lo) - 1; growth > 0.10 {
		t.Fatalf("heap grew %.1f%% once steady (%s MB)", 100*growth, mb(steady))
	}
	if res.Follow.KeysInWindow > 2*900 || res.Follow.KeysLeft < int64(jobs/2) {
		t.Fatalf("the window does not let keys go: %d in it, %d left", res.Follow.KeysInWindow, res.Follow.KeysLeft)
	}
}

func mb(hs []uint64) string {
	var s []string
	for _, h := range hs {
		s = append(s, fmt.Sprintf("%.1f", float64(h)/(1<<20)))
	}
	return strings.Join(s, " ")
}

// probing passes the generator's lines on and, every `every` lines, adds
// two side-effect lines of a key of its own (with no time: placed where
// they arrive), which the follow reports as a duplicate.
type probing struct {
	w      io.Writer
	every  int
	lines  int
	probes *int
}

func (p *probing) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.lines += strings.Count(string(b), "\n")
	if err == nil && p.lines >= p.every {
		p.lines = 0
		*p.probes++
		probe := fmt.Sprintf(`{"event":"side_effect","orderId":"probe-%d","messageId":"p"}`+"\n", *p.probes)
		_, err = io.WriteString(p.w, probe+probe)
	}
	return n, err
}
