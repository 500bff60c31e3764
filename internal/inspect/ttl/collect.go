// Package ttl answers step 3 of the debugging steps for a job that ran
// twice: are lock TTLs longer than the jobs they protect? It collects job durations per job
// type from CSV, a SQL query or structured logs, summarises them (count,
// p50 to p99.9, max: exact for small inputs, a DDSketch with a stated
// relative error for large ones), counts the runs that outlived their lock
// TTL, and turns that into a verdict, a recommended TTL and findings.
//
// Memory is bounded per job type: up to ExactMax durations are kept for
// exact quantiles, then they are folded into a sketch of a few thousand
// bins whatever the input size.
package ttl

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
)

// RelativeAccuracy is the sketch's guarantee: a quantile it reports is
// within this relative error of the exact quantile of the same rank.
const RelativeAccuracy = 0.005

// DefaultExactMax is how many runs per job type are kept for exact
// quantiles before the sketch takes over.
const DefaultExactMax = 100_000

// JobRun is one measured job run.
type JobRun struct {
	// Duration is how long the job held its lock (acquired to released,
	// or the job's own duration).
	Duration time.Duration
	// Wait is the queue wait before the run started; HasWait says the
	// input carried it.
	Wait    time.Duration
	HasWait bool
	// TTL is the lock TTL this run was given, when the input says (0:
	// unknown).
	TTL time.Duration
}

// CollectOptions shape a Collector.
type CollectOptions struct {
	// TTLs configured by the user (--ttl, a config file); they take
	// precedence over TTLs the input carries.
	TTLs TTLs
	// IncludeWait adds the queue wait to each run: for locks taken at
	// enqueue, the TTL must cover the wait too.
	IncludeWait bool
	// ExactMax runs per job type are kept for exact quantiles (0: the
	// default; negative: always use the sketch).
	ExactMax int
}

// Collector accumulates runs per job type. It is not safe for concurrent
// use; feed it from one goroutine (sources parse in parallel and merge).
type Collector struct {
	opts    CollectOptions
	exact   int
	types   map[string]*series
	last    *series
	skipped Skipped
	sources []string
}

// Skipped counts input rows that could not be used, with a few examples.
type Skipped struct {
	Rows     int64    `json:"rows"`
	Examples []string `json:"examples"`
}

// maxSkipExamples is how many skipped rows are quoted in the evidence.
const maxSkipExamples = 5

// NewCollector returns an empty collector.
func NewCollector(o CollectOptions) *Collector {
	exact := o.ExactMax
	switch {
	case exact == 0:
		exact = DefaultExactMax
	case exact < 0:
		exact = 0
	}
	return &Collector{opts: o, exact: exact, types: map[string]*series{}}
}

// Skip counts a row that could not be used; where says which ("file:12:
// duration "x" is not a number").
func (c *Collector) Skip(why string) {
	c.skipped.Rows++
	if len(c.skipped.Examples) < maxSkipExamples {
		c.skipped.Examples = append(c.skipped.Examples, why)
	}
}

// Source records the name of an input, for the report.
func (c *Collector) Source(name string) { c.sources = append(c.sources, name) }

// Runs is how many runs were recorded.
func (c *Collector) Runs() int64 {
	var n int64
	for _, s := range c.types {
		n += s.n
	}
	return n
}

// add records r into s, or returns why it cannot.
func (c *Collector) add(s *series, r JobRun) string {
	d := r.Duration
	if c.opts.IncludeWait {
		if !r.HasWait {
			return "no queue wait (needed by {IncludeWait})"
		}
		if r.Wait < 0 {
			return "negative queue wait"
		}
		d += r.Wait
	}
	if d < 0 {
		return "negative duration"
	}
	s.add(d, c.effectiveTTL(s, r.TTL), r.TTL, c.exact)
	return ""
}

// effectiveTTL is the TTL a run is judged against: the configured one for
// its job type, else the one the input gave the run.
func (c *Collector) effectiveTTL(s *series, own time.Duration) time.Duration {
	if s.configured > 0 {
		return s.configured
	}
	return own
}

// seriesBytes returns the series of a job type named by b without
// allocating for a type already seen.
func (c *Collector) seriesBytes(b []byte) *series {
	if c.last != nil && string(b) == c.last.name {
		return c.last
	}
	if s, ok := c.types[string(b)]; ok {
		c.last = s
		return s
	}
	return c.series(string(b))
}

func (c *Collector) series(name string) *series {
	if c.last != nil && c.last.name == name {
		return c.last
	}
	s, ok := c.types[name]
	if !ok {
		s = &series{name: name, min: math.MaxInt64}
		s.configured, s.configSource = c.opts.TTLs.For(name)
		c.types[name] = s
	}
	c.last = s
	return s
}

// series is one job type's runs.
type series struct {
	name         string
	n            int64
	min, max     time.Duration
	sum          float64 // milliseconds
	exact        []time.Duration
	sketch       *ddsketch.DDSketch
	outlived     int64 // runs longer than their TTL
	judged       int64 // runs that had a TTL to be judged against
	configured   time.Duration
	configSource string
	// own counts the TTLs the input carried per run (logs' lockTtl, a
	// ttl column), capped: the most common one is the job type's TTL.
	own map[time.Duration]int64
	// takenOver counts runs whose lock another token acquired while they
	// held it; takeovers keeps the first few.
	takenOver int64
	takeovers []Takeover
}

// Takeover is a run whose lock key another token acquired while it held
// it: its lease had run out, and it kept working (until Until, Held after
// it began).
type Takeover struct {
	Run    string        `json:"run"`   // file:line of its acquisition
	Where  string        `json:"where"` // file:line of the other acquisition
	At     time.Time     `json:"at"`
	By     string        `json:"by_token"`
	Until  string        `json:"until"` // file:line of its last line, release or ack
	HeldMS float64       `json:"held_ms"`
	TTLMS  float64       `json:"ttl_ms"`
	Held   time.Duration `json:"-"`
	TTL    time.Duration `json:"-"`
}

// maxTakeovers is how many takeovers a job type keeps as evidence.
const maxTakeovers = 3

func (s *series) takeover(t Takeover) {
	t.HeldMS, t.TTLMS = msRound(t.Held), msRound(t.TTL)
	s.takenOver++
	if len(s.takeovers) < maxTakeovers {
		s.takeovers = append(s.takeovers, t)
	}
}

// maxDistinctTTLs caps how many distinct per-run TTLs are counted.
const maxDistinctTTLs = 64

func (s *series) add(d, ttl, own time.Duration, exactMax int) {
	s.n++
	s.min = min(s.min, d)
	s.max = max(s.max, d)
	s.sum += ms(d)
	if ttl > 0 {
		s.judged++
		if d > ttl {
			s.outlived++
		}
	}
	if own > 0 {
		if s.own == nil {
			s.own = map[time.Duration]int64{}
		}
		if _, ok := s.own[own]; ok || len(s.own) < maxDistinctTTLs {
			s.own[own]++
		}
	}
	if s.sketch == nil && len(s.exact) < exactMax {
		s.exact = append(s.exact, d)
		return
	}
	s.spill()
	s.sketch.Add(ms(d)) //nolint:errcheck
}

// merge folds o (the same job type read another way) into s: counts and
// extremes add up, exact runs stay exact while they fit, else both go
// into one sketch (DDSketches with the same mapping merge exactly).
func (s *series) merge(o *series, exactMax int) {
	s.n += o.n
	s.min = min(s.min, o.min)
	s.max = max(s.max, o.max)
	s.sum += o.sum
	s.outlived += o.outlived
	s.judged += o.judged
	s.takenOver += o.takenOver
	for _, t := range o.takeovers {
		if len(s.takeovers) < maxTakeovers {
			s.takeovers = append(s.takeovers, t)
		}
	}
	for t, k := range o.own {
		if s.own == nil {
			s.own = map[time.Duration]int64{}
		}
		if _, ok := s.own[t]; ok || len(s.own) < maxDistinctTTLs {
			s.own[t] += k
		}
	}
	if s.sketch == nil && o.sketch == nil && len(s.exact)+len(o.exact) <= exactMax {
		s.exact = append(s.exact, o.exact...)
		return
	}
	s.spill()
	if o.sketch != nil {
		s.sketch.MergeWith(o.sketch) //nolint:errcheck // same mapping by construction
	}
	for _, e := range o.exact {
		s.sketch.Add(ms(e)) //nolint:errcheck
	}
}

// spill moves the exact runs into a new sketch.
func (s *series) spill() {
	if s.sketch != nil {
		return
	}
	s.sketch = newSketch()
	for _, e := range s.exact {
		s.sketch.Add(ms(e)) //nolint:errcheck // durations are finite and non-negative
	}
	s.exact = nil
}

func newSketch() *ddsketch.DDSketch {
	sk, err := ddsketch.LogUnboundedDenseDDSketch(RelativeAccuracy)
	if err != nil {
		panic(fmt.Sprintf("ttl: sketch: %v", err)) // a constant accuracy in (0, 1) cannot fail
	}
	return sk
}

// TTLCount is a TTL the input gave runs, and how many.
type TTLCount struct {
	TTLMS float64       `json:"ttl_ms"`
	Runs  int64         `json:"runs"`
	TTL   time.Duration `json:"-"`
}

// ttl is the job type's TTL and where it came from: configured, else the
// TTL most runs carried. seen lists the TTLs runs carried, most common
// first.
func (s *series) ttl() (ttl time.Duration, source string, seen []TTLCount) {
	seen = []TTLCount{}
	for t, k := range s.own {
		seen = append(seen, TTLCount{TTLMS: msRound(t), Runs: k, TTL: t})
	}
	slices.SortFunc(seen, func(a, b TTLCount) int { return cmp.Or(cmp.Compare(b.Runs, a.Runs), cmp.Compare(a.TTL, b.TTL)) })
	switch {
	case s.configured > 0:
		return s.configured, s.configSource, seen
	case len(seen) > 0:
		return seen[0].TTL, SourceData, seen
	}
	return 0, "", seen
}

// quantile returns the duration at q, by the "lower" rank q*(n-1) the
// sketch also uses, so exact and sketch answers are comparable.
func (s *series) quantile(q float64) time.Duration {
	if s.sketch != nil {
		v, err := s.sketch.GetValueAtQuantile(q)
		if err != nil {
			return 0
		}
		// The sketch's bin value may stray past the exact extremes.
		return min(max(fromMS(v), s.min), s.max)
	}
	if len(s.exact) == 0 {
		return 0
	}
	return s.exact[int(q*float64(len(s.exact)-1))]
}

// sortExact sorts the exact samples once, before quantiles are read.
func (s *series) sortExact() { slices.Sort(s.exact) }

// ms is d in milliseconds, the unit of the JSON output, the sketch and the
// simulator: the one duration-to-milliseconds conversion of this package
// (int64(ms(d)) truncates as time.Duration.Milliseconds does).
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fromMS(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }
