package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	amqp "github.com/rabbitmq/amqp091-go"
)

type memFile struct{ bytes.Buffer }

func (*memFile) Sync() error { return nil }

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

func replayOpts(r *rig, yes bool) (replayCase, *memFile) {
	jf := &memFile{}
	run := NewRunID()
	return replayCase{
		ReplayDeps: ReplayDeps{Dial: r.dial, Journal: NewJournal(jf, run, time.Now)},
		ReplayOptions: ReplayOptions{Queue: r.DLQ, Yes: yes, Window: 100, MaxReplays: 3, ParkQueue: r.DLQ + ".parked", DeclareParkQueue: true,
			Rewrite: Rewrite{Run: run, User: "guest"}},
	}, jf
}

func TestReplayMovesEveryMessageHome(t *testing.T) {
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			r := newRig(t, qt)
			r.deadLetter(jobs(50))
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
			r.waitCount(r.DLQ, 50) // the dry run left everything in place

			o, jf := replayOpts(r, true)
			res, err = o.run(ctx)
			must(t, err)
			if res.Counts.Replayed != 50 || res.StoppedBy != "count at start reached" {
				t.Fatalf("replay: %+v stopped by %q lost %q", res.Counts, res.StoppedBy, res.Lost)
			}
			r.waitCount(r.DLQ, 0)
			got := r.drainAll(r.Work)
			if len(got) != 50 {
				t.Fatalf("work queue has %d, want 50", len(got))
			}
			m := got[0]
			if m.MessageId != "m-00000" || m.Headers[HeaderReplayRun] != o.Rewrite.Run || m.Headers[HeaderReplayCount] != int64(1) {
				t.Fatalf("replayed headers: id %q %v", m.MessageId, m.Headers)
			}
			if _, ok := m.Headers["x-death"]; ok {
				t.Fatalf("x-death copied: %v", m.Headers)
			}
			hist, ok := m.Headers[HeaderDeath].([]any)
			if !ok || len(hist) != 1 {
				t.Fatalf("dupctl-death: %#v", m.Headers[HeaderDeath])
			}
			if xd, ok := hist[0].(amqp.Table)["x-death"].([]any); !ok || xd[0].(amqp.Table)["queue"] != r.Work {
				t.Fatalf("death history: %#v", hist[0])
			}
			st, err := ReadJournal(&jf.Buffer)
			must(t, err)
			if st.Count(OutcomeDone) != 50 || st.Run != o.Rewrite.Run {
				t.Fatalf("journal: %d done, run %q", st.Count(OutcomeDone), st.Run)
			}
		})
	}
}

func TestReplayReturnedMessagesStayInTheDLQ(t *testing.T) {
	r := newRig(t, "")
	r.deadLetter(jobs(20))
	o, _ := replayOpts(r, true)
	to, keep, err := ParseTo(r.Exchange + ":no.such.binding")
	must(t, err)
	o.Router = Router{To: to, KeepKey: keep}
	res, err := o.run(context.Background())
	must(t, err)
	if res.Counts.Returned != 20 || res.Counts.Replayed != 0 {
		t.Fatalf("counts: %+v", res.Counts)
	}
	if len(res.Problems) != 20 || !strings.Contains(res.Problems[0].Why, "NO_ROUTE") {
		t.Fatalf("problems: %+v", res.Problems[:1])
	}
	r.waitCount(r.DLQ, 20)
	if n := r.count(r.Work); n != 0 {
		t.Fatalf("work queue got %d", n)
	}
}

func TestReplayFiltersMaxAndParking(t *testing.T) {
	r := newRig(t, "")
	msgs := jobs(30)
	for i := range msgs {
		if i%3 == 0 {
			msgs[i].Headers[HeaderReplayCount] = int64(3) // replayed thrice before
		}
		if i%2 == 0 {
			msgs[i].Headers["tenant"] = "acme"
		}
	}
	r.deadLetter(msgs)
	o, _ := replayOpts(r, true)
	w, err := ParseWhere("header.tenant=acme")
	must(t, err)
	o.Filter.Where = []Where{w}
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
	if n := r.count(r.DLQ + ".parked"); n != c.Parked {
		t.Fatalf("parked %d, park queue has %d", c.Parked, n)
	}
	r.waitCount(r.DLQ, 30-c.Replayed-c.Parked)
}

func TestExportThenReplayFromFile(t *testing.T) {
	r := newRig(t, "")
	msgs := jobs(30)
	msgs[0].Headers["typed"] = amqp.Decimal{Scale: 3, Value: 12345}
	msgs[1].Body = []byte{0xff, 0x00, 0xfe}
	r.deadLetter(msgs)
	var file memFile
	data, err := Export(context.Background(), ExportDeps{ReadDeps: ReadDeps{Dial: r.dial}, Out: &file}, ExportOptions{Read: ReadOptions{Queue: r.DLQ}, File: "mem"})
	must(t, err)
	if data.Written != 30 {
		t.Fatalf("exported %d", data.Written)
	}
	r.waitCount(r.DLQ, 30) // non-destructive

	o, jf := replayOpts(r, true)
	o.Queue, o.File, o.Records = "", "mem", bytes.NewReader(file.Bytes())
	to, keep, err := ParseTo(":" + r.Work)
	must(t, err)
	o.Router = Router{To: to, KeepKey: keep}
	res, err := o.run(context.Background())
	must(t, err)
	if res.Counts.Replayed != 30 || res.StoppedBy != "end of file" {
		t.Fatalf("file replay: %+v %s", res.Counts, res.StoppedBy)
	}
	got := r.drainAll(r.Work)
	if len(got) != 30 {
		t.Fatalf("work has %d", len(got))
	}
	byID := map[string]amqp.Delivery{}
	for _, d := range got {
		byID[d.MessageId] = d
	}
	if byID["m-00000"].Headers["typed"] != (amqp.Decimal{Scale: 3, Value: 12345}) || !bytes.Equal(byID["m-00001"].Body, []byte{0xff, 0x00, 0xfe}) {
		t.Fatalf("types or bodies changed: %#v %v", byID["m-00000"].Headers["typed"], byID["m-00001"].Body)
	}

	// Resuming the same file with its journal replays nothing again.
	st, err := ReadJournal(bytes.NewReader(jf.Bytes()))
	must(t, err)
	o2, _ := replayOpts(r, true)
	o2.Queue, o2.File, o2.Records, o2.Router, o2.Resume = "", "mem", bytes.NewReader(file.Bytes()), o.Router, st
	o2.Rewrite.Run = st.Run
	res, err = o2.run(context.Background())
	must(t, err)
	if res.Counts.Replayed != 0 || res.Counts.AlreadyDone != 30 {
		t.Fatalf("resume: %+v", res.Counts)
	}
	if n := r.count(r.Work); n != 0 {
		t.Fatalf("resume republished %d", n)
	}
}

func TestReplayStopsWhenItsMessagesComeBack(t *testing.T) {
	r := newRig(t, "")
	r.deadLetter(jobs(10))
	o, _ := replayOpts(r, true)
	// One message already carries this run's id: it was replayed by this
	// run and died again.
	must(t, r.ch.PublishWithContext(context.Background(), "", r.DLQ, false, false, amqp.Publishing{
		MessageId: "again", Headers: amqp.Table{HeaderReplayRun: o.Rewrite.Run, "x-death": []any{amqp.Table{"queue": r.Work, "reason": "rejected"}}}}))
	r.waitCount(r.DLQ, 11)
	res, err := o.run(context.Background())
	must(t, err)
	if res.Counts.Bounced != 1 || !strings.Contains(res.StoppedBy, "bounced") || res.Counts.Replayed != 10 {
		t.Fatalf("counts %+v stopped by %q", res.Counts, res.StoppedBy)
	}
	r.waitCount(r.DLQ, 1)
}

// TestHeldMessagesNeverStallTheWindow: with a window of 4 and a filter
// that leaves most messages, the consumer is restarted many times; every
// held message is requeued at the end and every selected one replayed.
func TestHeldMessagesNeverStallTheWindow(t *testing.T) {
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			r := newRig(t, qt)
			msgs := jobs(40)
			for i := range msgs {
				if i%5 == 0 {
					msgs[i].Headers["pick"] = "yes"
				}
			}
			r.deadLetter(msgs)
			o, _ := replayOpts(r, true)
			o.Window = 4
			w, err := ParseWhere("header.pick=yes")
			must(t, err)
			o.Filter.Where = []Where{w}
			res, err := o.run(context.Background())
			must(t, err)
			if res.Counts.Replayed != 8 || res.Counts.Filtered != 32 || res.StoppedBy != "count at start reached" {
				t.Fatalf("counts %+v stopped by %q lost %q", res.Counts, res.StoppedBy, res.Lost)
			}
			r.waitCount(r.DLQ, 32)
			got := r.drainAll(r.Work)
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
// error, not a lost connection); the publishes to the missing exchange
// are refused, not in doubt, and every message is at the destination or
// still in the DLQ.
func TestReplayStopsOnAnExchangeDeletedMidRun(t *testing.T) {
	r := newRig(t, "")
	r.deadLetter(jobs(300))
	ex := r.Exchange + ".gone"
	must(t, r.ch.ExchangeDeclare(ex, "direct", false, false, false, false, nil))
	must(t, r.ch.QueueBind(r.Work, "k", ex, false, nil))
	t.Cleanup(func() { _ = r.ch.ExchangeDelete(ex, false, false) })
	o, jf := replayOpts(r, true)
	to, keep, err := ParseTo(ex + ":k")
	must(t, err)
	o.Router, o.Rate = Router{To: to, KeepKey: keep}, 100
	go func() {
		for r.count(r.Work) < 20 {
			time.Sleep(10 * time.Millisecond)
		}
		_ = r.ch.ExchangeDelete(ex, false, false)
	}()
	res, err := o.run(context.Background())
	var in *problem.Input
	if !errors.As(err, &in) || !strings.Contains(in.Why, "NOT_FOUND") {
		t.Fatalf("error %v (%T), want bad input carrying the broker's NOT_FOUND", err, err)
	}
	if res.Lost != "" || res.Counts.InDoubt != 0 || res.StoppedBy != "destination missing" {
		t.Fatalf("lost %q, stopped by %q, counts %+v", res.Lost, res.StoppedBy, res.Counts)
	}
	waitNoConsumers(t, r)
	if work, dlq := r.count(r.Work), r.count(r.DLQ); work != res.Counts.Replayed || work+dlq != 300 {
		t.Fatalf("%d at the destination (replayed %d) + %d in the DLQ, want 300", work, res.Counts.Replayed, dlq)
	}
	st, err := ReadJournal(bytes.NewReader(jf.Bytes()))
	must(t, err)
	if st.Count(OutcomeDoubt) != 0 {
		t.Fatalf("journal: %d in doubt", st.Count(OutcomeDoubt))
	}
}
