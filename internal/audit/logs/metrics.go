package logs

import (
	"math"
	"math/bits"
	"slices"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// Metrics are what a duplicate-safe worker fleet is watched by (duplicate
// effects, redeliveries, lock expiries, ...), computed in the same pass.
type Metrics struct {
	JobTypes []JobTypeMetrics `json:"job_types"`
	// DuplicatesCaught counts checks that found the operation done and
	// skipped it: the idempotency layer at work.
	DuplicatesCaught int64 `json:"duplicates_caught"`
	Retries          int64 `json:"retries"`
	DeadLettered     int64 `json:"dead_lettered"`
	Crashes          int64 `json:"crashes"`
	// DeliveriesByAttempt counts deliveries per attempt number as logged
	// (libraries count from 0 or from 1); NoAttempt those without one.
	DeliveriesByAttempt []AttemptCount `json:"deliveries_by_attempt"`
	NoAttempt           int64          `json:"deliveries_without_attempt"`
	Errors              []ErrorMetric  `json:"errors"`
	Duration            *Percentiles   `json:"duration,omitempty"`
}

// AttemptCount is how many deliveries carried one attempt number.
type AttemptCount struct {
	Attempt    int   `json:"attempt"`
	Deliveries int64 `json:"deliveries"`
}

// JobTypeMetrics are one job type's counters.
type JobTypeMetrics struct {
	JobType      string       `json:"job_type"`
	Messages     int64        `json:"messages"`
	LockAcquired int64        `json:"lock_acquired"`
	LockFailed   int64        `json:"lock_failed"`
	SideEffects  int64        `json:"side_effects"`
	Caught       int64        `json:"duplicates_caught"`
	Retries      int64        `json:"retries"`
	DeadLettered int64        `json:"dead_lettered"`
	Failures     int64        `json:"failures"`
	Duration     *Percentiles `json:"duration,omitempty"`
}

// ErrorMetric is the rate of one error type among deliveries.
type ErrorMetric struct {
	Type  string  `json:"type"`
	Count int64   `json:"count"`
	Rate  float64 `json:"rate"` // per delivery
}

// Percentiles of job durations (from a duration field), within 3%.
type Percentiles struct {
	Count int64         `json:"count"`
	P50   time.Duration `json:"p50_ns"`
	P95   time.Duration `json:"p95_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// hist is a log-linear histogram of durations: 32 sub-buckets per power
// of two, so any quantile is within 1/32 of the truth, in fixed memory.
type hist struct {
	n   int64
	max time.Duration
	b   [64 * 32]int64
}

func (h *hist) add(d time.Duration) {
	if d < 0 {
		return
	}
	h.n++
	h.max = max(h.max, d)
	h.b[bucket(uint64(d))]++
}

func bucket(v uint64) int {
	if v < 32 {
		return int(v)
	}
	e := bits.Len64(v) - 1 // >= 5
	sub := (v >> (e - 5)) & 31
	return (e-4)*32 + int(sub)
}

// lower bound of a bucket.
func bucketValue(i int) uint64 {
	if i < 32 {
		return uint64(i)
	}
	e := i/32 + 4
	sub := uint64(i % 32)
	return (1 << e) | sub<<(e-5)
}

func (h *hist) quantile(q float64) time.Duration {
	want := max(int64(math.Ceil(q*float64(h.n))), 1) // nearest rank
	var seen int64
	for i, c := range h.b {
		seen += c
		if seen >= want {
			return min(time.Duration(bucketValue(i)), h.max)
		}
	}
	return h.max
}

func (h *hist) percentiles() *Percentiles {
	if h == nil || h.n == 0 {
		return nil
	}
	return &Percentiles{Count: h.n, P50: h.quantile(0.50), P95: h.quantile(0.95), P99: h.quantile(0.99), Max: h.max}
}

type typeAcc struct {
	JobTypeMetrics
	dur *hist
}

// metricsAcc accumulates Metrics event by event.
type metricsAcc struct {
	types      map[string]*typeAcc
	recent     [4]*typeAcc
	next       int
	byAttempt  map[int]int64
	noAttempt  int64
	errors     map[string]int64
	deliveries int64
	caught     int64
	retries    int64
	dlq        int64
	crashes    int64
	dur        hist
}

func newMetricsAcc() *metricsAcc {
	return &metricsAcc{types: map[string]*typeAcc{}, errors: map[string]int64{}, byAttempt: map[int]int64{}}
}

func (m *metricsAcc) typ(e *logread.Event) *typeAcc {
	name := e.JobType()
	if name == "" {
		name = e.Get(logread.Destination)
	}
	for _, t := range m.recent { // a log has few job types: skip the map
		if t != nil && t.JobType == name {
			return t
		}
	}
	t, ok := m.types[name]
	if ok {
		m.recent[m.next%len(m.recent)] = t
		m.next++
	}
	if !ok {
		if len(m.types) >= 1000 { // a job type per job would be no type
			name = "(other)"
			if t, ok = m.types[name]; ok {
				return t
			}
		}
		t = &typeAcc{JobTypeMetrics: JobTypeMetrics{JobType: string([]byte(name))}}
		m.types[t.JobType] = t
	}
	return t
}

func (m *metricsAcc) add(e *logread.Event) {
	switch e.Kind {
	case logread.KindOther:
		if e.Duration > 0 {
			m.duration(e)
		}
		return
	case logread.KindReceived:
		m.deliveries++
		m.typ(e).Messages++
		switch {
		case !e.HasAttempt:
			m.noAttempt++
		case e.Attempt <= 100:
			m.byAttempt[e.Attempt]++
		default:
			m.byAttempt[101]++ // "more than 100", a bounded map
		}
	case logread.KindLockAcquired:
		m.typ(e).LockAcquired++
	case logread.KindLockFailed:
		m.typ(e).LockFailed++
	case logread.KindSideEffect:
		m.typ(e).SideEffects++
	case logread.KindDuplicate:
		m.caught++
		m.typ(e).Caught++
	case logread.KindCheck:
		if e.Hit == logread.True {
			m.caught++
			m.typ(e).Caught++
		}
	case logread.KindRetry:
		m.retries++
		m.typ(e).Retries++
	case logread.KindDeadLettered:
		m.dlq++
		m.typ(e).DeadLettered++
	case logread.KindFailed, logread.KindCrash:
		if e.Kind == logread.KindCrash {
			m.crashes++
		}
		m.typ(e).Failures++
		et := e.Get(logread.ErrorType)
		if et == "" {
			et = e.Kind.String()
		}
		if _, ok := m.errors[et]; !ok && len(m.errors) >= 1000 {
			et = "(other)"
		}
		m.errors[string([]byte(et))]++
	}
	if e.Duration > 0 {
		m.duration(e)
	}
}

// duration counts a job's duration: only from a line of a job (one that
// carries a job, message, business or idempotency key), never from an
// access log's or a health check's latency mixed into the same file.
func (m *metricsAcc) duration(e *logread.Event) {
	if kind, _ := groupKey(e); kind == 0 {
		return
	}
	m.dur.add(e.Duration)
	t := m.typ(e)
	if t.dur == nil {
		t.dur = &hist{}
	}
	t.dur.add(e.Duration)
}

func (m *metricsAcc) result() Metrics {
	out := Metrics{DuplicatesCaught: m.caught, Retries: m.retries, DeadLettered: m.dlq, Crashes: m.crashes,
		DeliveriesByAttempt: []AttemptCount{}, NoAttempt: m.noAttempt, Errors: []ErrorMetric{}, JobTypes: []JobTypeMetrics{},
		Duration: m.dur.percentiles()}
	for a, n := range m.byAttempt {
		out.DeliveriesByAttempt = append(out.DeliveriesByAttempt, AttemptCount{Attempt: a, Deliveries: n})
	}
	slices.SortFunc(out.DeliveriesByAttempt, func(a, b AttemptCount) int { return a.Attempt - b.Attempt })
	for _, t := range m.types {
		jt := t.JobTypeMetrics
		jt.Duration = t.dur.percentiles()
		if jt.JobType == "" {
			jt.JobType = "(none)"
		}
		out.JobTypes = append(out.JobTypes, jt)
	}
	slices.SortFunc(out.JobTypes, func(a, b JobTypeMetrics) int { return compareStrings(a.JobType, b.JobType) })
	for t, n := range m.errors {
		r := 0.0
		if m.deliveries > 0 {
			r = float64(n) / float64(m.deliveries)
		}
		out.Errors = append(out.Errors, ErrorMetric{Type: t, Count: n, Rate: r})
	}
	slices.SortFunc(out.Errors, func(a, b ErrorMetric) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return compareStrings(a.Type, b.Type)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
