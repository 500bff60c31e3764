package ttl

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "regenerate testdata/dist/*.csv")

// dists are distributions with known quantiles (the inverse CDF, in
// milliseconds). Their testdata files hold n stratified draws, Q((i+0.5)/n),
// shuffled: the k-th smallest draw is exactly Q((k+0.5)/n).
var dists = []struct {
	name string
	q    func(u float64) float64
}{
	{"uniform", func(u float64) float64 { return 1000 + 59000*u }},
	{"lognormal", func(u float64) float64 { return math.Exp(math.Log(30000) + 0.5*normQ(u)) }},
	{"bimodal", func(u float64) float64 {
		// 70% fast (median 2s), 30% slow (median 90s): the modes do not
		// overlap, so the mixture's quantile is the component's.
		if u < 0.7 {
			return math.Exp(math.Log(2000) + 0.3*normQ(u/0.7))
		}
		return math.Exp(math.Log(90000) + 0.2*normQ((u-0.7)/0.3))
	}},
	{"heavytail", func(u float64) float64 { return 10000 * math.Pow(1-u, -1/1.5) }}, // Pareto, x_m 10s, alpha 1.5
}

const distN = 10_000

// normQ is the standard normal quantile.
func normQ(u float64) float64 { return math.Sqrt2 * math.Erfinv(2*u-1) }

func distPath(name string) string { return filepath.Join("testdata", "dist", name+".csv") }

// draw is the k-th smallest value of a generated file, rounded as written.
func draw(q func(float64) float64, k int) time.Duration {
	return time.Duration(math.Round(q((float64(k)+0.5)/distN))) * time.Millisecond
}

// distFile is the content of a distribution's testdata file: the n
// stratified draws, shuffled with a fixed seed.
func distFile(name string, q func(float64) float64) []byte {
	vals := make([]int64, distN)
	for k := range vals {
		vals[k] = int64(draw(q, k) / time.Millisecond)
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	var b bytes.Buffer
	b.WriteString("job_type,duration_ms\n")
	for _, v := range vals {
		fmt.Fprintf(&b, "%s,%d\n", name, v)
	}
	return b.Bytes()
}

// TestDistributionFiles checks that testdata/dist holds exactly what the
// quantile functions above generate, so the tests below compare against
// the distributions they name; -update writes the files.
func TestDistributionFiles(t *testing.T) {
	for _, d := range dists {
		want := distFile(d.name, d.q)
		if *update {
			if err := os.MkdirAll(filepath.Dir(distPath(d.name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(distPath(d.name), want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(distPath(d.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what its quantile function generates: run go test ./internal/inspect/ttl -run TestDistributionFiles -update",
				distPath(d.name))
		}
	}
}

// loadDist reads a generated distribution into a collector.
func loadDist(t *testing.T, name string, o CollectOptions) *Collector {
	t.Helper()
	f, err := os.Open(distPath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := NewCollector(o)
	if err := ReadCSV(context.Background(), f, name, TableOptions{}, c, nil); err != nil {
		t.Fatal(err)
	}
	if c.Runs() != distN || c.skipped.Rows != 0 {
		t.Fatalf("%s: %d runs, %d skipped; want %d, 0", name, c.Runs(), c.skipped.Rows, distN)
	}
	return c
}

var testQuantiles = []float64{0.5, 0.9, 0.95, 0.99, 0.999}

// Exact quantiles are the draw at rank q*(n-1), and so within a rank of
// the distribution's own quantile.
func TestExactQuantilesOfKnownDistributions(t *testing.T) {
	for _, d := range dists {
		s := loadDist(t, d.name, CollectOptions{}).types[d.name]
		s.sortExact()
		if s.sketch != nil {
			t.Fatalf("%s: %d runs went to the sketch, want exact", d.name, s.n)
		}
		for _, q := range testQuantiles {
			k := int(q * (distN - 1))
			if got, want := s.quantile(q), draw(d.q, k); got != want {
				t.Errorf("%s p%s = %s, want %s", d.name, quantileName(q), got, want)
			}
			// And the theory: within the spread of one rank either side.
			theory := d.q(q)
			lo, hi := ms(draw(d.q, k-1)), ms(draw(d.q, k+1))
			if theory < lo-1 || theory > hi+1 {
				t.Errorf("%s p%s: theoretical %.0fms outside [%.0f, %.0f]", d.name, quantileName(q), theory, lo, hi)
			}
		}
		if got, want := s.max, draw(d.q, distN-1); got != want {
			t.Errorf("%s max = %s, want %s", d.name, got, want)
		}
	}
}

// The sketch answers within 1% (its guarantee is 0.5%) of the exact
// quantile of the same rank, on every distribution.
func TestSketchWithinOnePercentOfExact(t *testing.T) {
	for _, d := range dists {
		exact := loadDist(t, d.name, CollectOptions{}).types[d.name]
		exact.sortExact()
		sk := loadDist(t, d.name, CollectOptions{ExactMax: -1}).types[d.name]
		if sk.sketch == nil {
			t.Fatalf("%s: ExactMax -1 kept exact samples", d.name)
		}
		for _, q := range append(testQuantiles, 0.01, 0.25, 0.75) {
			e, s := float64(exact.quantile(q)), float64(sk.quantile(q))
			if rel := math.Abs(s-e) / e; rel > 0.01 {
				t.Errorf("%s p%s: sketch %s vs exact %s: %.3f%% off", d.name, quantileName(q), time.Duration(s), time.Duration(e), 100*rel)
			} else if rel > RelativeAccuracy+1e-9 {
				t.Errorf("%s p%s: %.3f%% off, beyond the sketch's stated %.1f%%", d.name, quantileName(q), 100*rel, 100*RelativeAccuracy)
			}
		}
		// Counts, extremes and outlived runs stay exact in sketch mode.
		if sk.n != exact.n || sk.min != exact.min || sk.max != exact.max {
			t.Errorf("%s: sketch n/min/max %d/%s/%s, exact %d/%s/%s", d.name, sk.n, sk.min, sk.max, exact.n, exact.min, exact.max)
		}
	}
}

// Spilling into the sketch half way keeps every run.
func TestSpillToSketch(t *testing.T) {
	c := loadDist(t, "lognormal", CollectOptions{ExactMax: 1000})
	s := c.types["lognormal"]
	if s.sketch == nil || s.exact != nil || int64(s.sketch.GetCount()) != distN {
		t.Fatalf("after spill: sketch %v, %d exact left, sketch count %v", s.sketch != nil, len(s.exact), s.sketch.GetCount())
	}
}

func TestVerdictsOnKnownDistributions(t *testing.T) {
	cases := []struct {
		dist, ttl string
		verdict   string
		codes     []string
		renew     bool
	}{
		// uniform 1s-60s: p99 59.4s; 55s is below it.
		{"uniform", "55s", VerdictUnsafe, []string{"TTL_BELOW_P99"}, false},
		// p99 59.4s x 1.5 = 89.1s: 70s covers p99 and every run, but not the buffer.
		{"uniform", "70s", VerdictAtRisk, []string{"TTL_LOW_MARGIN"}, false},
		{"uniform", "90s", VerdictSafe, nil, false},
		// lognormal median 30s sigma 0.5: p99 ~1m36s, max ~3m30s.
		{"lognormal", "10m", VerdictSafe, nil, false},
		{"lognormal", "40m", VerdictSafe, []string{"TTL_FAR_ABOVE_P99"}, false},
		// the slow mode decides: p99 ~2m26s.
		{"bimodal", "2m", VerdictUnsafe, []string{"TTL_BELOW_P99"}, false},
		// Pareto: p99 3m35s, max over an hour: renew.
		{"heavytail", "10m", VerdictAtRisk, []string{"TTL_HEAVY_TAIL", "TTL_RUNS_OUTLIVED"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.dist+"/"+tc.ttl, func(t *testing.T) {
			ttls, err := ParseTTLSpec(tc.ttl)
			if err != nil {
				t.Fatal(err)
			}
			c := loadDist(t, tc.dist, CollectOptions{TTLs: ttls})
			res := c.Analyze(AnalyzeOptions{})
			rep := res.Report()
			js := res.JobTypes[0]
			if js.Verdict != tc.verdict || js.RenewalAdvised != tc.renew {
				t.Errorf("verdict %s renew %v, want %s %v", js.Verdict, js.RenewalAdvised, tc.verdict, tc.renew)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Code)
			}
			slices.Sort(got)
			if strings.Join(got, ",") != strings.Join(tc.codes, ",") {
				t.Errorf("findings %v, want %v", got, tc.codes)
			}
			// Outlived runs are counted exactly: the draws above the TTL.
			d, _ := ParseTTLSpec(tc.ttl)
			want := int64(0)
			q := distQ(tc.dist)
			for k := 0; k < distN; k++ {
				if draw(q, k) > d.Default {
					want++
				}
			}
			if js.Outlived != want || js.Judged != distN {
				t.Errorf("outlived %d of %d, want %d of %d", js.Outlived, js.Judged, want, distN)
			}
			var inHist int64
			for _, b := range js.Histogram {
				inHist += b.Runs
				if b.BeyondTTL != (b.From >= d.Default) {
					t.Errorf("bucket %s-%s beyond TTL %v", b.From, b.To, b.BeyondTTL)
				}
			}
			if inHist != distN {
				t.Errorf("histogram holds %d runs, want %d", inHist, distN)
			}
		})
	}
}

func distQ(name string) func(float64) float64 {
	for _, d := range dists {
		if d.name == name {
			return d.q
		}
	}
	panic(name)
}

// Sketches merge: two halves folded together answer like one sketch of
// the whole, and like the exact runs within the stated accuracy.
func TestMergeSketches(t *testing.T) {
	whole := loadDist(t, "heavytail", CollectOptions{ExactMax: -1}).types["heavytail"]
	exact := loadDist(t, "heavytail", CollectOptions{}).types["heavytail"]
	exact.sortExact()
	a, b := &series{min: math.MaxInt64}, &series{min: math.MaxInt64}
	for i, d := range exact.exact {
		if i%2 == 0 {
			a.add(d, 0, 0, 0)
		} else {
			b.add(d, 0, 0, 1_000_000)
		}
	}
	a.merge(b, 0)
	if a.n != distN || a.min != exact.min || a.max != exact.max {
		t.Fatalf("merged n/min/max %d/%s/%s", a.n, a.min, a.max)
	}
	for _, q := range testQuantiles {
		if got, want := a.quantile(q), whole.quantile(q); got != want {
			t.Errorf("p%s merged %s, one sketch %s", quantileName(q), got, want)
		}
		if rel := math.Abs(float64(a.quantile(q)-exact.quantile(q))) / float64(exact.quantile(q)); rel > RelativeAccuracy+1e-9 {
			t.Errorf("p%s merged %s vs exact %s", quantileName(q), a.quantile(q), exact.quantile(q))
		}
	}
}
