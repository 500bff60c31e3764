package logs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/logs/loggen"
)

var causeCode = map[loggen.Cause]string{
	loggen.Redelivery:    RuleRedelivery.Code,
	loggen.LockExpiry:    RuleLockExpiry.Code,
	loggen.LockKeyJobID:  RuleLockKeyJobID.Code,
	loggen.UnlockNoToken: RuleUnlockNoToken.Code,
	loggen.UnstableKey:   RuleUnstableKey.Code,
	loggen.NonAtomic:     RuleNonAtomic.Code,
	loggen.StaleCache:    RuleStaleCache.Code,
	loggen.RaceNoLock:    RuleRace.Code,
}

// writeCorpus writes a generated log into dir, one file per worker when
// perWorker, and returns its sources and truth.
func writeCorpus(t testing.TB, dir string, c loggen.Config, perWorker bool) ([]logread.Source, loggen.Summary) {
	t.Helper()
	files := map[string]*bufio.Writer{}
	var closers []*os.File
	out := func(w string) *bufio.Writer {
		name := "fleet.log"
		if perWorker {
			name = w + ".log"
		}
		bw := files[name]
		if bw == nil {
			f, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			closers = append(closers, f)
			bw = bufio.NewWriter(f)
			files[name] = bw
		}
		return bw
	}
	sum, err := loggen.Write(c, func(w string) io.Writer { return out(w) })
	if err != nil {
		t.Fatal(err)
	}
	for _, bw := range files {
		bw.Flush()
	}
	for _, f := range closers {
		f.Close()
	}
	srcs, err := logread.Expand([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srcs, sum
}

// TestCorpus is the correctness bar: on generated fleets with injected
// incidents of every cause, in every dialect, the audit finds exactly the
// duplicated keys (100% precision and recall) and names at least 95% of
// the causes right.
func TestCorpus(t *testing.T) {
	for _, d := range loggen.Dialects() {
		for _, perWorker := range []bool{false, true} {
			name := fmt.Sprintf("%s/per-worker=%v", d, perWorker)
			t.Run(name, func(t *testing.T) {
				c := loggen.Config{Seed: 7, Jobs: 2400, IncidentEvery: 20, Dialect: d, Skew: 40 * time.Millisecond}
				srcs, sum := writeCorpus(t, t.TempDir(), c, perWorker)
				res, err := Run(context.Background(), srcs, Options{ClockSkew: 100 * time.Millisecond, ChunkSize: 64 << 10})
				if err != nil {
					t.Fatal(err)
				}
				checkTruth(t, res, sum)
			})
		}
	}
}

func checkTruth(t *testing.T, res *Result, sum loggen.Summary) {
	t.Helper()
	truth := map[string]loggen.Truth{}
	for _, tr := range sum.Incidents {
		truth[tr.BusinessKey] = tr
	}
	found := map[string]Duplicate{}
	for _, d := range res.Duplicates {
		found[d.Key] = d
		if _, ok := truth[d.Key]; !ok {
			t.Errorf("false positive: %s (%s: %s)", d.Key, d.Cause, d.Explanation)
		}
	}
	right := 0
	for k, tr := range truth {
		d, ok := found[k]
		if !ok {
			t.Errorf("missed duplicate %s (%s)", k, tr.Cause)
			continue
		}
		if d.Cause == causeCode[tr.Cause] {
			right++
		} else {
			t.Logf("%s: cause %s, truth %s: %s", k, d.Cause, tr.Cause, d.Explanation)
		}
	}
	if len(truth) == 0 {
		t.Fatal("corpus has no incidents")
	}
	if pct := float64(right) / float64(len(truth)); pct < 0.95 {
		t.Errorf("causes right: %d of %d (%.1f%%), want >= 95%%", right, len(truth), 100*pct)
	}
	if res.Input.Malformed != 0 {
		t.Errorf("%d malformed lines in a generated log", res.Input.Malformed)
	}
}

// TestCleanLogs: a healthy fleet with crashes the idempotency layer
// absorbs, lock contention, retries and DLQ has no finding.
func TestCleanLogs(t *testing.T) {
	for _, d := range loggen.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			srcs, _ := writeCorpus(t, t.TempDir(), loggen.Config{Seed: 3, Jobs: 3000, Dialect: d}, true)
			res, err := Run(context.Background(), srcs, Options{ClockSkew: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report()
			if len(rep.Findings) != 0 {
				t.Fatalf("clean logs gave %d findings, first %+v", len(rep.Findings), rep.Findings[0])
			}
			m := res.Metrics
			if res.Effects < 2900 || m.DuplicatesCaught == 0 || m.Retries == 0 || m.DeadLettered == 0 || len(m.JobTypes) != 3 || m.Duration == nil || len(m.Errors) == 0 {
				t.Fatalf("metrics look wrong: effects %d %+v", res.Effects, m)
			}
			if res.ReadAgain != 0 {
				t.Errorf("clean logs read %d chunks again", res.ReadAgain)
			}
		})
	}
}

func TestIncidentTimeline(t *testing.T) {
	srcs, sum := writeCorpus(t, t.TempDir(), loggen.Config{Seed: 5, Jobs: 200, IncidentEvery: 20, Dialect: loggen.Camel}, false)
	key := sum.Incidents[1].BusinessKey // lock expiry
	res, err := Run(context.Background(), srcs, Options{Incident: key})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Timelines) != 1 || res.Timelines[0].Key != key || len(res.Timelines[0].Workers) < 2 {
		t.Fatalf("timelines: %+v", res.Timelines)
	}
	repeats := 0
	for _, r := range res.Timelines[0].Rows {
		if r.Repeat {
			repeats++
		}
	}
	if repeats != 1 {
		t.Fatalf("%d repeated effects marked", repeats)
	}
	// A clean key's timeline is available too.
	res, err = Run(context.Background(), srcs, Options{Incident: "ord-0000001"})
	if err != nil || len(res.Timelines) != 1 || len(res.Timelines[0].Rows) == 0 {
		t.Fatalf("clean incident: %v %+v", err, res.Timelines)
	}
}

func TestHistogram(t *testing.T) {
	var h hist
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	p := h.percentiles()
	for _, c := range []struct {
		got, want time.Duration
	}{{p.P50, 500 * time.Millisecond}, {p.P95, 950 * time.Millisecond}, {p.P99, 990 * time.Millisecond}, {p.Max, time.Second}} {
		if d := c.got - c.want; d < -c.want/30 || d > c.want/30 {
			t.Errorf("quantile %s, want %s within 3%%", c.got, c.want)
		}
	}
}
