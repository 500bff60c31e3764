package dlq

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/replay"
	"github.com/dupctl/dupctl/internal/replay/journal"
)

// killedThenResumed: part 1 publishes m-1 (confirmed), m-2 (returned),
// m-3 (never confirmed) and is killed; part 2, resumed 5 s later, holds a
// bounced message (the loop guard) and ends. part 3 comes an hour later.
func killedThenResumed() *journal.Timeline {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	p1 := journal.Part{N: 1, Start: at(0), End: at(400), Count: 4, Outcomes: map[string]int{journal.OK: 1, journal.Returned: 1, "": 1},
		Pubs: []journal.Publish{
			{Seq: 1, ID: "m-1", Kind: "replay", To: "queue orders", At: at(10), Outcome: journal.OK, OutcomeAt: at(30)},
			{Seq: 2, ID: "m-2", Kind: "replay", To: "queue orders", At: at(40), Outcome: journal.Returned, OutcomeAt: at(60), Why: "NO_ROUTE"},
			{Seq: 3, ID: "m-3", Kind: "park", To: "queue orders.dlq.parked", At: at(300)},
		}}
	p2 := journal.Part{N: 2, Start: at(5400), End: at(5600), Ended: true, Why: "count at start reached", Outcomes: map[string]int{},
		Skips: []journal.Event{{At: at(5500), ID: "m-4", Why: replay.SkipBounced}}, Acks: []journal.Event{{At: at(5450), Seq: 1}}}
	p3 := journal.Part{N: 3, Start: at(3_600_000), End: at(3_600_100), Ended: true, Why: "interrupted", Outcomes: map[string]int{}}
	return &journal.Timeline{Run: "r1", Queue: "orders.dlq", Parts: []journal.Part{p1, p2, p3}}
}

// drawn gathers, over every row of l, the items of (a row's marks or
// bars) that keep accepts.
func drawn[T any](l *report.Lanes, of func(report.LaneRow) []T, keep func(T) bool) []T {
	var out []T
	for _, ln := range l.Lanes {
		for _, r := range ln.Rows {
			for _, x := range of(r) {
				if keep(x) {
					out = append(out, x)
				}
			}
		}
	}
	return out
}

func marks(l *report.Lanes, kind string) []report.Mark {
	return drawn(l, func(r report.LaneRow) []report.Mark { return r.Marks }, func(m report.Mark) bool { return m.Kind == kind })
}

func bars(l *report.Lanes, kind string) []report.Bar {
	return drawn(l, func(r report.LaneRow) []report.Bar { return r.Bars }, func(b report.Bar) bool { return b.Kind == kind })
}

// TestReplayLanes: parts an hour apart are drawn apart, parts seconds
// apart together, a lane each; the killed part ends with a ringed cross
// where its last record was, its unconfirmed publish dashed until then;
// the returned publish and the loop guard's hold are ringed; the resumed
// ack of an earlier publish is drawn; a publish's bar runs from its
// record to its outcome.
func TestReplayLanes(t *testing.T) {
	tl := killedThenResumed()
	groups := partGroups(tl.Parts)
	if len(groups) != 2 || len(groups[0]) != 2 || len(groups[1]) != 1 {
		t.Fatalf("groups of %d parts: want parts 1-2 together, part 3 (an hour later) apart", len(groups))
	}
	l := replayLanes(tl, groups[0], 0)
	if len(l.Lanes) != 2 || !strings.HasPrefix(l.Lanes[1].Name, "part 2 (--resume)") {
		t.Fatalf("lanes %+v", l.Lanes)
	}
	crash := marks(l, report.MarkCrash)
	if len(crash) != 1 || crash[0].At != 400 || !crash[0].Evidence {
		t.Errorf("the killed part's end %+v: want a ringed cross at 400ms", crash)
	}
	if got := bars(l, report.BarOrphan); len(got) != 1 || got[0].From != 300 || got[0].To != 400 {
		t.Errorf("unconfirmed publishes %+v: want m-3 dashed from 300ms to the part's last record", got)
	}
	if got := bars(l, report.BarDelivery); len(got) != 2 || got[0].From != 10 || got[0].To != 30 {
		t.Errorf("publish bars %+v", got)
	}
	if got := marks(l, report.MarkLockFailed); len(got) != 1 || !got[0].Evidence || got[0].At != 60 {
		t.Errorf("returned publishes %+v: want m-2 ringed at 60ms", got)
	}
	if got := marks(l, report.MarkCheck); len(got) != 1 || got[0].Label != "loop guard" || !got[0].Evidence {
		t.Errorf("skips %+v: want the loop guard's hold, ringed", got)
	}
	if got := marks(l, report.MarkRedelivery); len(got) != 1 || got[0].At != 5450 {
		t.Errorf("resumed acks %+v", got)
	}
	if got := marks(l, report.MarkAck); len(got) != 1 {
		t.Errorf("confirmed %+v", got)
	}
	if l.Legend == nil || l.T0 != tl.Parts[0].Start {
		t.Error("the picture has no legend of its own or no wall-clock t0")
	}
	if p3 := replayLanes(tl, groups[1], 1); len(marks(p3, report.MarkPause)) != 1 {
		t.Error("the interrupted part 3 does not end with a pause mark")
	}
}

// TestReplayHTMLPage: a --yes run's page holds the terminal view, a parts
// table row per part and a picture per group; a dry run (no journal) and a
// journal that cannot be read draw no picture, the latter saying why.
func TestReplayHTMLPage(t *testing.T) {
	dir := t.TempDir()
	jpath := filepath.Join(dir, "r.journal")
	var buf bytes.Buffer
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	j := journal.New(nopSync{&buf}, "r1", func() time.Time { clock = clock.Add(5 * time.Millisecond); return clock })
	j.Add(journal.Record{T: journal.Start, Queue: "q"})
	j.Add(journal.Record{T: journal.Pub, Seq: 1, ID: "<b>m-1</b>", Kind: "replay", To: "queue <i>w</i>"})
	j.Add(journal.Record{T: journal.OK, Seq: 1})
	j.Add(journal.Record{T: journal.End, Why: "count at start reached"})
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jpath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	res := &replay.ReplayResult{Run: "r1", Queue: "q", StoppedBy: "count at start reached"}
	var page bytes.Buffer
	if err := writeReplayHTML(&page, res, jpath); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	if strings.Count(s, `<tr data-part="`) != 1 || strings.Count(s, `<figure class="lanes">`) != 1 ||
		!strings.Contains(s, `<section class="view">`) {
		t.Errorf("page without its view, parts table or picture:\n%s", s)
	}
	if strings.Contains(s, "<b>m-1") || strings.Contains(s, "<i>w") {
		t.Error("a message id or destination is not escaped")
	}
	page.Reset()
	res.DryRun = true
	if err := writeReplayHTML(&page, res, ""); err != nil || strings.Contains(page.String(), "<figure") {
		t.Errorf("a dry run drew a picture (%v)", err)
	}
	page.Reset()
	res.DryRun = false
	err := writeReplayHTML(&page, res, filepath.Join(dir, "missing"))
	if err != nil || !strings.Contains(page.String(), "could not be read") {
		t.Errorf("an unreadable journal: %v\n%s", err, page.String())
	}
}

type nopSync struct{ *bytes.Buffer }

func (nopSync) Sync() error { return nil }

// BenchmarkReplayHTML reads a journal of n publishes, each confirmed, and
// draws the run's page (docs/benchmarks.md).
func BenchmarkReplayHTML(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var buf bytes.Buffer
			clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			j := journal.New(nopSync{&buf}, "r1", func() time.Time { clock = clock.Add(time.Millisecond); return clock })
			j.Add(journal.Record{T: journal.Start, Queue: "q", Count: n})
			for i := 1; i <= n; i++ {
				j.Add(journal.Record{T: journal.Pub, Seq: int64(i), FP: "3f30e082137aa2a3df05be7054c83a8f", Occ: 1, ID: fmt.Sprintf("m-%d", i),
					Kind: "replay", To: "queue orders (default exchange)"})
				j.Add(journal.Record{T: journal.OK, Seq: int64(i)})
			}
			j.Add(journal.Record{T: journal.End, Why: "count at start reached"})
			if err := j.Flush(); err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "r.journal")
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				b.Fatal(err)
			}
			res := &replay.ReplayResult{Run: "r1", Queue: "q"}
			b.ReportAllocs()
			b.ResetTimer()
			var size int
			for i := 0; i < b.N; i++ {
				var page bytes.Buffer
				if err := writeReplayHTML(&page, res, path); err != nil {
					b.Fatal(err)
				}
				size = page.Len()
			}
			b.ReportMetric(float64(size), "page-bytes")
		})
	}
}
