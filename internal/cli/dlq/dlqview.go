package dlq

import (
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// The text helpers every dlq view shares.

// readNote is the side effect of the read that just happened.
func readNote(r dlqread.Result) string {
	note := fmt.Sprintf("Read %s and requeued %s: %s now marked redelivered.", english.Count(r.Read, "message", "messages"),
		english.Plural(r.Read, "it", "them"), english.Plural(r.Read, "it is", "they are"))
	if r.Quorum {
		note += " Quorum queue: each read added 1 to x-delivery-count and moved them behind the others."
	}
	return note
}

func classText(th *report.Theme, c classify.Class) string {
	switch c {
	case classify.NonRetryable:
		return th.Severity(findings.Error, string(c))
	case classify.Retryable:
		return th.Pass(string(c))
	}
	return th.Faint(string(c))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ago says how long before now t was, in the largest sensible units.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		return t.UTC().Format(time.RFC3339)
	}
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd ago (%s)", int(d.Hours()/24), t.UTC().Format(time.RFC3339))
	case d >= time.Hour:
		return fmt.Sprintf("%dh ago (%s)", int(d.Hours()), t.UTC().Format(time.RFC3339))
	case d >= time.Minute:
		return fmt.Sprintf("%dm ago (%s)", int(d.Minutes()), t.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%ds ago (%s)", int(d.Seconds()), t.UTC().Format(time.RFC3339))
}
