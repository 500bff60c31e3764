package replay

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/replay/journal"
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
			r := dlqtest.NewRig(t, qt)
			r.DeadLetter(identical(20, "storm"))
			ctx := context.Background()

			o, jf := replayOpts(r, true)
			o.Max = 5
			res, err := o.run(ctx)
			must(t, err)
			if res.Counts.Replayed != 5 {
				t.Fatalf("--max 5 replayed %d", res.Counts.Replayed)
			}
			r.WaitCount(r.DLQ, 15)

			st, err := journal.Read(bytes.NewReader(jf.Bytes()))
			must(t, err)
			o2, _ := replayOpts(r, true)
			o2.Journal, o2.Resume, o2.Rewrite.Run = journal.New(jf, st.Run, time.Now), st, st.Run
			res, err = o2.run(ctx)
			must(t, err)
			if res.Counts.Replayed != 15 || res.Counts.AlreadyDone != 0 || res.Counts.InDoubtEarlier != 0 {
				t.Fatalf("resume: %+v, want the 15 identical copies left replayed", res.Counts)
			}
			r.WaitCount(r.DLQ, 0)
			if n := r.Count(r.Work); n != 20 {
				t.Fatalf("destination holds %d of the 20 copies", n)
			}
		})
	}
}

func TestResumeFromAFileReplaysEveryIdenticalCopy(t *testing.T) {
	r := dlqtest.NewRig(t, "")
	r.DeadLetter(identical(20, "file"))
	var file dlqtest.MemFile
	_, err := dlqread.Export(context.Background(), dlqread.ExportDeps{Deps: dlqread.Deps{Dial: r.Dial}, Out: &file},
		dlqread.ExportOptions{Read: dlqread.Options{Queue: r.DLQ}, File: "mem"})
	must(t, err)
	to, keep, err := classify.ParseTo(":" + r.Work)
	must(t, err)
	fromFile := func(c *replayCase) {
		c.Queue, c.File, c.Records = "", "mem", bytes.NewReader(file.Bytes())
		c.Router = classify.Router{To: to, KeepKey: keep}
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
		st, err := journal.Read(bytes.NewReader(jf.Bytes()))
		must(t, err)
		o2, _ := replayOpts(r, true)
		fromFile(&o2)
		o2.Journal, o2.Resume, o2.Rewrite.Run = journal.New(jf, st.Run, time.Now), st, st.Run
		res, err = o2.run(context.Background())
		must(t, err)
		want := [][2]int{{15, 5}, {0, 20}}[round]
		if res.Counts.Replayed != want[0] || res.Counts.AlreadyDone != want[1] {
			t.Fatalf("resume %d: %+v, want %d replayed and %d already done", round+1, res.Counts, want[0], want[1])
		}
	}
	if n := r.Count(r.Work); n != 20 {
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
			r := dlqtest.NewRig(t, qt)
			bin := buildDupctl(t)
			const n = 3000
			r.DeadLetter(identical(n, "kill"))
			jpath := filepath.Join(t.TempDir(), "j")
			run := "ident-" + NewRunID()
			replay := func(args ...string) (int, string) {
				waitNoConsumers(t, r)
				cmd := exec.Command(bin, append([]string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--run-id", run,
					"--amqp-url", r.URL, "--window", "200", "--rate", "1500", "-o", "json"}, args...)...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				must(t, cmd.Start())
				if args[0] == "--journal" {
					// Killed once a random share of the run is confirmed (a
					// fixed delay, on a loaded machine, can land before the
					// first publish or after the last).
					awaitJournaled(t, jpath, journal.OK, 300+rand.IntN(1500))
					must(t, cmd.Process.Kill())
				}
				err := cmd.Wait()
				if ee, ok := err.(*exec.ExitError); ok {
					return ee.ExitCode(), out.String()
				}
				must(t, err)
				return 0, out.String()
			}
			replay("--journal", jpath)
			st, err := journal.Read(mustOpen(t, jpath))
			must(t, err)
			confirmed := st.Count(journal.OutcomeDone)
			if confirmed == 0 || confirmed == n {
				t.Fatalf("the kill landed outside the run (%d confirmed): the test proved nothing", confirmed)
			}
			code, out := replay("--resume", jpath)
			if code > 1 {
				t.Fatalf("resume exited %d: %s", code, out)
			}
			waitNoConsumers(t, r)
			work, dlq := r.Count(r.Work), r.Count(r.DLQ)
			t.Logf("%s: killed after %d confirmed; resume leaves %d at the destination, %d in the DLQ", qt, confirmed, work, dlq)
			if work+dlq < n {
				t.Fatalf("%d copies lost: %d at the destination + %d in the DLQ of %d", n-work-dlq, work, dlq, n)
			}
			if work > n {
				t.Fatalf("%d duplicates without --retry-in-doubt", work-n)
			}
			code, out = replay("--resume", jpath, "--retry-in-doubt")
			if code != 0 {
				t.Fatalf("final run exited %d: %s", code, out)
			}
			waitNoConsumers(t, r)
			work, dlq = r.Count(r.Work), r.Count(r.DLQ)
			if work < n || dlq != 0 {
				t.Fatalf("after --retry-in-doubt: %d at the destination, %d in the DLQ, want all %d delivered", work, dlq, n)
			}
			t.Logf("%s: %d duplicates after --retry-in-doubt", qt, work-n)
		})
	}
}
