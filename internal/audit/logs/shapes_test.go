package logs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// testdata/listener-ids-only.jsonl is Go log/slog's JSON handler shape
// (time, level, msg, then the attributes, snake_case as many services
// name them) from a service whose listener logs the message id and the
// attempt when it receives and acks, while the business code in between
// logs the order id alone - not the shape of dupctl's generator, where
// every line carries every id.
//
//   - ord-1: two messages (m-1, m-2) for one order, on two workers, one
//     after the other; the second asked a Redis cache, which said "not
//     processed"; w1 logged no status commit.
//   - ord-2: m-3 ran on w1, which charged and logged nothing more (no
//     commit, no ack); the broker redelivered it to w2 (attempt 1), whose
//     database check found nothing.
func auditFile(t *testing.T, path string) *Result {
	t.Helper()
	srcs, err := logread.Expand([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), srcs, Options{ClockSkew: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func duplicateOf(t *testing.T, res *Result, key string) Duplicate {
	t.Helper()
	for _, d := range res.Duplicates {
		if d.Key == key {
			return d
		}
	}
	t.Fatalf("no duplicate for %s in %+v", key, res.Duplicates)
	return Duplicate{}
}

func TestLinesWithoutTheMessageIDJoinTheirWorkersRun(t *testing.T) {
	res := auditFile(t, "testdata/listener-ids-only.jsonl")
	if len(res.Duplicates) != 2 {
		t.Fatalf("%d duplicates, want ord-1 and ord-2", len(res.Duplicates))
	}

	// No status commit of w1 is logged, so the lines cannot tell a cache
	// that lagged an unlogged commit from no commit at all: both named,
	// and the line that would decide. Not a race: w1 had acked before m-2
	// arrived, and a lock would not have helped.
	d1 := duplicateOf(t, res, "ord-1")
	if d1.Cause != RuleUndetermined.Code || !slices.Equal(d1.Candidates, []string{RuleStaleCache.Code, RuleNonAtomic.Code}) {
		t.Errorf("ord-1: %s %v, want undetermined between stale cache and non-atomic commit: %s", d1.Cause, d1.Candidates, d1.Explanation)
	}
	if p := d1.Pairs[0]; !strings.Contains(p.Decide, "a status commit line of w1") || slices.Contains(p.Also, RuleRace.Code) {
		t.Errorf("ord-1: decide %q, also %v", p.Decide, p.Also)
	}

	// ord-2: the check line carries neither id nor attempt, yet it is w2's
	// redelivery's check: it found nothing, so the first run's status was
	// never committed.
	d2 := duplicateOf(t, res, "ord-2")
	if d2.Cause != RuleNonAtomic.Code {
		t.Errorf("ord-2: %s, want %s: %s", d2.Cause, RuleNonAtomic.Code, d2.Explanation)
	}
	for _, d := range res.Duplicates {
		if strings.Contains(d.Explanation, "same message") {
			t.Errorf("%s: %q states a message identity no line shows", d.Key, d.Explanation)
		}
	}
	// Attempts as logged: 0 for the first deliveries, 1 for the redelivery.
	got := map[int]int64{}
	for _, a := range res.Metrics.DeliveriesByAttempt {
		got[a.Attempt] = a.Deliveries
	}
	if got[0] != 3 || got[1] != 1 || len(got) != 2 {
		t.Errorf("deliveries by attempt %v, want 0: 3, 1: 1", got)
	}
}

// With w1's status commit logged, the Redis cache's "not processed" after
// it is proven stale.
func TestCommitThenCacheMissIsStaleCache(t *testing.T) {
	b, err := os.ReadFile("testdata/listener-ids-only.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	commit := `{"time":"2026-12-01T10:00:00.055Z","level":"INFO","msg":"stored status SUCCEEDED in database",` +
		`"order_id":"ord-1","worker":"w1"}` + "\n"
	lines = slices.Insert(lines, 3, commit)
	path := filepath.Join(t.TempDir(), "with-commit.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	d1 := duplicateOf(t, auditFile(t, path), "ord-1")
	if d1.Cause != RuleStaleCache.Code {
		t.Fatalf("ord-1: %s %v, want %s: %s", d1.Cause, d1.Candidates, RuleStaleCache.Code, d1.Explanation)
	}
}

// testdata/logstash-mdc-ids.jsonl is logstash-logback-encoder's shape
// (@timestamp, @version, message, logger_name, thread_name, level,
// level_value, then MDC entries at the top level) with the AMQP message id
// and redelivered flag under MDC names of the service's own choosing. Read
// with the defaults, nothing says whether the two runs handled one message:
// the finding must not say they did. Mapped, it is a redelivery.
func TestMessageIdentityOnlyWhereTheLinesShowIt(t *testing.T) {
	d := duplicateOf(t, auditFile(t, "testdata/logstash-mdc-ids.jsonl"), "ord-9")
	if d.Cause != RuleUnexplained.Code || strings.Contains(d.Explanation, "same message") ||
		!strings.Contains(d.Explanation, "no message or job id") {
		t.Errorf("unmapped: %s: %s", d.Cause, d.Explanation)
	}

	var c logread.Config
	for _, f := range []string{"messageId=amqp_messageId", "redelivered=amqp_redelivered"} {
		if err := c.AddFieldFlag(f); err != nil {
			t.Fatal(err)
		}
	}
	m, err := logread.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := logread.Expand([]string{"testdata/logstash-mdc-ids.jsonl"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), srcs, Options{Mapping: m, ClockSkew: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := duplicateOf(t, res, "ord-9"); d.Cause != RuleRedelivery.Code {
		t.Errorf("mapped: %s: %s", d.Cause, d.Explanation)
	}
}

// testdata/pino-bullmq.jsonl is pino's shape (level as a number, time in
// epoch milliseconds, pid, hostname, msg) from a BullMQ worker that logs
// the job's attemptsMade (BullMQ's JobJson field, counted from 0), lines
// out of time order across two processes: the lock expired under the
// first holder, whose late release is refused.
func TestPinoBullMQAttemptsAndLockExpiry(t *testing.T) {
	res := auditFile(t, "testdata/pino-bullmq.jsonl")
	if d := duplicateOf(t, res, "A-100"); d.Cause != RuleLockExpiry.Code {
		t.Errorf("A-100: %s: %s", d.Cause, d.Explanation)
	}
	got := map[int]int64{}
	for _, a := range res.Metrics.DeliveriesByAttempt {
		got[a.Attempt] = a.Deliveries
	}
	if got[0] != 1 || got[1] != 1 || res.Metrics.NoAttempt != 0 {
		t.Errorf("deliveries by attempt %v (%d without), want 0: 1, 1: 1", got, res.Metrics.NoAttempt)
	}
}

// The first run committed its status, but only after the second run's
// check had found nothing: the explanation must not say it never did.
func TestNonAtomicWithALateCommit(t *testing.T) {
	in := `{"time":"2026-12-01T10:00:00.000Z","msg":"received message","order_id":"C-1","message_id":"m-1","worker":"w1"}
{"time":"2026-12-01T10:00:00.010Z","msg":"idempotency check: not processed","order_id":"C-1","worker":"w1"}
{"time":"2026-12-01T10:00:00.100Z","msg":"charged card","order_id":"C-1","worker":"w1"}
{"time":"2026-12-01T10:00:00.200Z","msg":"received message","order_id":"C-1","message_id":"m-2","worker":"w2"}
{"time":"2026-12-01T10:00:00.210Z","msg":"idempotency check: not processed","order_id":"C-1","worker":"w2"}
{"time":"2026-12-01T10:00:00.300Z","msg":"charged card","order_id":"C-1","worker":"w2"}
{"time":"2026-12-01T10:00:00.900Z","msg":"stored status SUCCEEDED","order_id":"C-1","worker":"w1"}
`
	path := filepath.Join(t.TempDir(), "late.jsonl")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	d := duplicateOf(t, auditFile(t, path), "C-1")
	if d.Cause != RuleNonAtomic.Code || strings.Contains(d.Explanation, "ended before committing") ||
		!strings.Contains(d.Explanation, "committed its status only at 10:00:00.900") {
		t.Fatalf("%s: %s", d.Cause, d.Explanation)
	}
}
