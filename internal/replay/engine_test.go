package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/replay/journal"
	amqp "github.com/rabbitmq/amqp091-go"
)

// replayCase is one replay's dependencies and options, set field by
// field in the tests.
type replayCase struct {
	ReplayDeps
	ReplayOptions
}

// run replays and checks that the counts account for every message read.
func (c replayCase) run(ctx context.Context) (*ReplayResult, error) {
	res, err := Replay(ctx, c.ReplayDeps, c.ReplayOptions)
	if res != nil && !res.DryRun {
		k := res.Counts
		if got := k.Replayed + k.Parked + k.AlreadyDone + k.Left(); got != k.Read {
			return res, fmt.Errorf("counts account for %d of the %d messages read: %+v", got, k.Read, k)
		}
	}
	return res, err
}

func replayOpts(r *dlqtest.Rig, yes bool) (replayCase, *dlqtest.MemFile) {
	jf := &dlqtest.MemFile{}
	run := NewRunID()
	return replayCase{
		ReplayDeps: ReplayDeps{Dial: r.Dial, Journal: journal.New(jf, run, time.Now)},
		ReplayOptions: ReplayOptions{Queue: r.DLQ, Yes: yes, Window: 100, MaxReplays: 3, ParkQueue: r.DLQ + ".parked", DeclareParkQueue: true,
			Rewrite: Rewrite{Run: run, User: "guest"}},
	}, jf
}

func TestReplayMovesEveryMessageHome(t *testing.T) {
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			r := dlqtest.NewRig(t, qt)
			r.DeadLetter(dlqtest.Jobs(50))
			ctx := context.Background()

			o, _ := replayOpts(r, false)
			res, err := o.run(ctx)
			must(t, err)
			if res.Counts.Read != 50 || len(res.Destinations) != 1 || res.Destinations[0].Messages != 50 {
				t.Fatalf("dry run: %+v %+v", res.Counts, res.Destinations)
			}
			if d := res.Destinations[0]; d.Target.RoutingKey != r.Work || d.Exists == nil || !*d.Exists || d.Reasons != "rejected 50" {
				t.Fatalf("dry run destination: %+v", d)
			}
			r.WaitCount(r.DLQ, 50) // the dry run left everything in place

			o, jf := replayOpts(r, true)
			res, err = o.run(ctx)
			must(t, err)
			if res.Counts.Replayed != 50 || res.StoppedBy != "count at start reached" {
				t.Fatalf("replay: %+v stopped by %q lost %q", res.Counts, res.StoppedBy, res.Lost)
			}
			r.WaitCount(r.DLQ, 0)
			got := r.DrainAll(r.Work)
			if len(got) != 50 {
				t.Fatalf("work queue has %d, want 50", len(got))
			}
			m := got[0]
			if m.MessageId != "m-00000" || m.Headers[deadletter.HeaderReplayRun] != o.Rewrite.Run ||
				m.Headers[deadletter.HeaderReplayCount] != int64(1) {
				t.Fatalf("replayed headers: id %q %v", m.MessageId, m.Headers)
			}
			if _, ok := m.Headers["x-death"]; ok {
				t.Fatalf("x-death copied: %v", m.Headers)
			}
			hist, ok := m.Headers[deadletter.HeaderDeath].([]any)
			if !ok || len(hist) != 1 {
				t.Fatalf("dupctl-death: %#v", m.Headers[deadletter.HeaderDeath])
			}
			if xd, ok := hist[0].(amqp.Table)["x-death"].([]any); !ok || xd[0].(amqp.Table)["queue"] != r.Work {
				t.Fatalf("death history: %#v", hist[0])
			}
			st, err := journal.Read(&jf.Buffer)
			must(t, err)
			if st.Count(journal.OutcomeDone) != 50 || st.Run != o.Rewrite.Run {
				t.Fatalf("journal: %d done, run %q", st.Count(journal.OutcomeDone), st.Run)
			}
		})
	}
}

func TestReplayReturnedMessagesStayInTheDLQ(t *testing.T) {
	r := dlqtest.NewRig(t, "")
	r.DeadLetter(dlqtest.Jobs(20))
	o, _ := replayOpts(r, true)
	to, keep, err := classify.ParseTo(r.Exchange + ":no.such.binding")
	must(t, err)
	o.Router = classify.Router{To: to, KeepKey: keep}
	res, err := o.run(context.Background())
	must(t, err)
	if res.Counts.Returned != 20 || res.Counts.Replayed != 0 {
		t.Fatalf("counts: %+v", res.Counts)
	}
	if len(res.Problems) != 20 || !strings.Contains(res.Problems[0].Why, "NO_ROUTE") {
		t.Fatalf("problems: %+v", res.Problems[:1])
	}
	r.WaitCount(r.DLQ, 20)
	if n := r.Count(r.Work); n != 0 {
		t.Fatalf("work queue got %d", n)
	}
}

func TestReplayFiltersMaxAndParking(t *testing.T) {
	r := dlqtest.NewRig(t, "")
	msgs := dlqtest.Jobs(30)
	for i := range msgs {
		if i%3 == 0 {
			msgs[i].Headers[deadletter.HeaderReplayCount] = int64(3) // replayed thrice before
		}
		if i%2 == 0 {
			msgs[i].Headers["tenant"] = "acme"
		}
	}
	r.DeadLetter(msgs)
	o, _ := replayOpts(r, true)
	w, err := classify.ParseWhere("header.tenant=acme")
	must(t, err)
	o.Filter.Where = []classify.Where{w}
	o.Max = 4
	res, err := o.run(context.Background())
	must(t, err)
	// 15 are acme; of those, i%6==0 (5) are past --max-replays and parked;
	// of the other 10, --max 4 replays 4.
	c := res.Counts
	if c.Replayed != 4 || c.Filtered < 1 {
		t.Fatalf("counts: %+v", c)
	}
	if c.Parked+c.Replayed+c.Filtered+c.OverMax != c.Read {
		t.Fatalf("counts do not add up: %+v", c)
	}
	if n := r.Count(r.DLQ + ".parked"); n != c.Parked {
		t.Fatalf("parked %d, park queue has %d", c.Parked, n)
	}
	r.WaitCount(r.DLQ, 30-c.Replayed-c.Parked)
}

func TestExportThenReplayFromFile(t *testing.T) {
	r := dlqtest.NewRig(t, "")
	msgs := dlqtest.Jobs(30)
	msgs[0].Headers["typed"] = amqp.Decimal{Scale: 3, Value: 12345}
	msgs[1].Body = []byte{0xff, 0x00, 0xfe}
	r.DeadLetter(msgs)
	var file dlqtest.MemFile
	data, err := dlqread.Export(context.Background(), dlqread.ExportDeps{Deps: dlqread.Deps{Dial: r.Dial}, Out: &file},
		dlqread.ExportOptions{Read: dlqread.Options{Queue: r.DLQ}, File: "mem"})
	must(t, err)
	if data.Written != 30 {
		t.Fatalf("exported %d", data.Written)
	}
	r.WaitCount(r.DLQ, 30) // non-destructive

	o, jf := replayOpts(r, true)
	o.Queue, o.File, o.Records = "", "mem", bytes.NewReader(file.Bytes())
	to, keep, err := classify.ParseTo(":" + r.Work)
	must(t, err)
	o.Router = classify.Router{To: to, KeepKey: keep}
	res, err := o.run(context.Background())
	must(t, err)
	if res.Counts.Replayed != 30 || res.StoppedBy != "end of file" {
		t.Fatalf("file replay: %+v %s", res.Counts, res.StoppedBy)
	}
	got := r.DrainAll(r.Work)
	if len(got) != 30 {
		t.Fatalf("work has %d", len(got))
	}
	byID := map[string]amqp.Delivery{}
	for _, d := range got {
		byID[d.MessageId] = d
	}
	if byID["m-00000"].Headers["typed"] != (amqp.Decimal{Scale: 3, Value: 12345}) ||
		!bytes.Equal(byID["m-00001"].Body, []byte{0xff, 0x00, 0xfe}) {
		t.Fatalf("types or bodies changed: %#v %v", byID["m-00000"].Headers["typed"], byID["m-00001"].Body)
	}

	// Resuming the same file with its journal replays nothing again.
	st, err := journal.Read(bytes.NewReader(jf.Bytes()))
	must(t, err)
	o2, _ := replayOpts(r, true)
	o2.Queue, o2.File, o2.Records, o2.Router, o2.Resume = "", "mem", bytes.NewReader(file.Bytes()), o.Router, st
	o2.Rewrite.Run = st.Run
	res, err = o2.run(context.Background())
	must(t, err)
	if res.Counts.Replayed != 0 || res.Counts.AlreadyDone != 30 {
		t.Fatalf("resume: %+v", res.Counts)
	}
	if n := r.Count(r.Work); n != 0 {
		t.Fatalf("resume republished %d", n)
	}
}

func TestReplayStopsWhenItsMessagesComeBack(t *testing.T) {
	r := dlqtest.NewRig(t, "")
	r.DeadLetter(dlqtest.Jobs(10))
	o, _ := replayOpts(r, true)
	// One message already carries this run's id: it was replayed by this
	// run and died again.
	must(t, r.Ch.PublishWithContext(context.Background(), "", r.DLQ, false, false, amqp.Publishing{
		MessageId: "again", Headers: amqp.Table{deadletter.HeaderReplayRun: o.Rewrite.Run,
			"x-death": []any{amqp.Table{"queue": r.Work, "reason": "rejected"}}}}))
	r.WaitCount(r.DLQ, 11)
	res, err := o.run(context.Background())
	must(t, err)
	if res.Counts.Bounced != 1 || !strings.Contains(res.StoppedBy, "bounced") || res.Counts.Replayed != 10 {
		t.Fatalf("counts %+v stopped by %q", res.Counts, res.StoppedBy)
	}
	r.WaitCount(r.DLQ, 1)
}

// TestHeldMessagesNeverStallTheWindow: with a window of 4 and a filter
// that leaves most messages, the consumer is restarted many times; every
// held message is requeued at the end and every selected one replayed.
func TestHeldMessagesNeverStallTheWindow(t *testing.T) {
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			r := dlqtest.NewRig(t, qt)
			msgs := dlqtest.Jobs(40)
			for i := range msgs {
				if i%5 == 0 {
					msgs[i].Headers["pick"] = "yes"
				}
			}
			r.DeadLetter(msgs)
			o, _ := replayOpts(r, true)
			o.Window = 4
			w, err := classify.ParseWhere("header.pick=yes")
			must(t, err)
			o.Filter.Where = []classify.Where{w}
			res, err := o.run(context.Background())
			must(t, err)
			if res.Counts.Replayed != 8 || res.Counts.Filtered != 32 || res.StoppedBy != "count at start reached" {
				t.Fatalf("counts %+v stopped by %q lost %q", res.Counts, res.StoppedBy, res.Lost)
			}
			r.WaitCount(r.DLQ, 32)
			got := r.DrainAll(r.Work)
			for _, d := range got {
				if d.Headers["pick"] != "yes" {
					t.Fatalf("replayed a filtered message: %s", d.MessageId)
				}
			}
			if len(got) != 8 {
				t.Fatalf("work has %d", len(got))
			}
		})
	}
}

// An exchange deleted mid-run makes the broker close the publishing
// channel with 404 NOT_FOUND. The run stops with that reason (an input
// error, not a lost connection); the publishes to it still unconfirmed
// are in doubt (those before the deletion were routed: under load, 2 of
// them were at the destination), and every message is at the
// destination or still in the DLQ, none lost.
func TestReplayStopsOnAnExchangeDeletedMidRun(t *testing.T) {
	r := dlqtest.NewRig(t, "")
	r.DeadLetter(dlqtest.Jobs(300))
	ex := r.Exchange + ".gone"
	must(t, r.Ch.ExchangeDeclare(ex, "direct", false, false, false, false, nil))
	must(t, r.Ch.QueueBind(r.Work, "k", ex, false, nil))
	t.Cleanup(func() { _ = r.Ch.ExchangeDelete(ex, false, false) })
	o, jf := replayOpts(r, true)
	to, keep, err := classify.ParseTo(ex + ":k")
	must(t, err)
	o.Router, o.Rate = classify.Router{To: to, KeepKey: keep}, 100
	go func() {
		for r.Count(r.Work) < 20 {
			time.Sleep(10 * time.Millisecond)
		}
		_ = r.Ch.ExchangeDelete(ex, false, false)
	}()
	res, err := o.run(context.Background())
	var in *problem.Input
	if !errors.As(err, &in) || !strings.Contains(in.Why, "NOT_FOUND") {
		t.Fatalf("error %v (%T), want bad input carrying the broker's NOT_FOUND", err, err)
	}
	c := res.Counts
	if res.Lost != "" || res.StoppedBy != "destination missing" || c.DestinationMissing != 0 {
		t.Fatalf("lost %q, stopped by %q, counts %+v", res.Lost, res.StoppedBy, c)
	}
	waitNoConsumers(t, r)
	// Replayed ones are at the destination and gone from the DLQ; one in
	// doubt is in the DLQ and may be at the destination too.
	work, dlq := r.Count(r.Work), r.Count(r.DLQ)
	if work < c.Replayed || work > c.Replayed+c.InDoubt || dlq != 300-c.Replayed {
		t.Fatalf("%d at the destination + %d in the DLQ; replayed %d, in doubt %d", work, dlq, c.Replayed, c.InDoubt)
	}
	st, err := journal.Read(bytes.NewReader(jf.Bytes()))
	must(t, err)
	if st.Count(journal.OutcomeDoubt) != c.InDoubt {
		t.Fatalf("journal: %d in doubt, the result %d", st.Count(journal.OutcomeDoubt), c.InDoubt)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	dlqtest.Must(t, err)
}
