package ttl

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// AnalyzeOptions are the thresholds of the verdicts.
type AnalyzeOptions struct {
	// Quantile and Buffer make the recommended TTL: quantile x buffer.
	Quantile float64
	Buffer   float64
	// MinSamples is the fewest runs a job type needs for a verdict.
	MinSamples int
	// TailRatio: max above TailRatio x p99 is a heavy tail (renew).
	TailRatio float64
	// SlackRatio: a TTL above SlackRatio x p99 recovers slowly from a crash.
	SlackRatio float64
}

// Defaults fills unset thresholds.
func (o AnalyzeOptions) withDefaults() AnalyzeOptions {
	if o.Quantile == 0 {
		o.Quantile = 0.99
	}
	if o.Buffer == 0 {
		o.Buffer = 1.5
	}
	if o.MinSamples == 0 {
		o.MinSamples = 100
	}
	if o.TailRatio == 0 {
		o.TailRatio = 3
	}
	if o.SlackRatio == 0 {
		o.SlackRatio = 10
	}
	return o
}

// Verdicts.
const (
	VerdictSafe    = "safe"
	VerdictAtRisk  = "at-risk"
	VerdictUnsafe  = "unsafe"
	VerdictFewRuns = "too-few-samples"
	VerdictNoTTL   = "no-ttl"
)

// Result is the JSON data of `inspect ttl`.
type Result struct {
	Sources     []string   `json:"sources"`
	Runs        int64      `json:"runs"`
	Skipped     Skipped    `json:"skipped"`
	IncludeWait bool       `json:"include_wait"`
	Quantile    float64    `json:"recommend_quantile"`
	Buffer      float64    `json:"recommend_buffer"`
	MinSamples  int        `json:"min_samples"`
	TailRatio   float64    `json:"heavy_tail_ratio"`
	SlackRatio  float64    `json:"slack_ratio"`
	Sketch      SketchInfo `json:"sketch"`
	JobTypes    []JobStats `json:"job_types"`

	// simulated: the simulation ran (riskRule, the simulator's rule for
	// duplicates, is evaluated even when no job type qualified).
	simulated bool
	riskRule  findings.Rule
}

// SketchInfo states how quantiles were computed.
type SketchInfo struct {
	Name             string  `json:"name"`
	RelativeAccuracy float64 `json:"relative_accuracy"`
	ExactMax         int     `json:"exact_max"`
}

// JobStats is one job type's durations against its TTL. Durations are in
// milliseconds.
type JobStats struct {
	JobType string `json:"job_type"`
	Runs    int64  `json:"runs"`
	// Exact is true when quantiles come from every run; false when from
	// the sketch, within QuantileError relative error.
	Exact         bool    `json:"exact"`
	QuantileError float64 `json:"quantile_relative_error"`
	MinMS         float64 `json:"min_ms"`
	MeanMS        float64 `json:"mean_ms"`
	P50MS         float64 `json:"p50_ms"`
	P90MS         float64 `json:"p90_ms"`
	P95MS         float64 `json:"p95_ms"`
	P99MS         float64 `json:"p99_ms"`
	P999MS        float64 `json:"p999_ms"`
	MaxMS         float64 `json:"max_ms"`
	// TTLMS is the lock TTL the job type is judged against (0: unknown),
	// from TTLSource: flag, config or data; TTLsSeen are the TTLs the
	// input gave its runs (logs' lockTtl, a ttl column), most common
	// first.
	TTLMS     float64    `json:"ttl_ms"`
	TTLSource string     `json:"ttl_source"`
	TTLsSeen  []TTLCount `json:"ttls_seen"`
	// Outlived runs lasted longer than their TTL, of Judged runs that had
	// one.
	Outlived      int64   `json:"outlived"`
	Judged        int64   `json:"judged"`
	OutlivedShare float64 `json:"outlived_share"`
	// TakenOver counts runs whose lock another token acquired while they
	// still worked (logs only); Takeovers are the first few.
	TakenOver int64      `json:"taken_over"`
	Takeovers []Takeover `json:"takeovers"`
	// MarginMS is TTL - p99; TTLOverP99 is TTL / p99.
	MarginMS         float64  `json:"margin_over_p99_ms"`
	TTLOverP99       float64  `json:"ttl_over_p99"`
	MaxOverP99       float64  `json:"max_over_p99"`
	Verdict          string   `json:"verdict"`
	RecommendedTTLMS float64  `json:"recommended_ttl_ms"`
	RenewalAdvised   bool     `json:"renewal_advised"`
	Histogram        []Bucket `json:"histogram"`
	// Simulation is --simulate's estimate under the current TTL.
	Simulation *Simulation `json:"simulation,omitempty"`

	// The same figures as durations, for views (the *MS fields are their
	// JSON form).
	P50, P90, P95, P99, P999, Max, TTL, Recommended time.Duration `json:"-"`

	series *series
}

// Analyze summarises every job type and judges it; Report turns the
// result into findings.
func (c *Collector) Analyze(o AnalyzeOptions) *Result {
	o = o.withDefaults()
	res := &Result{
		Sources: c.sources, Runs: c.Runs(), Skipped: c.skipped, IncludeWait: c.opts.IncludeWait,
		Quantile: o.Quantile, Buffer: o.Buffer, MinSamples: o.MinSamples, TailRatio: o.TailRatio, SlackRatio: o.SlackRatio,
		Sketch:   SketchInfo{Name: "DDSketch (github.com/DataDog/sketches-go)", RelativeAccuracy: RelativeAccuracy, ExactMax: c.exact},
		JobTypes: []JobStats{},
	}
	if res.Sources == nil {
		res.Sources = []string{}
	}
	if res.Skipped.Examples == nil {
		res.Skipped.Examples = []string{}
	}
	names := make([]string, 0, len(c.types))
	for n, s := range c.types {
		if s.n > 0 { // a type whose every row was skipped
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		res.JobTypes = append(res.JobTypes, summarise(c.types[n], o))
	}
	return res
}

// analyzeOptions are the thresholds the result was judged with.
func (r *Result) analyzeOptions() AnalyzeOptions {
	return AnalyzeOptions{Quantile: r.Quantile, Buffer: r.Buffer, MinSamples: r.MinSamples, TailRatio: r.TailRatio, SlackRatio: r.SlackRatio}
}

// Report turns the result into findings: each job type's verdict, the
// skipped rows and --simulate's estimates.
func (r *Result) Report() *findings.Report {
	rep := &findings.Report{Command: "inspect ttl", Data: r}
	rep.Check(codes()...)
	o := r.analyzeOptions()
	for i := range r.JobTypes {
		rep.Add(judge(&r.JobTypes[i], o)...)
	}
	if r.Skipped.Rows > 0 {
		rep.Add(RuleInputSkipped.New("input", fmt.Sprintf("%s of %s rows skipped", count(r.Skipped.Rows), count(r.Skipped.Rows+r.Runs)),
			r.Skipped.Examples...))
	}
	if r.simulated {
		rep.Check(r.riskRule.Code)
		for i := range r.JobTypes {
			rep.Add(simFindings(r.riskRule, &r.JobTypes[i])...)
		}
	}
	return rep
}

func summarise(s *series, o AnalyzeOptions) JobStats {
	s.sortExact()
	js := JobStats{JobType: s.name, Runs: s.n, Exact: s.sketch == nil, Outlived: s.outlived, Judged: s.judged, series: s,
		TakenOver: s.takenOver, Takeovers: append([]Takeover{}, s.takeovers...)}
	if !js.Exact {
		js.QuantileError = RelativeAccuracy
	}
	js.P50, js.P90, js.P95 = s.quantile(0.5), s.quantile(0.9), s.quantile(0.95)
	js.P99, js.P999, js.Max = s.quantile(0.99), s.quantile(0.999), s.max
	js.MinMS, js.MeanMS, js.MaxMS = msRound(s.min), round3(s.sum/float64(s.n)), msRound(s.max)
	js.P50MS, js.P90MS, js.P95MS = msRound(js.P50), msRound(js.P90), msRound(js.P95)
	js.P99MS, js.P999MS = msRound(js.P99), msRound(js.P999)
	if s.judged > 0 {
		js.OutlivedShare = round6(float64(s.outlived) / float64(s.judged))
	}
	js.TTL, js.TTLSource, js.TTLsSeen = s.ttl()
	js.TTLMS = msRound(js.TTL)
	js.Recommended = Recommend(s.quantile(o.Quantile), o.Buffer)
	js.RecommendedTTLMS = msRound(js.Recommended)
	if js.P99 > 0 {
		js.MaxOverP99 = round3(float64(js.Max) / float64(js.P99))
		if js.TTL > 0 {
			js.TTLOverP99 = round3(float64(js.TTL) / float64(js.P99))
		}
	}
	if js.TTL > 0 {
		js.MarginMS = msRound(js.TTL - js.P99)
	}
	enough := s.n >= int64(o.MinSamples)
	js.RenewalAdvised = enough && float64(js.Max) > o.TailRatio*float64(js.P99)
	switch {
	case js.TTL == 0:
		js.Verdict = VerdictNoTTL
	case !enough:
		js.Verdict = VerdictFewRuns
	case js.TTL < js.P99:
		js.Verdict = VerdictUnsafe
	case s.outlived > 0 || float64(js.TTL) < o.Buffer*float64(s.quantile(o.Quantile)):
		js.Verdict = VerdictAtRisk
	default:
		js.Verdict = VerdictSafe
	}
	js.Histogram = histogram(s, js.TTL)
	return js
}

// judge turns one job type's numbers into findings.
func judge(js *JobStats, o AnalyzeOptions) []findings.Finding {
	var out []findings.Finding
	subject := js.JobType
	ev := []string{js.quantileLine()}
	if js.TTL > 0 {
		ev = append(ev, js.ttlLine())
	}
	ev = append(ev, js.recommendLine(o))
	for _, t := range js.Takeovers {
		ev = append(ev, fmt.Sprintf("%s: another token (%s) acquired the lock at %s while the run that acquired it at %s (TTL %s) "+
			"still worked: its line %s came %s after its acquisition",
			t.Where, orNone(t.By), t.At.UTC().Format("15:04:05.000"), t.Run, FormatDuration(t.TTL), t.Until, FormatDuration(t.Held)))
	}
	if n := js.TakenOver - int64(len(js.Takeovers)); n > 0 {
		ev = append(ev, fmt.Sprintf("%s more runs taken over by another token while they worked", count(n)))
	}
	outlived := fmt.Sprintf("%s of %s (%s) outlived it", count(js.Outlived), english.Count(js.Judged, "run", "runs"),
		Percent(js.OutlivedShare))
	switch js.Verdict {
	case VerdictNoTTL:
		out = append(out, RuleNotSet.New(subject, fmt.Sprintf("no lock TTL known for %s; recommended %s", english.Count(js.Runs, "run", "runs"),
			FormatDuration(js.Recommended)), ev...))
	case VerdictFewRuns:
		out = append(out, RuleFewSamples.New(subject, fmt.Sprintf("only %s (fewer than {MinSamples} %d): no verdict",
			english.Count(js.Runs, "run", "runs"), o.MinSamples), ev...))
	case VerdictUnsafe:
		out = append(out, RuleBelowP99.New(subject, fmt.Sprintf("lock TTL %s is below the p99 job duration %s: %s", FormatDuration(js.TTL),
			FormatDuration(js.P99), outlived), ev...))
	}
	if js.Outlived > 0 && js.Verdict != VerdictUnsafe {
		out = append(out, RuleRunsOutlived.New(subject, fmt.Sprintf("%s %s lock TTL (%s); longest %s",
			english.Count(js.Outlived, "run outlived", "runs outlived"), english.Plural(js.Outlived, "its", "their"),
			Percent(js.OutlivedShare), FormatDuration(js.Max)), ev...))
	}
	if js.Verdict == VerdictAtRisk && js.Outlived == 0 {
		out = append(out, RuleLowMargin.New(subject, fmt.Sprintf("lock TTL %s is only %.2fx p%s %s; the buffer asks for %.2fx",
			FormatDuration(js.TTL), float64(js.TTL)/float64(js.series.quantile(o.Quantile)), quantileName(o.Quantile),
			FormatDuration(js.series.quantile(o.Quantile)), o.Buffer), ev...))
	}
	if js.RenewalAdvised {
		out = append(out, RuleHeavyTail.New(subject, fmt.Sprintf("the longest run (%s) is %.1fx p99 (%s): renew the lock while working",
			FormatDuration(js.Max), js.MaxOverP99, FormatDuration(js.P99)), ev...))
	}
	if js.TTL > 0 && js.Runs >= int64(o.MinSamples) && float64(js.TTL) > o.SlackRatio*float64(js.P99) {
		out = append(out, RuleFarAboveP99.New(subject, fmt.Sprintf("lock TTL %s is %.0fx the p99 job duration %s: "+
			"a crashed worker blocks the key that long", FormatDuration(js.TTL), js.TTLOverP99, FormatDuration(js.P99)), ev...))
	}
	return out
}

func (js *JobStats) quantileLine() string {
	how := "exact"
	if !js.Exact {
		how = fmt.Sprintf("DDSketch, ±%.1f%%", 100*js.QuantileError)
	}
	return fmt.Sprintf("%s: p50 %s, p90 %s, p95 %s, p99 %s, p99.9 %s, max %s (%s)", english.Count(js.Runs, "run", "runs"),
		FormatDuration(js.P50), FormatDuration(js.P90), FormatDuration(js.P95), FormatDuration(js.P99), FormatDuration(js.P999),
		FormatDuration(js.Max), how)
}

func (js *JobStats) ttlLine() string {
	s := fmt.Sprintf("lock TTL %s (from %s)", FormatDuration(js.TTL), SourceText(js.TTLSource))
	if len(js.TTLsSeen) > 1 {
		var parts []string
		for i, tc := range js.TTLsSeen {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("%d more", len(js.TTLsSeen)-5))
				break
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", FormatDuration(tc.TTL), english.Count(tc.Runs, "run", "runs")))
		}
		s += "; runs carried different TTLs: " + strings.Join(parts, ", ")
		if js.TTLSource == SourceData {
			s += "; each run is judged against its own"
		}
	}
	if js.P99 > 0 {
		margin := js.TTL - js.P99
		sign := "+"
		if margin < 0 {
			sign, margin = "-", -margin
		}
		s += fmt.Sprintf("; margin over p99 %s%s (%.2fx)", sign, FormatDuration(margin), js.TTLOverP99)
	}
	return s
}

func (js *JobStats) recommendLine(o AnalyzeOptions) string {
	s := fmt.Sprintf("recommended TTL %s (p%s %s x %.2g)", FormatDuration(js.Recommended), quantileName(o.Quantile),
		FormatDuration(js.series.quantile(o.Quantile)), o.Buffer)
	if js.RenewalAdvised {
		s += fmt.Sprintf(", renewed every %s while the job runs", FormatDuration(js.Recommended/3))
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "no token logged"
	}
	return "token " + s
}

// SourceText says where a TTL came from, as a reader knows it.
func SourceText(src string) string {
	switch src {
	case SourceFlag:
		return "{TTLs}"
	case SourceConfig:
		return "{TTLFile}"
	case SourceData:
		return "the input"
	}
	return src
}

// quantileName writes 0.99 as "99", 0.999 as "99.9".
func quantileName(q float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", 100*q), "0"), ".")
}

// Recommend is d x buffer rounded up to what people write in a config:
// two significant digits below a minute, 10s steps below an hour, whole
// minutes above (3m50s, not 3m47.312s).
func Recommend(d time.Duration, buffer float64) time.Duration {
	v := float64(d) * buffer
	if v <= 0 {
		return 0
	}
	var step float64
	switch {
	case v >= float64(time.Hour):
		step = float64(time.Minute)
	case v >= float64(time.Minute):
		step = float64(10 * time.Second)
	default:
		step = max(math.Pow(10, math.Floor(math.Log10(v))-1), float64(time.Millisecond))
	}
	return time.Duration(math.Ceil(v/step-1e-9) * step)
}

// FormatDuration prints a duration as people read job times: 420µs,
// 12ms, 1.5s, 41s, 2m31s, 1h20m.
func FormatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds())
	case d < 10*time.Second:
		return strings.TrimSuffix(strconv.FormatFloat(d.Seconds(), 'f', 1, 64), ".0") + "s"
	case d < time.Hour:
		return trimZeros(d.Round(time.Second).String())
	}
	return trimZeros(d.Round(time.Minute).String())
}

func trimZeros(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func count(n int64) string { return english.Number(n) }

// Percent writes a share as people read it: 0.05%, 1.2%, 17%.
func Percent(share float64) string {
	switch {
	case share == 0:
		return "0%"
	case share < 0.001:
		return fmt.Sprintf("%.3f%%", 100*share)
	case share < 0.1:
		return fmt.Sprintf("%.2g%%", 100*share)
	}
	return fmt.Sprintf("%.0f%%", 100*share)
}

func msRound(d time.Duration) float64 { return round3(ms(d)) }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
