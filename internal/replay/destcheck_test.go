package replay

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/replay/journal"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestDestQueue(t *testing.T) {
	for _, tc := range []struct {
		to, q string
		ok    bool
	}{
		{"queue orders.work (default exchange)", "orders.work", true},
		{"queue a b (default exchange)", "a b", true},
		{`exchange orders key "k"`, "", false},
		{"queue x", "", false},
	} {
		if q, ok := destQueue(tc.to); q != tc.q || ok != tc.ok {
			t.Errorf("destQueue(%q) = %q, %v; want %q, %v", tc.to, q, ok, tc.q, tc.ok)
		}
	}
}

// TestCheckDestinationSettlesInDoubt: an earlier part published 10 dead
// letters and was killed with 4 confirmed (and acked) and 6 in doubt, 2 of
// which reached the destination. A resume with CheckDestination reads the
// destination: the 2 there are done (their DLQ copies acked without
// publishing), the 4 missing while every confirmed one is there are
// replayed, and nothing is left in doubt or doubled. With a consumer on
// the destination it is not read (all 6 stay in doubt); with a confirmed
// copy gone from it (consumed), a missing one proves nothing: only the 2
// found are settled.
func TestCheckDestinationSettlesInDoubt(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		consumer, consumedOne  bool
		done, replayed, doubt  int
		found, absent, skipped bool
	}{
		{name: "readable", done: 2, replayed: 4, found: true, absent: true},
		{name: "consumer attached", consumer: true, doubt: 6, skipped: true},
		{name: "a confirmed copy consumed", consumedOne: true, done: 2, doubt: 4, found: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dlqtest.NewRig(t, "")
			r.DeadLetter(dlqtest.Jobs(10))
			o, jf := replayOpts(r, true)
			run := o.Rewrite.Run
			fps := killedPart(t, r, jf, run)
			// At the destination: the 4 confirmed, and 2 of the 6 in doubt.
			for seq := 1; seq <= 6; seq++ {
				if tc.consumedOne && seq == 2 {
					continue
				}
				must(t, r.Ch.PublishWithContext(context.Background(), "", r.Work, false, false, amqp.Publishing{
					MessageId: fmt.Sprintf("m-%05d", seq-1), Body: []byte("x"),
					Headers: amqp.Table{deadletter.HeaderReplayID: fmt.Sprintf("%s-%d", run, seq)}}))
			}
			if tc.consumer {
				c, err := r.Conn.Channel()
				must(t, err)
				_, err = c.Consume(r.Work, "", false, false, false, false, nil)
				must(t, err)
				defer c.Close()
			}
			st, err := journal.Read(bytes.NewReader(jf.Bytes()))
			must(t, err)
			o.Resume, o.CheckDestination = st, true
			res, err := o.run(context.Background())
			must(t, err)
			c := res.Counts
			if c.AlreadyDone != tc.done || c.Replayed != tc.replayed || c.InDoubtEarlier != tc.doubt {
				t.Fatalf("already done %d, replayed %d, in doubt %d; want %d, %d, %d (%+v, checks %+v)", c.AlreadyDone, c.Replayed,
					c.InDoubtEarlier, tc.done, tc.replayed, tc.doubt, c, res.DestinationChecks)
			}
			if len(res.DestinationChecks) != 1 {
				t.Fatalf("checks %+v", res.DestinationChecks)
			}
			chk := res.DestinationChecks[0]
			if (chk.Found > 0) != tc.found || (chk.Absent > 0) != tc.absent || (chk.Skipped != "") != tc.skipped {
				t.Errorf("check %+v", chk)
			}
			if tc.consumer {
				return
			}
			waitNoConsumers(t, r)
			seen := map[string]int{}
			for _, d := range r.DrainAll(r.Work) {
				seen[d.MessageId]++
			}
			for i, fp := range fps {
				id := fmt.Sprintf("m-%05d", i)
				if n := seen[id]; n > 1 {
					t.Errorf("%s (%s) is %d times at the destination", id, fp, n)
				}
			}
			if got := r.Count(r.DLQ); got != tc.doubt {
				t.Errorf("%d left in the DLQ, want the %d in doubt", got, tc.doubt)
			}
		})
	}
}

// killedPart journals a part that published the DLQ's 10 messages (seq
// 1-10, m-00000 first), had 4 confirmed and acked and was killed before
// the other 6 were confirmed; the DLQ then holds those 6 (redelivered).
// It returns the messages' fingerprints.
func killedPart(t *testing.T, r *dlqtest.Rig, jf *dlqtest.MemFile, run string) []string {
	t.Helper()
	c, err := r.Conn.Channel()
	must(t, err)
	defer c.Close()
	must(t, c.Qos(10, 0, false))
	d, err := c.Consume(r.DLQ, "", false, false, false, false, nil)
	must(t, err)
	j := journal.New(jf, run, time.Now)
	j.Add(journal.Record{T: journal.Start, Queue: r.DLQ})
	fps := make([]string, 10)
	for i := range 10 {
		m := <-d
		if m.MessageId != fmt.Sprintf("m-%05d", i) {
			t.Fatalf("got %s, want m-%05d first", m.MessageId, i)
		}
		fps[i] = deadletter.FromDelivery(&m).Fingerprint()
		j.Add(journal.Record{T: journal.Pub, Seq: int64(i + 1), FP: fps[i], Occ: 1, ID: m.MessageId, Kind: "replay",
			To: "queue " + r.Work + " (default exchange)"})
		if i < 4 {
			j.Add(journal.Record{T: journal.OK, Seq: int64(i + 1)})
			must(t, m.Ack(false))
		}
	}
	must(t, j.Flush())
	must(t, c.Close()) // the 6 unconfirmed go back, redelivered
	r.WaitCount(r.DLQ, 6)
	return fps
}
