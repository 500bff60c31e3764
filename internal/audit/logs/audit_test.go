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
	"github.com/dupctl/dupctl/internal/testenv/loggen"
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
			t.Run(fmt.Sprintf("%s/per-worker=%v", d, perWorker), func(t *testing.T) { corpus(t, d, perWorker) })
		}
	}
}

// TestCorpusFormats holds every log format real stacks write (CLEF, GELF,
// OTLP batched and one record a line, python-json-logger, nested ECS,
// logrus and go-kit logfmt, the Spring Boot, logback, log4j2, Python,
// Ruby and Sidekiq console layouts, Docker, CRI and journald around
// them) to the same bar, read with no flags: the whole fleet in one file
// where the lines name their worker, and a file per worker (a pod each,
// whose thread names and pids repeat across pods).
func TestCorpusFormats(t *testing.T) {
	for _, d := range loggen.Formats() {
		for _, perWorker := range []bool{false, true} {
			if !perWorker && !loggen.WorkerInLine(d) {
				continue
			}
			t.Run(fmt.Sprintf("%s/per-worker=%v", d, perWorker), func(t *testing.T) { corpus(t, d, perWorker) })
		}
	}
}

func corpus(t *testing.T, d loggen.Dialect, perWorker bool) {
	c := loggen.Config{Seed: 7, Jobs: scaled(2400), IncidentEvery: 20, Dialect: d, Skew: 40 * time.Millisecond, Record: true, Pods: perWorker}
	srcs, sum := writeCorpus(t, t.TempDir(), c, perWorker)
	res, err := Run(context.Background(), srcs, Options{ClockSkew: 100 * time.Millisecond, ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	checkTruth(t, res, sum)
	checkStatements(t, res, sum, perWorker)
	checkEvidence(t, res, sum, perWorker)
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
// its side effect) must have none. In a batched format (OTLP) several runs
// may start on the anchor's line: the statement must hold for one of those
// of its worker.
func checkStatements(t *testing.T, res *Result, sum loggen.Summary, perWorker bool) {
	t.Helper()
	byLine := stepsByLine(sum, perWorker)
	steps := map[runID][]loggen.Step{} // in the order written
	for _, s := range sum.Steps {
		steps[runOf(s)] = append(steps[runOf(s)], s)
	}
	claims := 0
	for _, d := range res.Duplicates {
		for _, p := range d.Pairs {
			for _, a := range p.Absent {
				claims++
				path, line, _ := strings.Cut(a.Anchor, ":")
				n, _ := strconv.ParseInt(line, 10, 64)
				cands := byLine[lineAt{filepath.Base(path), n}]
				if len(cands) == 0 {
					t.Errorf("%s: absence anchored at %s, which the generator did not write", d.Key, a.Anchor)
					continue
				}
				var contradicted []string
				for _, s0 := range anchorRuns(cands, a.Worker) {
					c := contradictions(a, steps[runOf(s0)])
					if len(c) == 0 {
						contradicted = nil
						break
					}
					if contradicted == nil {
						contradicted = c
					}
				}
				for _, c := range contradicted {
					t.Errorf("false statement on %s: %q, but %s", d.Key, a.sentence(), c)
				}
			}
		}
	}
	if claims == 0 {
		t.Error("no explanation stated an absence: the check checked nothing")
	}
	t.Logf("%d stated absences checked against the lines written", claims)
}

// checkEvidence re-reads every evidence line against what the generator
// wrote there: the step, its time (within the clock skew), its worker
// (one name per worker, never none), a lock's TTL and a check's answer
// and source; and no explanation calls a TTL unlogged (every lock line
// logs one).
func checkEvidence(t *testing.T, res *Result, sum loggen.Summary, perWorker bool) {
	t.Helper()
	lines := stepsByLine(sum, perWorker)
	readAs, writer := map[string]string{}, map[string]string{}
	for _, d := range res.Duplicates {
		if strings.Contains(d.Explanation, "unlogged TTL") {
			t.Errorf("false statement on %s: %s, but every lock line logs its TTL", d.Key, d.Explanation)
		}
		for _, p := range d.Pairs {
			for _, e := range p.Evidence {
				s, ok := writtenAs(lines, d.Key, e)
				if !ok {
					t.Errorf("%s: evidence %s is not a line the generator wrote as %s", d.Key, e, e.Event)
					continue
				}
				if wrong := evidenceErrors(e, s); wrong != "" {
					t.Errorf("%s: evidence %s: %s (written: %s %s at %s)", d.Key, e, wrong, s.Worker, s.Kind, s.Time.Format(time.StampMilli))
				}
				if w, ok := readAs[s.Worker]; ok && w != e.Worker || writer[e.Worker] != "" && writer[e.Worker] != s.Worker {
					t.Errorf("%s: evidence %s: worker %q, but %s's lines read as %q and %q's are %s's", d.Key, e, e.Worker, s.Worker, w, e.Worker,
						writer[e.Worker])
				}
				readAs[s.Worker], writer[e.Worker] = e.Worker, s.Worker
			}
		}
	}
}

type lineAt struct {
	file string
	line int64
}

// stepsByLine indexes the steps by the file and line they were written on.
func stepsByLine(sum loggen.Summary, perWorker bool) map[lineAt][]loggen.Step {
	out := map[lineAt][]loggen.Step{}
	for _, s := range sum.Steps {
		file := "fleet.log"
		if perWorker {
			file = s.Worker + ".log"
		}
		out[lineAt{file, s.Line}] = append(out[lineAt{file, s.Line}], s)
	}
	return out
}

// writtenAs is the step written at e's line that e reads as: of the
// steps of e's kind for the duplicated key there (a batched line holds
// several), the one of e's worker or else the nearest in time.
func writtenAs(lines map[lineAt][]loggen.Step, key string, e Evidence) (loggen.Step, bool) {
	path, line, _ := strings.Cut(e.Where, ":")
	n, _ := strconv.ParseInt(line, 10, 64)
	var best loggen.Step
	found := false
	farther := func(a, b loggen.Step) bool { // is a a worse match than b?
		if (a.Worker == e.Worker) != (b.Worker == e.Worker) {
			return b.Worker == e.Worker
		}
		return e.Time.Sub(a.Time).Abs() > e.Time.Sub(b.Time).Abs()
	}
	for _, s := range lines[lineAt{filepath.Base(path), n}] {
		if s.Order != key || s.Kind != e.Event && (s.Kind != "idempotency_check" || e.Event != "check") {
			continue
		}
		if !found || farther(best, s) {
			best, found = s, true
		}
	}
	return best, found
}

// evidenceErrors says what e gets wrong about the step s written there.
func evidenceErrors(e Evidence, s loggen.Step) string {
	var wrong []string
	if d := e.Time.Sub(s.Time); e.Time.IsZero() || d < -41*time.Millisecond || d > 41*time.Millisecond {
		wrong = append(wrong, "time "+e.Time.Format(time.RFC3339Nano))
	}
	if e.Worker == "" {
		wrong = append(wrong, "no worker")
	}
	if s.LockTTL > 0 && s.Kind == "lock_acquired" && !strings.Contains(e.Detail, "ttl="+s.LockTTL.String()) {
		wrong = append(wrong, "TTL "+s.LockTTL.String()+" not read")
	}
	if s.Kind == "idempotency_check" {
		// A check may not say where it looked; what it says must be so.
		other := map[bool]string{true: "from db", false: "from cache"}[s.FromCache]
		if !strings.Contains(e.Detail, "not found") || strings.Contains(e.Detail, other) {
			wrong = append(wrong, "check read as "+e.Detail+", but it found nothing, and not "+other)
		}
	}
	return strings.Join(wrong, "; ")
}

type runID struct {
	worker, job, msg string
	attempt          int
}

func runOf(s loggen.Step) runID { return runID{s.Worker, s.Job, s.Message, s.Attempt} }

// anchorRuns are the steps on an anchor's line that may start the run an
// absence is about: those of its worker when the worker as read names one
// (OTLP's service.instance.id), else all.
func anchorRuns(cands []loggen.Step, worker string) []loggen.Step {
	var mine []loggen.Step
	for _, s := range cands {
		if s.Worker == worker {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 {
		return cands
	}
	return mine
}

// contradictions lists the lines of a run that an absence says it lacks.
func contradictions(a Absence, run []loggen.Step) []string {
	truthKind := map[string]string{"check": "idempotency_check"}
	var out []string
	for _, s := range run {
		if a.BeforeEffect && s.Kind == "side_effect" {
			break
		}
		for _, k := range a.Kinds {
			if s.Kind == k || s.Kind == truthKind[k] {
				out = append(out, fmt.Sprintf("%s wrote %s at line %d", s.Worker, s.Kind, s.Line))
			}
		}
	}
	return out
}

// TestCleanLogs: a healthy fleet with crashes the idempotency layer
// absorbs, lock contention, retries and DLQ has no finding.
func TestCleanLogs(t *testing.T) {
	for _, d := range loggen.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			srcs, _ := writeCorpus(t, t.TempDir(), loggen.Config{Seed: 3, Jobs: scaled(3000), Dialect: d}, true)
			res, err := Run(context.Background(), srcs, Options{ClockSkew: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report()
			if len(rep.Findings) != 0 {
				t.Fatalf("clean logs gave %d findings, first %+v", len(rep.Findings), rep.Findings[0])
			}
			m := res.Metrics
			if res.Effects < int64(scaled(2900)) || m.DuplicatesCaught == 0 || m.Retries == 0 || m.DeadLettered == 0 || len(m.JobTypes) != 3 ||
				m.Duration == nil || len(m.Errors) == 0 {
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

// TestCleanFormats: a healthy fleet in every format, a file per pod, has
// no finding at all (no input warning either), and every side effect is
// read.
func TestCleanFormats(t *testing.T) {
	for _, d := range loggen.Formats() {
		t.Run(string(d), func(t *testing.T) {
			srcs, sum := writeCorpus(t, t.TempDir(), loggen.Config{Seed: 3, Jobs: scaled(1000), Dialect: d, Pods: true, Record: true}, true)
			res, err := Run(context.Background(), srcs, Options{ClockSkew: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Report().Findings {
				t.Errorf("clean logs: %s: %s", f.Code, f.Message)
			}
			var effects int64
			for _, s := range sum.Steps {
				if s.Kind == "side_effect" {
					effects++
				}
			}
			if res.Effects != effects || res.Input.Malformed != 0 {
				t.Errorf("%d side effects read of %d written, %d malformed lines", res.Effects, effects, res.Input.Malformed)
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

// scaled is a corpus size: a third of it under the race detector (still
// 40 incidents of every cause per run at 2,400 jobs).
func scaled(jobs int) int {
	if underRace {
		return jobs / 3
	}
	return jobs
}
