package inspect

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// barWidth is the widest histogram bar, in columns.
const barWidth = 40

// writeTTL is the table view of `inspect ttl`: a summary line per job
// type, then each job type's histogram with the TTL drawn across it, then
// --simulate's estimates.
func writeTTL(w io.Writer, th *report.Theme, r *ttl.Result) error {
	how := "exact quantiles"
	if anySketch(r) && r.Sketch.ExactMax == 0 {
		how = fmt.Sprintf("quantiles from a DDSketch (±%.1f%%)", 100*r.Sketch.RelativeAccuracy)
	} else if anySketch(r) {
		how = fmt.Sprintf("quantiles exact up to %s runs per job type, from a DDSketch (±%.1f%%) above",
			english.Number(int64(r.Sketch.ExactMax)), 100*r.Sketch.RelativeAccuracy)
	}
	if r.IncludeWait {
		how = "queue wait + run, " + how
	}
	fmt.Fprintf(w, "%s %s of %d job %s from %s (%s)\n\n", th.Strong("inspect ttl:"), english.Count(r.Runs, "run", "runs"), len(r.JobTypes),
		english.Plural(len(r.JobTypes), "type", "types"), strings.Join(r.Sources, ", "), how)
	if err := jobTable(th, r).Render(w); err != nil {
		return err
	}
	for _, js := range r.JobTypes {
		fmt.Fprintln(w)
		writeHistogram(w, th, &js)
	}
	return writeSimulation(w, th, r)
}

// jobTable is the per-job table: quantiles, TTL, how many outlived it,
// the verdict and the recommended TTL.
func jobTable(th *report.Theme, r *ttl.Result) *report.Table {
	t := report.NewTable("JOB TYPE", "RUNS", "P50", "P95", "P99", "P99.9", "MAX", "TTL", "OUTLIVED", "VERDICT", "RECOMMENDED").
		AlignRight(1, 2, 3, 4, 5, 6, 7, 8)
	for _, js := range r.JobTypes {
		ttlText, outlived := "-", "-"
		if js.TTL > 0 {
			ttlText = ttl.FormatDuration(js.TTL)
		}
		if js.Judged > 0 {
			outlived = fmt.Sprintf("%s (%s)", english.Number(js.Outlived), ttl.Percent(js.OutlivedShare))
			if js.Outlived > 0 {
				outlived = th.Severity(findings.Error, outlived)
			}
		}
		rec := ttl.FormatDuration(js.Recommended)
		if js.RenewalAdvised {
			rec += " + renew"
		}
		t.Row(js.JobType, english.Number(js.Runs), ttl.FormatDuration(js.P50), ttl.FormatDuration(js.P95), ttl.FormatDuration(js.P99),
			ttl.FormatDuration(js.P999), ttl.FormatDuration(js.Max), ttlText, outlived, verdictText(th, js.Verdict), rec)
	}
	return t
}

func anySketch(r *ttl.Result) bool {
	for _, js := range r.JobTypes {
		if !js.Exact {
			return true
		}
	}
	return false
}

func verdictText(th *report.Theme, v string) string {
	switch v {
	case ttl.VerdictUnsafe:
		return th.Severity(findings.Error, v)
	case ttl.VerdictAtRisk:
		return th.Severity(findings.Warn, v)
	case ttl.VerdictSafe:
		return th.Pass(v)
	}
	return th.Faint(v)
}

// ttlSource says where a TTL came from, its options named as flags.
func ttlSource(src string) string {
	return strings.NewReplacer("{TTLs}", "--ttl", "{TTLFile}", "--ttl-file").Replace(ttl.SourceText(src))
}

// writeHistogram draws the durations in log-scaled buckets, the TTL as a
// line across them and the buckets beyond it in the error colour with
// their own glyph (so they stand out without colour too).
func writeHistogram(w io.Writer, th *report.Theme, js *ttl.JobStats) {
	head := fmt.Sprintf("%s: %s", js.JobType, english.Count(js.Runs, "run", "runs"))
	if js.TTL > 0 {
		head += fmt.Sprintf(", lock TTL %s (from %s)", ttl.FormatDuration(js.TTL), ttlSource(js.TTLSource))
	}
	fmt.Fprintf(w, "%s  %s\n", th.Strong(head), verdictText(th, js.Verdict))
	if len(js.Histogram) == 0 {
		return
	}
	// Labels read "from - to" with the dashes aligned.
	fw, tw, cw := 0, 0, 0
	var most int64
	for _, b := range js.Histogram {
		fw = max(fw, utf8.RuneCountInString(ttl.FormatDuration(b.From)))
		tw = max(tw, utf8.RuneCountInString(ttl.FormatDuration(b.To)))
		cw = max(cw, len(english.Number(b.Runs)))
		most = max(most, b.Runs)
	}
	lw := fw + 3 + tw
	marker := func() {
		label := fmt.Sprintf(" TTL %s ", ttl.FormatDuration(js.TTL))
		line := strings.Repeat("┄", lw) + " ┄┄" + label + strings.Repeat("┄", max(2, barWidth-2-utf8.RuneCountInString(label)))
		note := ""
		if js.Judged > 0 {
			note = fmt.Sprintf("  %s (%s) outlived it", english.Count(js.Outlived, "run", "runs"), ttl.Percent(js.OutlivedShare))
			if len(js.TTLsSeen) > 1 && js.TTLSource == ttl.SourceData {
				note = fmt.Sprintf("  %s (%s) outlived their own TTL (%d different TTLs)",
					english.Count(js.Outlived, "run", "runs"), ttl.Percent(js.OutlivedShare), len(js.TTLsSeen))
			}
			if js.TakenOver > 0 {
				note += fmt.Sprintf("; %s taken over by another token while still working", english.Number(js.TakenOver))
			}
		}
		fmt.Fprintf(w, "  %s%s\n", th.Strong(line), note)
	}
	drawn := false
	for _, b := range js.Histogram {
		if b.BeyondTTL && !drawn {
			marker()
			drawn = true
		}
		plain := barOf(b.Runs, most, b.BeyondTTL)
		bar, n := plain, english.Number(b.Runs)
		if b.BeyondTTL && b.Runs > 0 {
			bar, n = th.Severity(findings.Error, bar), th.Severity(findings.Error, n)
		}
		from, to := ttl.FormatDuration(b.From), ttl.FormatDuration(b.To)
		label := strings.Repeat(" ", fw-utf8.RuneCountInString(from)) + from + " - " + to + strings.Repeat(" ", tw-utf8.RuneCountInString(to))
		pad := strings.Repeat(" ", cw-len(english.Number(b.Runs))+barWidth-utf8.RuneCountInString(plain))
		fmt.Fprintf(w, "  %s %s%s %s\n", label, bar, pad, n)
	}
	if js.TTL > 0 && !drawn {
		marker()
	}
}

// barOf is a bar of n out of most: eighth blocks within the TTL, a
// shaded glyph beyond it; any run at all gets at least a sliver, so a
// tail of a few runs is never invisible.
func barOf(n, most int64, beyond bool) string {
	if n == 0 || most == 0 {
		return ""
	}
	eighths := int(n * barWidth * 8 / most)
	if beyond {
		return strings.Repeat("▓", max(1, (eighths+7)/8))
	}
	if eighths == 0 {
		return "▏"
	}
	bar := strings.Repeat("█", eighths/8)
	if rem := eighths % 8; rem > 0 {
		bar += string([]rune("▏▎▍▌▋▊▉")[rem-1])
	}
	return bar
}

func writeSimulation(w io.Writer, th *report.Theme, r *ttl.Result) error {
	var sims []*ttl.JobStats
	for i := range r.JobTypes {
		if r.JobTypes[i].Simulation != nil {
			sims = append(sims, &r.JobTypes[i])
		}
	}
	if len(sims) == 0 {
		return nil
	}
	s := sims[0].Simulation
	fmt.Fprintf(w, "\n%s %s jobs per job type, TTL and profile drawn from the measured durations; "+
		"%s delivered twice, %s crash mid-flow, seed %d\n",
		th.Strong("simulated:"), english.Number(int64(s.Jobs)), ttl.Percent(s.DupRate), ttl.Percent(s.CrashRate), s.Seed)
	t := report.NewTable("JOB TYPE", "TTL", "PROFILE", "LOCK EXPIRIES/M", "DUPLICATES/M", "(95% UPPER)").AlignRight(3, 4, 5)
	for _, js := range sims {
		simRows(t, th, js.JobType, "current", js.Simulation.Current)
		if rec := js.Simulation.Recommended; rec != nil {
			simRows(t, th, js.JobType, "recommended", *rec)
		}
	}
	return t.Render(w)
}

func simRows(t *report.Table, th *report.Theme, jobType, which string, st ttl.SimTTL) {
	for _, row := range st.Profiles {
		dup := fmt.Sprintf("%.0f", row.DuplicatesPerM)
		if row.DuplicatesPerM > 0 {
			dup = th.Severity(findings.Error, dup)
		}
		t.Row(jobType, ttl.FormatDuration(st.TTL)+" ("+which+")", row.Profile, fmt.Sprintf("%.0f", row.LockExpiriesPerM), dup,
			fmt.Sprintf("%.0f", row.DuplicatesCI95High))
	}
}

// The HTML histogram: per job type, the durations on a log-scaled axis,
// the buckets beyond the TTL in the error colour, and the TTL, p99 and
// recommended TTL as labelled lines. Every bar and line carries its
// milliseconds (data-from-ms, data-to-ms, data-ms) and the axis its scale
// (data-min-ms, data-max-ms, data-x0, data-width), so a reader hovering
// sees the figures and a test can check that each sits where its value says.
const (
	histX0, histW, histH, histTop = 60, 720, 160, 48
)

func writeTTLHTML(w io.Writer, res *ttl.Result) error {
	fmt.Fprintf(w, "<p>%s of %s from %s.</p>\n", english.Count(res.Runs, "run", "runs"),
		english.Count(len(res.JobTypes), "job type", "job types"), report.Escape(strings.Join(res.Sources, ", ")))
	if err := report.TextHTML(w, func(w io.Writer, th *report.Theme) error { return jobTable(th, res).Render(w) }); err != nil {
		return err
	}
	io.WriteString(w, "<p class=\"note\">Each bar's height is its runs per doubling of the duration (the buckets are unequal on the log "+
		"axis); its count is in its hover text.</p>\n")
	for i := range res.JobTypes {
		if err := writeJobHistogram(w, &res.JobTypes[i]); err != nil {
			return err
		}
	}
	return nil
}

func writeJobHistogram(w io.Writer, js *ttl.JobStats) error {
	if len(js.Histogram) == 0 {
		return nil
	}
	lo, hi := js.Histogram[0].FromMS, js.Histogram[len(js.Histogram)-1].ToMS
	for _, v := range []float64{js.TTLMS, js.P99MS, js.RecommendedTTLMS} {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v*1.1)
		}
	}
	lo = math.Max(lo, 1)
	x := func(ms float64) float64 {
		ms = math.Max(ms, lo)
		return histX0 + math.Log(ms/lo)/math.Log(hi/lo)*histW
	}
	// The buckets are unequal on the axis: a bar's height is its runs per
	// doubling of the duration (a density), so a wide bucket does not
	// stand taller, nor a narrow one make a false dip, for its width.
	density := func(b ttl.Bucket) float64 {
		return float64(b.Runs) / math.Max(math.Log2(math.Max(b.ToMS, 1)/math.Max(b.FromMS, 1)), 1e-9)
	}
	most := 1e-9
	for _, b := range js.Histogram {
		most = math.Max(most, density(b))
	}
	desc := fmt.Sprintf("%s: %s; p50 %s, p99 %s, max %s; lock TTL %s; %s outlived it; recommended TTL %s",
		js.JobType, english.Count(js.Runs, "run", "runs"),
		ttl.FormatDuration(msDur(js.P50MS)), ttl.FormatDuration(msDur(js.P99MS)), ttl.FormatDuration(msDur(js.MaxMS)),
		ttlText(js.TTLMS), english.Number(js.Outlived), ttl.FormatDuration(msDur(js.RecommendedTTLMS)))
	vw, vh := histX0+histW+130, histTop+histH+30
	fmt.Fprintf(w, "<figure class=\"histogram\" data-job-type=\"%s\">\n<div class=\"scroll\"><svg xmlns=\"http://www.w3.org/2000/svg\" "+
		"viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\" data-min-ms=\"%g\" data-max-ms=\"%g\" "+
		"data-x0=\"%d\" data-width=\"%d\">\n<title>%s</title>\n",
		report.Escape(js.JobType), vw, vh, vw, vh, report.Escape(desc), lo, hi, histX0, histW, report.Escape(desc))
	base := histTop + histH
	for _, b := range js.Histogram {
		x0, x1 := x(b.FromMS), x(b.ToMS)
		h := float64(histH) * density(b) / most
		fill := report.Palette.Lease
		if b.BeyondTTL {
			fill = report.Palette.Error
		}
		fmt.Fprintf(w, "<rect class=\"bucket%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" style=\"fill:%s\" data-from-ms=\"%g\" "+
			"data-to-ms=\"%g\" data-runs=\"%d\"><title>%s to %s: %s%s</title></rect>\n",
			map[bool]string{true: " beyond-ttl"}[b.BeyondTTL], x0+0.5, float64(base)-h, math.Max(x1-x0-1, 1), math.Max(h, 0.5), fill,
			b.FromMS, b.ToMS, b.Runs,
			report.Escape(ttl.FormatDuration(msDur(b.FromMS))), report.Escape(ttl.FormatDuration(msDur(b.ToMS))),
			english.Count(b.Runs, "run", "runs"),
			map[bool]string{true: ", beyond the lock TTL"}[b.BeyondTTL])
	}
	fmt.Fprintf(w, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" style=\"stroke:%s\"/>\n", histX0, base, histX0+histW, base,
		report.Palette.Faint)
	for _, t := range axisTicks(lo, hi) {
		fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x(t), base+16,
			report.Escape(ttl.FormatDuration(msDur(t))))
	}
	marker := func(class string, ms float64, color, label string, row int) {
		if ms <= 0 {
			return
		}
		at := report.Escape(ttl.FormatDuration(msDur(ms)))
		fmt.Fprintf(w, "<g class=\"marker %s\" data-ms=\"%g\"><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" style=\"stroke:%s\" "+
			"stroke-width=\"2\" stroke-dasharray=\"5 3\"/><text x=\"%.1f\" y=\"%d\" style=\"fill:%s\">%s %s</text><title>%s %s</title></g>\n",
			class, ms, x(ms), 14+row*13, x(ms), base, color, x(ms)+3, 12+row*13, color, label, at, label, at)
	}
	marker("p99", js.P99MS, report.Palette.Info, "p99", 0)
	marker("ttl", js.TTLMS, report.Palette.Error, "lock TTL", 1)
	marker("recommended", js.RecommendedTTLMS, report.Palette.Pass, "recommended", 2)
	io.WriteString(w, "</svg></div>\n")
	fmt.Fprintf(w, "<figcaption>%s</figcaption>\n</figure>\n", report.Escape(desc))
	return nil
}

// axisTicks are the 1-2-5 values between lo and hi that label the axis.
func axisTicks(lo, hi float64) []float64 {
	var out []float64
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := p * m; v >= lo && v <= hi {
				out = append(out, v)
			}
		}
	}
	if len(out) > 8 {
		var thin []float64
		for i, v := range out {
			if i%2 == 0 {
				thin = append(thin, v)
			}
		}
		out = thin
	}
	return out
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func ttlText(ms float64) string {
	if ms <= 0 {
		return "unknown"
	}
	return ttl.FormatDuration(msDur(ms))
}
