package journal

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// killedAndResumed is a journal of two parts: the first publishes three
// messages (one confirmed, one returned, one whose confirm never came),
// skips one, acks one whose DLQ ack then fails, and is killed;
// the second, resumed, acks the DLQ copy of the first's confirmed
// publish, republishes the in-doubt one (--retry-in-doubt) and ends.
func killedAndResumed(t *testing.T) []byte {
	t.Helper()
	var buf memBuf
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock }
	j := New(&buf, "r1", now)
	j.Add(Record{T: Start, Queue: "orders.dlq", Count: 5})
	j.Add(Record{T: Pub, Seq: 1, ID: "m-1", Kind: "replay", To: "queue orders"})
	j.Add(Record{T: Pub, Seq: 2, ID: "m-2", Kind: "replay", To: "queue orders"})
	j.Add(Record{T: OK, Seq: 1})
	j.Add(Record{T: Returned, Seq: 2, Why: "NO_ROUTE"})
	j.Add(Record{T: Skip, ID: "m-3", Why: "no destination"})
	j.Add(Record{T: Pub, Seq: 3, ID: "m-4", Kind: "park", To: "queue orders.dlq.parked"})
	j.Add(Record{T: AckLost, Seq: 1, ID: "m-1", Why: "channel closed"})
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	// Killed here: no end record (a resume trims a torn last line first).
	clock = clock.Add(time.Minute)
	j = New(&buf, "r1", now)
	j.Add(Record{T: Start, Queue: "orders.dlq", Count: 3})
	j.Add(Record{T: ResumedAck, Seq: 1})
	j.Add(Record{T: Pub, Seq: 4, ID: "m-4", Kind: "park", To: "queue orders.dlq.parked", Of: 3})
	j.Add(Record{T: OK, Seq: 4})
	j.Add(Record{T: End, Why: "count at start reached", Settled: true, Summary: map[string]int{"already_done": 1, "read": 3}})
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type memBuf struct{ bytes.Buffer }

func (*memBuf) Sync() error { return nil }

// TestReadTimeline: each part with its start, how it ended (an end
// record's reason, or none: killed), its publishes with their outcomes
// (none for the one whose confirm never came), its skips, resumed acks
// and failed acks; a torn last line is left out.
func TestReadTimeline(t *testing.T) {
	b := killedAndResumed(t)
	for _, torn := range []bool{false, true} {
		in := b
		if torn {
			in = append(bytes.Clone(b), []byte(`{"t":"ok","at":"2026-12-01T09:05:00Z","se`)...)
		}
		tl, err := ReadTimeline(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("torn %v: %v", torn, err)
		}
		if tl.Run != "r1" || tl.Queue != "orders.dlq" || len(tl.Parts) != 2 {
			t.Fatalf("timeline %+v", tl)
		}
		p1, p2 := tl.Parts[0], tl.Parts[1]
		if p1.Ended || p1.Count != 5 || !p2.Ended || p2.Why != "count at start reached" || !p2.Settled || p2.Summary["already_done"] != 1 {
			t.Errorf("part 1 ended %v (count %d), part 2 ended %v %q settled %v summary %v", p1.Ended, p1.Count, p2.Ended, p2.Why, p2.Settled,
				p2.Summary)
		}
		var outcomes []string
		for _, pb := range p1.Pubs {
			outcomes = append(outcomes, pb.ID+"="+pb.Outcome)
		}
		if got := strings.Join(outcomes, " "); got != "m-1=ok m-2=returned m-4=" {
			t.Errorf("part 1 publishes %s", got)
		}
		if p1.Outcomes[OK] != 1 || p1.Outcomes[Returned] != 1 || p1.Outcomes[""] != 1 {
			t.Errorf("part 1 outcomes %v", p1.Outcomes)
		}
		if len(p1.Skips) != 1 || p1.Skips[0].Why != "no destination" || len(p1.AckLost) != 1 || len(p2.Acks) != 1 || p2.Acks[0].Seq != 1 {
			t.Errorf("part 1 skips %+v, acks lost %+v; part 2 acks %+v", p1.Skips, p1.AckLost, p2.Acks)
		}
		if len(p2.Pubs) != 1 || p2.Pubs[0].Of != 3 || p2.Pubs[0].Outcome != OK {
			t.Errorf("part 2 publishes %+v", p2.Pubs)
		}
		if !p1.End.Before(p2.Start) || p2.Start.Sub(p1.End) < time.Minute {
			t.Errorf("part 1 ends %v, part 2 starts %v", p1.End, p2.Start)
		}
	}
	if _, err := ReadTimeline(strings.NewReader(`{"t":"pub","seq":1}` + "\n")); err == nil {
		t.Error("a journal without a start record was read")
	}
	if _, err := ReadTimeline(strings.NewReader(string(b[:40]) + "\n" + string(b))); err == nil {
		t.Error("a malformed line that is not the last was skipped")
	}
}
