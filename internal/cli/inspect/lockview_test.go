package inspect

import (
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// A family whose low-TTL locks were read again says in its TTL cell what
// the second reads found, so the table explains why no TTL outlier was
// raised (before, only a note under the table did).
func TestFamilyTableShowsSecondReads(t *testing.T) {
	fams := []lock.Family{
		{Template: "lock:lease:order:{int}", Keys: 3, Certainty: "likely",
			TTL: lock.TTLStats{MedianMs: 60_000, Histogram: []lock.Bucket{{Le: "1m", Count: 3}}, Renewed: 1, Gone: 2}},
		{Template: "lock:report:{int}", Keys: 2, Certainty: "likely",
			TTL: lock.TTLStats{MedianMs: 9_000, Histogram: []lock.Bucket{{Le: "10s", Count: 2}}}},
	}
	var b strings.Builder
	if err := familyTable(&b, report.NewTheme(&b, false), fams); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return l
			}
		}
		t.Fatalf("no row for %s in\n%s", prefix, b.String())
		return ""
	}
	if r := row("lock:lease:order:{int}"); !strings.Contains(r, "1m (p50); 1 renewed, 2 gone") {
		t.Errorf("renewed family's row %q: want its TTL cell to say 1 renewed, 2 gone", r)
	}
	if r := row("lock:report:{int}"); strings.Contains(r, ";") || !strings.Contains(r, "9s (p50)") {
		t.Errorf("family without second reads %q: want the median alone", r)
	}
}
