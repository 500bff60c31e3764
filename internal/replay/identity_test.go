package replay

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Identical dead letters are normal: a retry storm of one event, a
// producer without message ids. Issue 27: a resume recognised a message by
// its content alone, so every byte-identical copy after the first was
// "already done" and acked out of the DLQ without being published (20
// identical, --max 5 then --resume: 15 lost, exit 0).

// identical is n copies of one message without a message id.
func identical(n int, tag string) []amqp.Publishing {
	out := make([]amqp.Publishing, n)
	for i := range out {
		out[i] = amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-exception-message": "gateway timeout"},
			Body:    []byte(`{"orderId":7,"type":"payment","event":"` + tag + `"}`)}
	}
	return out
}

func TestResumeReplaysEveryIdenticalCopy(t *testing.T) {
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			r := newRig(t, qt)
			r.deadLetter(identical(20, "storm"))
			ctx := context.Background()

			o, jf := replayOpts(r, true)
			o.Max = 5
			res, err := o.run(ctx)
			must(t, err)
			if res.Counts.Replayed != 5 {
				t.Fatalf("--max 5 replayed %d", res.Counts.Replayed)
			}
			r.waitCount(r.DLQ, 15)

			st, err := ReadJournal(bytes.NewReader(jf.Bytes()))
			must(t, err)
			o2, _ := replayOpts(r, true)
			o2.Journal, o2.Resume, o2.Rewrite.Run = NewJournal(jf, st.Run, time.Now), st, st.Run
			res, err = o2.run(ctx)
			must(t, err)
			if res.Counts.Replayed != 15 || res.Counts.AlreadyDone != 0 || res.Counts.InDoubtEarlier != 0 {
				t.Fatalf("resume: %+v, want the 15 identical copies left replayed", res.Counts)
			}
			r.waitCount(r.DLQ, 0)
			if n := r.count(r.Work); n != 20 {
				t.Fatalf("destination holds %d of the 20 copies", n)
			}
		})
	}
}

func TestResumeFromAFileReplaysEveryIdenticalCopy(t *testing.T) {
	r := newRig(t, "")
	r.deadLetter(identical(20, "file"))
	var file memFile
	_, err := Export(context.Background(), ExportDeps{ReadDeps: ReadDeps{Dial: r.dial}, Out: &file}, ExportOptions{Read: ReadOptions{Queue: r.DLQ}, File: "mem"})
	must(t, err)
	to, keep, err := ParseTo(":" + r.Work)
	must(t, err)
	fromFile := func(c *replayCase) {
		c.Queue, c.File, c.Records = "", "mem", bytes.NewReader(file.Bytes())
		c.Router = Router{To: to, KeepKey: keep}
	}
	o, jf := replayOpts(r, true)
	fromFile(&o)
	o.Max = 5
	res, err := o.run(context.Background())
	must(t, err)
	if res.Counts.Replayed != 5 {
		t.Fatalf("--max 5 replayed %d", res.Counts.Replayed)
	}
	for round := 0; round < 2; round++ {
		// The first resume replays the 15 left; the second finds every
		// copy done.
		st, err := ReadJournal(bytes.NewReader(jf.Bytes()))
		must(t, err)
		o2, _ := replayOpts(r, true)
		fromFile(&o2)
		o2.Journal, o2.Resume, o2.Rewrite.Run = NewJournal(jf, st.Run, time.Now), st, st.Run
		res, err = o2.run(context.Background())
		must(t, err)
		want := [][2]int{{15, 5}, {0, 20}}[round]
		if res.Counts.Replayed != want[0] || res.Counts.AlreadyDone != want[1] {
			t.Fatalf("resume %d: %+v, want %d replayed and %d already done", round+1, res.Counts, want[0], want[1])
		}
	}
	if n := r.count(r.Work); n != 20 {
		t.Fatalf("destination holds %d of the 20 copies", n)
	}
}

// TestResumeAfterAKillLosesNoIdenticalCopy kills a replay of identical
// copies mid-run, resumes it, then retries what is in doubt: every copy
// reaches the destination, and copies published twice are at most those
// the resume reported in doubt.
func TestResumeAfterAKillLosesNoIdenticalCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			r := newRig(t, qt)
			bin := buildDupctl(t)
			const n = 3000
			r.deadLetter(identical(n, "kill"))
			journal := filepath.Join(t.TempDir(), "j")
			run := "ident-" + NewRunID()
			replay := func(args ...string) (int, string) {
				waitNoConsumers(t, r)
				cmd := exec.Command(bin, append([]string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--run-id", run,
					"--amqp-url", r.url, "--window", "200", "--rate", "1500", "-o", "json"}, args...)...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				must(t, cmd.Start())
				if args[0] == "--journal" {
					time.Sleep(time.Duration(600+rand.IntN(800)) * time.Millisecond)
					must(t, cmd.Process.Kill())
				}
				err := cmd.Wait()
				if ee, ok := err.(*exec.ExitError); ok {
					return ee.ExitCode(), out.String()
				}
				must(t, err)
				return 0, out.String()
			}
			replay("--journal", journal)
			st, err := ReadJournal(mustOpen(t, journal))
			must(t, err)
			confirmed := st.Count(OutcomeDone)
			if confirmed == 0 || confirmed == n {
				t.Fatalf("the kill landed outside the run (%d confirmed): the test proved nothing", confirmed)
			}
			code, out := replay("--resume", journal)
			if code > 1 {
				t.Fatalf("resume exited %d: %s", code, out)
			}
			waitNoConsumers(t, r)
			work, dlq := r.count(r.Work), r.count(r.DLQ)
			t.Logf("%s: killed after %d confirmed; resume leaves %d at the destination, %d in the DLQ", qt, confirmed, work, dlq)
			if work+dlq < n {
				t.Fatalf("%d copies lost: %d at the destination + %d in the DLQ of %d", n-work-dlq, work, dlq, n)
			}
			if work > n {
				t.Fatalf("%d duplicates without --retry-in-doubt", work-n)
			}
			code, out = replay("--resume", journal, "--retry-in-doubt")
			if code != 0 {
				t.Fatalf("final run exited %d: %s", code, out)
			}
			waitNoConsumers(t, r)
			work, dlq = r.count(r.Work), r.count(r.DLQ)
			if work < n || dlq != 0 {
				t.Fatalf("after --retry-in-doubt: %d at the destination, %d in the DLQ, want all %d delivered", work, dlq, n)
			}
			t.Logf("%s: %d duplicates after --retry-in-doubt", qt, work-n)
		})
	}
}

// TestResumeBookNeverSettlesAnUnpublishedCopy is the property behind the
// tests above, on a model of the DLQ: random mixes of identical and
// distinct messages, random kills (which may land between a confirm and
// its ack, lose sent acks, or see them refused on a closed channel) and
// resumes. Identical copies are interchangeable, so the model counts per
// content: copies in the DLQ, how many of those are already at the
// destination (their ack was lost), and deliveries. A copy is settled
// without publishing only while such a copy is in the DLQ (else one is
// lost), a fresh publish only while an undelivered copy is (else it is a
// duplicate), and after every part each content is delivered or waiting
// in the DLQ exactly as often as it was dead-lettered.
func TestResumeBookNeverSettlesAnUnpublishedCopy(t *testing.T) {
	for seed := uint64(1); seed <= 2000; seed++ {
		m := newDLQModel(rand.New(rand.NewPCG(seed, seed*7)))
		for part := 0; part < 8 && m.waiting() > 0; part++ {
			if err := m.runPart(part); err != nil {
				t.Fatalf("seed %d part %d: %v\njournal:\n%s", seed, part, err, m.journal.Bytes())
			}
		}
	}
}

type dlqModel struct {
	rng     *rand.Rand
	queue   []modelCopy
	content map[string]*modelContent
	journal memFile
	seq     int64
}

type modelCopy struct {
	fp          string
	redelivered bool
}

type modelContent struct {
	total, inDLQ, stuck, delivered int
}

func newDLQModel(rng *rand.Rand) *dlqModel {
	m := &dlqModel{rng: rng, content: map[string]*modelContent{}}
	kinds := 1 + rng.IntN(8) // few contents: many identical copies
	for i, n := 0, 1+rng.IntN(40); i < n; i++ {
		fp := fmt.Sprintf("%032x", rng.IntN(kinds))
		m.queue = append(m.queue, modelCopy{fp: fp})
		if m.content[fp] == nil {
			m.content[fp] = &modelContent{}
		}
		m.content[fp].total++
		m.content[fp].inDLQ++
	}
	return m
}

// waiting is how many copies are in the DLQ and not yet delivered.
func (m *dlqModel) waiting() int {
	n := 0
	for _, c := range m.content {
		n += c.inDLQ - c.stuck
	}
	return n
}

// runPart plays one part of the run as the engine journals it: each copy
// read is looked up in the resume book; a fresh one is published, and the
// part is killed at a random point (or runs to a settled end).
func (m *dlqModel) runPart(part int) error {
	var book *resumeBook
	if part > 0 {
		st, err := ReadJournal(bytes.NewReader(m.journal.Bytes()))
		if err != nil {
			return err
		}
		book = newResumeBook(st, false)
	}
	j := NewJournal(&m.journal, "model", time.Now)
	defer func() { _ = j.Flush() }()
	j.Add(JournalRecord{T: JStart, Queue: "q"})
	clean := m.rng.IntN(4) == 0 // runs to its end and sees the DLQ settle
	killAt := len(m.queue)
	if !clean {
		killAt = m.rng.IntN(len(m.queue) + 1)
	}
	copies := map[string]int{}
	var next []modelCopy
	for i, q := range m.queue {
		if i >= killAt {
			next = append(next, q) // not read: still there
			continue
		}
		c := m.content[q.fp]
		copies[q.fp]++
		seq, cl := book.take(q.fp, copies[q.fp], q.redelivered)
		q.redelivered = true
		switch cl {
		case claimDone:
			if c.stuck == 0 {
				return fmt.Errorf("a copy of %s was settled as already done, but no copy of it in the DLQ was delivered: one is lost", q.fp)
			}
			j.Add(JournalRecord{T: JResumedAck, Seq: seq})
			c.stuck--
			if m.acked(j, seq, q.fp, clean) {
				c.inDLQ--
			} else {
				c.stuck++
				next = append(next, q)
			}
			continue
		case claimDoubt, claimAckSent:
			next = append(next, q) // left in the DLQ
			continue
		}
		if c.inDLQ-c.stuck == 0 {
			return fmt.Errorf("a copy of %s was published again, but every copy of it in the DLQ was delivered already: a duplicate", q.fp)
		}
		m.seq++
		j.Add(JournalRecord{T: JPub, Seq: m.seq, FP: q.fp, Occ: copies[q.fp]})
		switch r := m.rng.IntN(6); {
		case r == 0 && !clean: // killed before the confirm: in doubt
			if m.rng.IntN(2) == 0 { // it did arrive
				c.delivered++
				c.stuck++
			}
			next = append(next, q)
			continue
		case r == 1: // returned
			j.Add(JournalRecord{T: JReturned, Seq: m.seq})
			next = append(next, q)
			continue
		}
		j.Add(JournalRecord{T: JOK, Seq: m.seq})
		c.delivered++
		if m.acked(j, m.seq, q.fp, clean) {
			c.inDLQ--
		} else {
			c.stuck++
			next = append(next, q)
		}
	}
	if clean {
		j.Add(JournalRecord{T: JEnd, Settled: true})
	}
	for fp, c := range m.content {
		if c.delivered+c.inDLQ-c.stuck != c.total {
			return fmt.Errorf("%s: %d delivered + %d waiting in the DLQ, of %d dead-lettered", fp, c.delivered, c.inDLQ-c.stuck, c.total)
		}
	}
	m.rng.Shuffle(len(next), func(a, b int) { next[a], next[b] = next[b], next[a] })
	m.queue = next
	return nil
}

// acked sends a copy's DLQ ack in the model and says whether it was
// applied: it may also be sent and lost with the connection, or refused
// before leaving (and then the journal says so). A part that ends settled
// saw every ack applied.
func (m *dlqModel) acked(j *Journal, seq int64, fp string, clean bool) bool {
	if clean {
		return true
	}
	switch m.rng.IntN(6) {
	case 0:
		return false // sent, lost with the connection
	case 1:
		j.Add(JournalRecord{T: JAckLost, Seq: seq, FP: fp, Unsent: true})
		return false
	}
	return true
}
