package watch

import (
	"regexp"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Other is the label value every value past a label's bound is counted
// under: a label's values stay bounded whatever the watched systems hold.
const Other = "other"

// DefaultMaxLabelValues bounds the distinct values of one label (family
// templates, queues, job types) per metric.
const DefaultMaxLabelValues = 50

// metrics are dupctl watch's metrics, on a registry of their own (not the
// global one), so what /metrics serves is exactly what is registered here.
type metrics struct {
	reg *prometheus.Registry

	runs        *prometheus.CounterVec   // check, result
	duration    *prometheus.HistogramVec // check
	lastSuccess *prometheus.GaugeVec     // check
	up          *prometheus.GaugeVec     // check
	findings    *prometheus.GaugeVec     // check, code, severity

	lockFamilies    prometheus.Gauge
	lockKeys        *prometheus.GaugeVec // family, certainty
	lockNoTTL       *prometheus.GaugeVec // family, certainty
	lockOutliers    *prometheus.GaugeVec // family, certainty, direction
	dlqMessages     *prometheus.GaugeVec // dlq, queue, reason
	storeStuck      *prometheus.GaugeVec // table
	storeDuplicates *prometheus.GaugeVec // table
	cacheStale      *prometheus.GaugeVec // table, code

	logEvents    *prometheus.CounterVec   // kind
	logReceived  *prometheus.CounterVec   // job_type
	logLocks     *prometheus.CounterVec   // outcome
	logEffects   *prometheus.CounterVec   // job_type
	logRetries   *prometheus.CounterVec   // job_type
	logCrashes   prometheus.Counter       //
	duplicates   *prometheus.CounterVec   // cause
	jobDuration  *prometheus.HistogramVec // job_type
	followErrors prometheus.Counter

	bounds     *bounds
	collectors []prometheus.Collector
}

// register registers cs and keeps them, so their names can be listed
// before they hold a series (MetricNames).
func (m *metrics) register(cs ...prometheus.Collector) {
	m.reg.MustRegister(cs...)
	m.collectors = append(m.collectors, cs...)
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// MetricNames are the names of every metric a watch serves (histograms by
// their base name), read from the collectors themselves: the dashboard's
// test checks each panel against them.
func MetricNames() []string {
	var names []string
	for _, c := range newMetrics(0).collectors {
		ch := make(chan *prometheus.Desc)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fqName.FindStringSubmatch(d.String()); m != nil && !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
	}
	slices.Sort(names)
	return names
}

func newMetrics(maxValues int) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), bounds: newBounds(maxValues)}
	m.checkMetrics()
	m.resultMetrics()
	m.logMetrics()
	m.register(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	m.register(g)
	return g
}

func (m *metrics) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	m.register(c)
	return c
}

func (m *metrics) checkMetrics() {
	m.runs = m.counter("dupctl_check_runs_total", "Runs of each check, by result (ok, error, timeout).", "check", "result")
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dupctl_check_duration_seconds", Help: "How long each run of a check took.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}, []string{"check"})
	m.register(m.duration)
	m.lastSuccess = m.gauge("dupctl_check_last_success_timestamp_seconds", "Unix time of each check's last successful run.", "check")
	m.up = m.gauge("dupctl_check_up", "1 when a check's last run succeeded, 0 when it failed or timed out.", "check")
	m.findings = m.gauge("dupctl_findings", "Findings of each check's last successful run, by finding code and severity.",
		"check", "code", "severity")
}

func (m *metrics) resultMetrics() {
	m.lockFamilies = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dupctl_lock_families",
		Help: "Lock families (keys sharing a template) found by the last lock scan, possible ones included."})
	m.register(m.lockFamilies)
	m.lockKeys = m.gauge("dupctl_lock_keys", "Lock keys per family template and certainty at the last lock scan.", "family", "certainty")
	m.lockNoTTL = m.gauge("dupctl_lock_keys_without_ttl", "Lock keys with no TTL per family template and certainty at the last lock scan.",
		"family", "certainty")
	m.lockOutliers = m.gauge("dupctl_lock_ttl_outliers",
		"Lock keys whose remaining TTL is far above or below their family's, per family template.", "family", "certainty", "direction")
	m.dlqMessages = m.gauge("dupctl_dlq_messages",
		"Messages in a dead-letter queue by the queue they died in and their last death reason.", "dlq", "queue", "reason")
	m.storeStuck = m.gauge("dupctl_store_stuck_processing_rows",
		"Idempotency rows reserved (PROCESSING) for longer than the stuck threshold, per table.", "table")
	m.storeDuplicates = m.gauge("dupctl_store_duplicate_keys",
		"Idempotency keys with more than one row, per table.", "table")
	m.cacheStale = m.gauge("dupctl_cache_disagreements",
		"Cache entries that disagree with the database at the last audit cache, per table and finding code.", "table", "code")
}

func (m *metrics) logMetrics() {
	m.logEvents = m.counter("dupctl_log_events_total", "Log lines followed, by the step of the worker flow they record.", "kind")
	m.logReceived = m.counter("dupctl_log_jobs_received_total", "Jobs received, as the followed logs show them, per job type.", "job_type")
	m.logLocks = m.counter("dupctl_log_locks_total", "Lock steps in the followed logs: acquired, busy (not acquired), lost, released.",
		"outcome")
	m.logEffects = m.counter("dupctl_log_side_effects_total", "Side effects run, as the followed logs show them, per job type.", "job_type")
	m.logRetries = m.counter("dupctl_log_retries_total", "Retries (nack, requeue, retry scheduled) in the followed logs, per job type.",
		"job_type")
	m.logCrashes = prometheus.NewCounter(prometheus.CounterOpts{Name: "dupctl_log_crashes_total",
		Help: "Worker crashes or kills in the followed logs."})
	m.followErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "dupctl_follow_errors_total",
		Help: "Times following the logs stopped on an error and was started again."})
	m.register(m.logCrashes, m.followErrors)
	m.duplicates = m.counter("dupctl_duplicates_total",
		"Side effects run again for a business key already done, found in the followed logs, by cause (DUP_EFFECT_*).", "cause")
	m.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dupctl_job_duration_seconds", Help: "Job durations the followed logs report, per job type.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
	}, []string{"job_type"})
	m.register(m.jobDuration)
}

// bounds caps the distinct values of each (metric, label): past the cap,
// a new value is counted as Other. Values seen once keep their slot, so a
// series never moves between its own value and Other.
type bounds struct {
	mu   sync.Mutex
	max  int
	seen map[string]map[string]bool
}

func newBounds(max int) *bounds {
	if max <= 0 {
		max = DefaultMaxLabelValues
	}
	return &bounds{max: max, seen: map[string]map[string]bool{}}
}

// value is v, or Other once the label of metric has max other values.
func (b *bounds) value(metric, v string) string {
	if v == "" {
		return "unknown"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.seen[metric]
	if s == nil {
		s = map[string]bool{}
		b.seen[metric] = s
	}
	if s[v] {
		return v
	}
	if len(s) >= b.max {
		return Other
	}
	s[v] = true
	return v
}

// forget drops a gauge's values so a snapshot can take new ones: a
// gauge's labels are those of the last run, not every run since start.
func (b *bounds) forget(metric string) {
	b.mu.Lock()
	delete(b.seen, metric)
	b.mu.Unlock()
}
