package ttl

import (
	"math"
	"slices"
	"sort"
	"time"
)

// Bucket is one bar of a job type's duration histogram: runs in
// [From, To). BeyondTTL marks buckets that start at or past the TTL.
type Bucket struct {
	FromMS    float64 `json:"from_ms"`
	ToMS      float64 `json:"to_ms"`
	Runs      int64   `json:"runs"`
	BeyondTTL bool    `json:"beyond_ttl"`

	From, To time.Duration `json:"-"`
}

// grid is the log-scaled ladder of bucket edges people read at a glance
// (1-2-5 steps, then the clock's own: 10s, 30s, 1m, ...).
var grid = func() []time.Duration {
	var g []time.Duration
	for _, base := range []time.Duration{10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond,
		100 * time.Millisecond} {
		g = append(g, base, 2*base, 5*base)
	}
	return append(g, time.Second, 2*time.Second, 5*time.Second, 10*time.Second, 30*time.Second,
		time.Minute, 2*time.Minute, 5*time.Minute, 10*time.Minute, 30*time.Minute,
		time.Hour, 2*time.Hour, 6*time.Hour, 12*time.Hour, 24*time.Hour, 48*time.Hour, 7*24*time.Hour,
		30*24*time.Hour, maxDuration+time.Nanosecond)
}()

// minGridBuckets: a narrower spread of durations gets finer geometric
// buckets instead of the grid.
const (
	minGridBuckets = 6
	fineBuckets    = 12
)

// edges returns bucket edges covering [lo, hi], log-scaled.
func edges(lo, hi time.Duration) []time.Duration {
	first := sort.Search(len(grid), func(i int) bool { return grid[i] > lo }) - 1
	last := min(sort.Search(len(grid), func(i int) bool { return grid[i] > hi }), len(grid)-1)
	var e []time.Duration
	if first < 0 {
		e = append(e, 0)
		first = 0
	}
	e = append(e, grid[first:last+1]...)
	if len(e)-1 >= minGridBuckets || lo <= 0 || hi <= lo {
		return e
	}
	// Geometric steps between lo and hi, rounded to two significant
	// digits so labels stay readable.
	r := math.Pow(float64(hi)/float64(lo), 1.0/fineBuckets)
	fine := []time.Duration{nice(float64(lo), math.Floor)}
	for i := 1; i < fineBuckets; i++ {
		v := nice(float64(lo)*math.Pow(r, float64(i)), math.Round)
		if v > fine[len(fine)-1] {
			fine = append(fine, v)
		}
	}
	top := nice(float64(hi), math.Ceil)
	if top <= hi {
		top = hi + 1
	}
	if top > fine[len(fine)-1] {
		fine = append(fine, top)
	}
	return fine
}

// nice rounds v (nanoseconds) to two significant digits with f.
func nice(v float64, f func(float64) float64) time.Duration {
	if v < 1 {
		return 0
	}
	step := math.Pow(10, math.Floor(math.Log10(v))-1)
	return time.Duration(f(v/step) * step)
}

// histogram counts a series into log-scaled buckets, split at the TTL so
// the runs beyond it are a bar of their own.
func histogram(s *series, ttl time.Duration) []Bucket {
	if s.n == 0 {
		return []Bucket{}
	}
	e := edges(s.min, s.max)
	if ttl > e[0] && ttl < e[len(e)-1] {
		if i, found := slices.BinarySearch(e, ttl); !found {
			e = slices.Insert(e, i, ttl)
		}
	}
	counts := make([]float64, len(e)-1)
	bucketOf := func(d time.Duration) int {
		i := sort.Search(len(e), func(i int) bool { return e[i] > d }) - 1
		return min(max(i, 0), len(counts)-1)
	}
	if s.sketch != nil {
		s.sketch.ForEach(func(v, n float64) bool {
			counts[bucketOf(min(max(fromMS(v), s.min), s.max))] += n
			return false
		})
	} else {
		for _, d := range s.exact {
			counts[bucketOf(d)]++
		}
	}
	out := make([]Bucket, len(counts))
	for i := range counts {
		out[i] = Bucket{From: e[i], To: e[i+1], FromMS: msRound(e[i]), ToMS: msRound(e[i+1]),
			Runs: int64(math.Round(counts[i])), BeyondTTL: ttl > 0 && e[i] >= ttl}
	}
	return out
}
