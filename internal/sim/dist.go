package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dist is a job-duration distribution in virtual milliseconds.
type Dist struct {
	kind    distKind
	fixed   int64
	mu, sig float64 // lognormal in ln(ms)
	samples []int64 // empirical, sorted
	text    string
}

type distKind uint8

const (
	distFixed distKind = iota
	distLogNormal
	distEmpirical
)

// Fixed is a constant duration.
func Fixed(d time.Duration) Dist {
	return Dist{kind: distFixed, fixed: d.Milliseconds(), text: fmtDur(d.Milliseconds())}
}

// LogNormal fits a lognormal distribution through a median and a p99, the
// usual shape of job durations (a body and a long tail).
func LogNormal(p50, p99 time.Duration) (Dist, error) {
	if p50 <= 0 || p99 < p50 {
		return Dist{}, fmt.Errorf("need 0 < p50 <= p99, got p50=%s p99=%s", p50, p99)
	}
	mu := math.Log(float64(p50.Milliseconds()))
	sig := 0.0
	if p99 > p50 {
		sig = (math.Log(float64(p99.Milliseconds())) - mu) / normalQuantile(0.99)
	}
	return Dist{kind: distLogNormal, mu: mu, sig: sig, text: fmt.Sprintf("p50=%s,p99=%s", fmtDur(p50.Milliseconds()),
		fmtDur(p99.Milliseconds()))}, nil
}

// Empirical draws from measured durations (what `inspect ttl` feeds in).
func Empirical(samples []time.Duration) (Dist, error) {
	if len(samples) == 0 {
		return Dist{}, fmt.Errorf("no durations")
	}
	ms := make([]int64, len(samples))
	for i, s := range samples {
		ms[i] = max(s.Milliseconds(), 0)
	}
	slices.Sort(ms)
	return Dist{kind: distEmpirical, samples: ms, text: fmt.Sprintf("empirical(%d runs)", len(ms))}, nil
}

// ParseDist reads "45s" (fixed) or "p50=30s,p99=4m" (lognormal).
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "=") {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return Dist{}, fmt.Errorf("job duration %q: want a duration such as 45s or a distribution such as p50=30s,p99=4m", s)
		}
		return Fixed(d), nil
	}
	var p50, p99 time.Duration
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if !ok || err != nil {
			return Dist{}, fmt.Errorf("job duration %q: %q is not name=duration", s, part)
		}
		switch strings.TrimSpace(k) {
		case "p50", "median":
			p50 = d
		case "p99":
			p99 = d
		default:
			return Dist{}, fmt.Errorf("job duration %q: unknown quantile %q (want p50 and p99)", s, k)
		}
	}
	if p50 == 0 || p99 == 0 {
		return Dist{}, fmt.Errorf("job duration %q: give both p50 and p99", s)
	}
	return LogNormal(p50, p99)
}

// Sample returns the duration at quantile u in [0, 1).
func (d Dist) Sample(u float64) int64 {
	switch d.kind {
	case distLogNormal:
		return int64(math.Exp(d.mu + d.sig*normalQuantile(u)))
	case distEmpirical:
		i := int(u * float64(len(d.samples)))
		return d.samples[min(i, len(d.samples)-1)]
	}
	return d.fixed
}

// draw is the duration of draw i of the stream seed, from a hash of the
// two. Every worker step of a simulation asks, so a fixed duration skips
// the hash and the call (draw inlines).
func (d *Dist) draw(seed, i uint64) int64 {
	if d.kind == distFixed {
		return d.fixed
	}
	return d.hashed(seed, i)
}

func (d *Dist) hashed(seed, i uint64) int64 { return d.Sample(uniform(mix(seed, i))) }

// Quantile returns the duration at q (exact for fixed and lognormal).
func (d Dist) Quantile(q float64) int64 { return d.Sample(q) }

// IsFixed reports whether every draw is the same.
func (d Dist) IsFixed() bool { return d.kind == distFixed }

func (d Dist) String() string { return d.text }

// fmtDur prints virtual milliseconds compactly: 250ms, 30s, 1m30s, 2h.
func fmtDur(ms int64) string {
	if ms < 1000 {
		return strconv.FormatInt(ms, 10) + "ms"
	}
	d := time.Duration(ms) * time.Millisecond
	s := d.String()
	s = strings.Replace(s, "m0s", "m", 1)
	s = strings.Replace(s, "h0m", "h", 1)
	return s
}

// FormatMillis prints virtual milliseconds as people read durations.
func FormatMillis(ms int64) string { return fmtDur(ms) }

// Millis converts a real duration to the simulator's virtual
// milliseconds: whole milliseconds, and never 0 for a positive duration
// (a 500µs TTL is a TTL, not none). Every caller converts through it.
func Millis(d time.Duration) int64 {
	if d > 0 && d < time.Millisecond {
		return 1
	}
	return d.Milliseconds()
}
