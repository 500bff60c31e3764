package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/replay/journal"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// fillReplayDLQ declares a DLQ, its work queue and parking queue, and
// dead-letters into it, in this order: one message replayed three times
// already (parked), one with no death history (no destination), one this
// run replayed before (the loop guard holds it), then n for the work
// queue.
func fillReplayDLQ(t *testing.T, run string, n int) (dlq, work string) {
	t.Helper()
	conn, err := amqp.Dial(testenv.Need(t, testenv.AMQP))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	dlq = testenv.WordName("lanesdlq")
	work = dlq + ".work"
	for _, q := range []string{dlq, work, dlq + ".parked"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteQueue(q) })
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	death := amqp.Table{"count": int64(1), "exchange": "", "queue": work, "reason": "rejected", "routing-keys": []any{work},
		"time": time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	headers := []amqp.Table{
		{"x-death": []any{death}, "dupctl-replay-count": int64(3)},
		{},
		{"x-death": []any{death}, "dupctl-replay-run": run, "dupctl-replay-count": int64(1)},
	}
	for i := 0; i < n; i++ {
		headers = append(headers, amqp.Table{"x-death": []any{death}})
	}
	for i, h := range headers {
		dc, err := ch.PublishWithDeferredConfirm("", dlq, true, false, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i+1), Headers: h,
			DeliveryMode: amqp.Persistent, Body: []byte(fmt.Sprintf(`{"orderId":%d}`, 1000+i))})
		if err != nil || !dc.Wait() {
			t.Fatalf("publish: %v", err)
		}
	}
	return dlq, work
}

// TestReplayHTML: a replay interrupted (--timeout, paced by --rate) and
// resumed from its journal draws, from that journal, a row per part in
// its parts table and a lane per part - the first ending "interrupted",
// the second resumed - with one bar per publish until its confirm, one
// confirmed mark per "ok" record, the parked message on its parking
// queue's row, the loop guard's holds ringed; in Chromium, in four
// views, it holds every page's rules and passes axe-core.
func TestReplayHTML(t *testing.T) {
	dir := t.TempDir()
	run := testenv.WordName("lanesrun")
	dlq, work := fillReplayDLQ(t, run, 8)
	jpath, html := filepath.Join(dir, "replay.journal"), filepath.Join(dir, "replay.html")
	ios, _, stdout, stderr := iostreams.Test()
	code := cli.Run(context.Background(), []string{"dlq", "replay", "--queue", dlq, "--yes", "--rate", "2", "--timeout", "3s",
		"--journal", jpath, "--run-id", run, "--max-bounces", "5", "--amqp-url", testenv.AMQP.ConnURL()}, ios)
	if code == 2 {
		t.Fatalf("part 1: exit %d: %s%s", code, stdout, stderr)
	}
	runToFile(t, "dlq", "replay", "--queue", dlq, "--resume", jpath, "--yes", "--max-bounces", "5",
		"--amqp-url", testenv.AMQP.ConnURL(), "--html", html)
	fh, err := os.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := journal.ReadTimeline(fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Parts) != 2 || tl.Parts[0].Why != "interrupted" || !tl.Parts[1].Ended {
		t.Fatalf("parts %+v: want part 1 interrupted, part 2 ended", tl.Parts)
	}
	ok, pubs, loopGuard, parked := 0, 0, 0, 0
	for _, p := range tl.Parts {
		ok += p.Outcomes[journal.OK]
		pubs += len(p.Pubs)
		for _, s := range p.Skips {
			if strings.HasPrefix(s.Why, "bounced") {
				loopGuard++
			}
		}
		for _, pb := range p.Pubs {
			if pb.Kind == "park" {
				parked++
			}
		}
	}
	if ok != 9 || parked != 1 || loopGuard == 0 {
		t.Fatalf("journal: %d confirmed, %d parked, %d loop guard holds: want 9 (8 to %s and the parked one), 1, at least 1", ok, parked,
			loopGuard, work)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(text, -1)) }
	// Marks are counted in the picture itself: the event-order strip and
	// the legend draw glyphs again.
	main := mainSVG(t, text)
	inMain := func(re string) int { return len(regexp.MustCompile(re).FindAllString(main, -1)) }
	for _, c := range []struct {
		what string
		re   string
		want int
		main bool // counted in the picture only
	}{
		{"parts table rows", `<tr data-part="`, 2, false},
		{"part lanes", `<g class="lane" data-lane="part `, 2, true},
		{"the interrupted part's end", `<text class="bar-end-label"[^>]*>interrupted</text>`, 1, true},
		{"a resumed part's lane", `data-lane="part 2 \(--resume\)`, 1, false},
		{"publish bars", `<rect class="bar delivery"`, pubs, true},
		{"confirmed marks", `<g class="mark ack"`, ok, true},
		{"loop guard holds, ringed", `<g class="mark check" data-t-ms="[0-9]+" data-evidence="1"`, loopGuard, true},
		{"the parking queue's row", `→ queue ` + regexp.QuoteMeta(dlq) + `\.parked \(default exchange\) \(park\)`, 1, false},
		{"its own legend", `<p class="legend">.*returned \(unroutable\), nacked or not published`, 1, false},
	} {
		n := count
		if c.main {
			n = inMain
		}
		if got := n(c.re); got != c.want {
			t.Errorf("%s: %d on the page, want %d", c.what, got, c.want)
		}
	}
	browse(t, html, "dlq-replay", views, func(t *testing.T, v view, p page) {
		checkScreen(t, v, p)
		if len(p.content.Lanes) != 2 {
			t.Errorf("lanes %q: one per part", p.content.Lanes)
		}
	})
}

// mainSVG is the first picture of a page, without its event-order strip
// and legend (which draw its glyphs again).
func mainSVG(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<figure class="lanes">`)
	if i < 0 {
		t.Fatal("no lanes picture on the page")
	}
	j := strings.Index(page[i:], "</svg>")
	return page[i : i+j]
}
