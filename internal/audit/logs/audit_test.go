package logs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/logs/loggen"
)

var causeCode = map[loggen.Cause]string{
	loggen.NonAtomicUnloggedCheck: RuleNonAtomic.Code,
	loggen.Redelivery:             RuleRedelivery.Code,
	loggen.LockExpiry:             RuleLockExpiry.Code,
	loggen.LockKeyJobID:           RuleLockKeyJobID.Code,
	loggen.UnlockNoToken:          RuleUnlockNoToken.Code,
	loggen.UnstableKey:            RuleUnstableKey.Code,
	loggen.NonAtomic:              RuleNonAtomic.Code,
	loggen.StaleCache:             RuleStaleCache.Code,
	loggen.RaceNoLock:             RuleRace.Code,
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
// incidents of every cause, in every dialect (the message-only ones of
// slog, zap, logback, Spring Boot ECS, pino and structlog among them), the
// audit finds exactly the duplicated keys (no false alarm, none missed),
// names at least 95% of the causes right (an incident whose lines fit two
// causes is right only as DUP_EFFECT_UNDETERMINED naming both), and makes
// no false statement: every line an explanation says the log does not
// hold is checked against what the generator wrote.
func TestCorpus(t *testing.T) {
	for _, d := range loggen.Dialects() {
		for _, perWorker := range []bool{false, true} {
			name := fmt.Sprintf("%s/per-worker=%v", d, perWorker)
			t.Run(name, func(t *testing.T) {
				c := loggen.Config{Seed: 7, Jobs: 2400, IncidentEvery: 20, Dialect: d, Skew: 40 * time.Millisecond, Record: true}
				srcs, sum := writeCorpus(t, t.TempDir(), c, perWorker)
				res, err := Run(context.Background(), srcs, Options{ClockSkew: 100 * time.Millisecond, ChunkSize: 64 << 10})
				if err != nil {
					t.Fatal(err)
				}
				checkTruth(t, res, sum)
				checkStatements(t, res, sum, perWorker)
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
			t.Errorf("false alarm: %s (%s: %s)", d.Key, d.Cause, d.Explanation)
		}
	}
	right := 0
	for k, tr := range truth {
		d, ok := found[k]
		if !ok {
			t.Errorf("missed duplicate %s (%s)", k, tr.Cause)
			continue
		}
		if causeRight(d, tr) {
			right++
		} else {
			t.Logf("%s: cause %s %v, truth %s %v: %s", k, d.Cause, d.Candidates, tr.Cause, tr.Ambiguous, d.Explanation)
		}
	}
	if len(truth) == 0 {
		t.Fatal("corpus has no incidents")
	}
	pct := float64(right) / float64(len(truth))
	if pct < 0.95 {
		t.Errorf("causes right: %d of %d (%.1f%%), want >= 95%%", right, len(truth), 100*pct)
	}
	t.Logf("causes right: %d of %d (%.1f%%)", right, len(truth), 100*pct)
	if res.Input.Malformed != 0 {
		t.Errorf("%d malformed lines in a generated log", res.Input.Malformed)
	}
}

// causeRight: the cause named, or for lines that fit several causes,
// undetermined between exactly those.
func causeRight(d Duplicate, tr loggen.Truth) bool {
	if len(tr.Ambiguous) == 0 {
		return d.Cause == causeCode[tr.Cause]
	}
	var want []string
	for _, c := range tr.Ambiguous {
		want = append(want, causeCode[c])
	}
	got := slices.Clone(d.Candidates)
	slices.Sort(want)
	slices.Sort(got)
	return d.Cause == RuleUndetermined.Code && slices.Equal(got, want)
}

// checkStatements checks every absence an explanation states against the
// lines the generator wrote: a run said to have no line of a kind (before
// its side effect) must have none.
func checkStatements(t *testing.T, res *Result, sum loggen.Summary, perWorker bool) {
	t.Helper()
	type at struct {
		file string
		line int64
	}
	type runID struct {
		worker, job, msg string
		attempt          int
	}
	byLine := map[at]loggen.Step{}
	steps := map[runID][]loggen.Step{} // in the order written
	for _, s := range sum.Steps {
		file := "fleet.log"
		if perWorker {
			file = s.Worker + ".log"
		}
		byLine[at{file, s.Line}] = s
		id := runID{s.Worker, s.Job, s.Message, s.Attempt}
		steps[id] = append(steps[id], s)
	}
	truthKind := map[string]string{"check": "idempotency_check"}
	claims := 0
	for _, d := range res.Duplicates {
		for _, p := range d.Pairs {
			for _, a := range p.Absent {
				claims++
				path, line, _ := strings.Cut(a.Anchor, ":")
				n, _ := strconv.ParseInt(line, 10, 64)
				s0, ok := byLine[at{filepath.Base(path), n}]
				if !ok {
					t.Errorf("%s: absence anchored at %s, which the generator did not write", d.Key, a.Anchor)
					continue
				}
				for _, s := range steps[runID{s0.Worker, s0.Job, s0.Message, s0.Attempt}] {
					if a.BeforeEffect && s.Kind == "side_effect" {
						break
					}
					for _, k := range a.Kinds {
						if s.Kind == k || s.Kind == truthKind[k] {
							t.Errorf("false statement on %s: %q, but %s wrote %s at line %d", d.Key, a.sentence(), s.Worker, s.Kind, s.Line)
						}
					}
				}
			}
		}
	}
	if claims == 0 {
		t.Error("no explanation stated an absence: the check checked nothing")
	}
	t.Logf("%d stated absences checked against the lines written", claims)
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
			// Attempts as logged: pino and structlog services count from 0.
			first := 1
			if d == loggen.Pino || d == loggen.Structlog {
				first = 0
			}
			if a := m.DeliveriesByAttempt; len(a) < 2 || a[0].Attempt != first || a[1].Attempt != first+1 || m.NoAttempt != 0 {
				t.Errorf("deliveries by attempt %+v (%d without), want attempts from %d", a, m.NoAttempt, first)
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

// TestKeyStatChunks: the second pass re-reads every chunk a key's lines
// were in, and only those while they fit; past four, the whole range.
func TestKeyStatChunks(t *testing.T) {
	for _, c := range []struct {
		seen, want []uint32
	}{
		{[]uint32{7}, []uint32{7}},
		{[]uint32{7, 7, 9, 9, 30}, []uint32{7, 9, 30}},
		{[]uint32{7, 8, 20, 21}, []uint32{7, 8, 20, 21}},
		{[]uint32{7, 8, 20, 21, 23}, []uint32{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
	} {
		var s keyStat
		s.first, s.last = c.seen[0], c.seen[0]
		for _, x := range c.seen {
			s.saw(x)
		}
		var got []uint32
		s.chunks(func(x uint32) { got = append(got, x) })
		if !slices.Equal(got, c.want) {
			t.Errorf("saw %v: re-reads %v, want %v", c.seen, got, c.want)
		}
	}
	var s keyStat
	s.first, s.last = 1, 1
	s.saw(70_000) // too far for an offset: the range
	n := 0
	s.chunks(func(uint32) { n++ })
	if n != 70_000 {
		t.Errorf("far chunk: %d chunks re-read, want the range of 70000", n)
	}
}
