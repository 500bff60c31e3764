package replay

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/replay/journal"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestRabbitClusterReplayLeaderStopped replays a quorum DLQ into a quorum
// work queue on the 3-node cluster while the node leading both queues is
// stopped (rabbitmqctl stop_app: its listener closes, its connections
// drop, the queues elect leaders on the other two) and restarted.
//
//   - via-leader: dupctl's URL names every node, the stopped one first, so
//     both its connections are on it. The run stops ("connection lost",
//     exit 3); the journal holds in doubt only what was published and not
//     confirmed (at most the window); --resume --retry-in-doubt with the
//     same URL dials on past the stopped node and finishes while the node
//     restarts.
//   - elsewhere: dupctl's URL names the two other nodes; the leaders move
//     under its connections.
//
// Either way nothing is lost (every message at the destination or in the
// DLQ), and the duplicates at the destination are at most what the
// journal held in doubt. The figures go to the log.
func TestRabbitClusterReplayLeaderStopped(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	bin := buildDupctl(t)
	t.Run("via-leader", func(t *testing.T) { leaderStopped(t, c, bin, c.URL) })
	b, other := c.Nodes[1], c.Nodes[2]
	t.Run("elsewhere", func(t *testing.T) { leaderStopped(t, c, bin, "amqp://guest:guest@"+b.Addr+","+other.Addr+"/") })
}

const clusterWindow = 200

func leaderStopped(t *testing.T, c *testenv.RabbitCluster, bin, url string) {
	a, observer := c.Nodes[0], c.Nodes[2]
	r := dlqtest.NewRigAt(t, a.URL, "quorum")
	for _, q := range []string{r.DLQ, r.Work} {
		if l, err := c.Leader(q); err != nil || l != a.Name {
			t.Fatalf("queue %s is led by %q (%v), want %s: declared through it", q, l, err, a.Name)
		}
	}
	const n = 8000
	start := time.Now()
	r.DeadLetter(dlqtest.Jobs(n))
	t.Logf("%d messages dead-lettered into the quorum DLQ in %s", n, time.Since(start).Round(time.Millisecond))
	r.Use(observer.URL) // counts and drains through a node that stays up

	jpath := filepath.Join(t.TempDir(), "replay.journal")
	args := []string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--window", strconv.Itoa(clusterWindow), "--rate", "1000",
		"--journal", jpath, "--amqp-url", url, "--drain-grace", "10s"}
	run1 := startReplay(t, bin, args)
	stalls := watchProgress(t, observer.URL, r.Work, run1)
	waitAtDestination(t, r, n/4, run1)
	stopAt := time.Now()
	c.StopApp(t, a.Name)
	stopTook := time.Since(stopAt)
	code, out := run1.wait(t)
	exited := time.Since(stopAt)
	t.Logf("the first run lasted %s; the destination gained nothing for %s at most", time.Since(run1.start).Round(time.Millisecond),
		(<-stalls).Round(100*time.Millisecond))
	leader := newLeader(c, r.DLQ, a.Name)
	t.Logf("stop_app %s took %s; the replay exited %d %s after it began; the DLQ's leader is now %s",
		a.Name, stopTook.Round(time.Millisecond), code, exited.Round(time.Millisecond), leader)
	if leader == a.Name || leader == "" {
		t.Fatalf("the DLQ's leader did not move off the stopped node: %q", leader)
	}
	// In doubt: published, not confirmed. Confirmed publishes whose DLQ
	// ack the lost connection may not have delivered (AckUnknown) are at
	// the destination; a resume acks their DLQ copies if they are there.
	st := readState(t, jpath)
	done, doubt := st.Count(journal.OutcomeDone), st.Count(journal.OutcomeDoubt)
	dest, left := settledCounts(t, r, n)
	t.Logf("after the stop: journal %d done (%d of their DLQ acks unknown), %d in doubt; %d at the destination, %d in the DLQ",
		done, st.AckUnknown(), doubt, dest, left)
	if doubt > clusterWindow {
		t.Errorf("%d in doubt: more than the %d a window can hold unconfirmed", doubt, clusterWindow)
	}
	if dest < done || dest > done+doubt {
		t.Errorf("%d at the destination: want between the %d confirmed and those plus the %d in doubt", dest, done, doubt)
	}
	if dest+left < n {
		t.Fatalf("%d lost after the stop: %d at the destination + %d in the DLQ < %d", n-dest-left, dest, left, n)
	}
	doubts := doubt
	resumes := 0
	for code != 0 {
		if code != 3 {
			t.Fatalf("the replay exited %d:\n%s", code, out)
		}
		if resumes++; resumes > 3 {
			t.Fatalf("still not done after %d resumes:\n%s", resumes-1, out)
		}
		begin := time.Now()
		resumed := startReplay(t, bin, []string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--window", strconv.Itoa(clusterWindow),
			"--resume", jpath, "--retry-in-doubt", "--amqp-url", url, "--drain-grace", "10s"})
		// Once the resumed run consumes (through another node: this one
		// is still stopped), the stopped node comes back under it.
		restarted := make(chan struct{})
		if resumes == 1 && waitConsumer(r, resumed) {
			t.Logf("the resumed run consumes %s after it started, with %s stopped", time.Since(begin).Round(time.Millisecond), a.Name)
			go func() { defer close(restarted); c.StartApp(t, a.Name) }()
		} else {
			close(restarted)
		}
		code, out = resumed.wait(t)
		<-restarted
		t.Logf("resume %d exited %d after %s", resumes, code, time.Since(begin).Round(time.Millisecond))
	}
	// A retried publish supersedes the one in doubt: what is still in
	// doubt at the end came from the resumes.
	doubts += readState(t, jpath).Count(journal.OutcomeDoubt)
	if resumes == 0 {
		c.StartApp(t, a.Name)
	}
	lost, dups, inDLQ := tally(t, r, n)
	t.Logf("FIGURES %s: %d messages, lost %d, in doubt %d (after the stop %d), duplicates %d, left in the DLQ %d, resumes %d, total %s",
		t.Name(), n, lost, doubts, doubt, dups, inDLQ, resumes, time.Since(start).Round(time.Millisecond))
	if lost != 0 || inDLQ != 0 {
		t.Fatalf("%d lost, %d left in the DLQ", lost, inDLQ)
	}
	if dups > doubts {
		t.Fatalf("%d duplicates at the destination, more than the %d the journal held in doubt", dups, doubts)
	}
}

type replayRun struct {
	start time.Time
	cmd   *exec.Cmd
	out   *bytes.Buffer
	done  chan struct{} // closed when it exited, err set
	err   error
}

func startReplay(t *testing.T, bin string, args []string) *replayRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	r := &replayRun{start: time.Now(), cmd: cmd, out: &out, done: make(chan struct{})}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	return r
}

// wait waits for the run (at most two minutes) and returns its exit code
// and output.
func (r *replayRun) wait(t *testing.T) (int, string) {
	t.Helper()
	select {
	case <-r.done:
		err := r.err
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, r.out.String()
		case errors.As(err, &ee):
			return ee.ExitCode(), r.out.String()
		}
		t.Fatal(err)
	case <-time.After(2 * time.Minute):
		_ = r.cmd.Process.Kill()
		t.Fatalf("the replay did not end:\n%s", r.out.String())
	}
	return 0, ""
}

// watchProgress samples the destination's depth every 100 ms until the
// run ends, on a connection of its own, and sends the longest time it did
// not grow: the pause while the quorum leaders moved.
func watchProgress(t *testing.T, url, queue string, run *replayRun) <-chan time.Duration {
	t.Helper()
	conn, err := amqp.Dial(url)
	must(t, err)
	ch, err := conn.Channel()
	must(t, err)
	out := make(chan time.Duration, 1)
	go func() {
		defer conn.Close()
		var longest time.Duration
		last, since := -1, time.Now()
		for {
			select {
			case <-run.done:
				out <- longest
				return
			case <-time.After(100 * time.Millisecond):
			}
			// A declare that fails (the queue has no leader yet) closes
			// the channel: open another, and count the time as none gained.
			q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
			if err == nil && q.Messages != last {
				last, since = q.Messages, time.Now()
			}
			if err != nil {
				if c, err := conn.Channel(); err == nil {
					ch = c
				}
			}
			longest = max(longest, time.Since(since))
		}
	}()
	return out
}

// newLeader waits (at most 30 s) for queue to have a leader other than
// old, and returns it ("" when none came).
func newLeader(c *testenv.RabbitCluster, queue, old string) string {
	for range 60 {
		if l, err := c.Leader(queue); err == nil && l != "" && l != old {
			return l
		}
		time.Sleep(500 * time.Millisecond)
	}
	return ""
}

// waitConsumer waits until the DLQ has a consumer, or the run ended.
func waitConsumer(r *dlqtest.Rig, run *replayRun) bool {
	for range 600 {
		if q, err := r.Ch.QueueDeclarePassive(r.DLQ, true, false, false, false, nil); err == nil && q.Consumers > 0 {
			return true
		}
		select {
		case <-run.done:
			return false
		default:
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func waitAtDestination(t *testing.T, r *dlqtest.Rig, n int, run *replayRun) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for r.Count(r.Work) < n {
		select {
		case <-run.done:
			t.Fatalf("the replay ended (%v) before %d reached the destination:\n%s", run.err, n, run.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d at the destination after a minute, want %d", r.Count(r.Work), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settledCounts waits until the messages the lost consumer held are back
// in the DLQ (the counts stop moving) and returns destination and DLQ.
func settledCounts(t *testing.T, r *dlqtest.Rig, n int) (dest, left int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	prev := -1
	for {
		dest, left = r.Count(r.Work), r.Count(r.DLQ)
		if dest+left >= n && dest+left == prev || time.Now().After(deadline) {
			return dest, left
		}
		prev = dest + left
		time.Sleep(500 * time.Millisecond)
	}
}

func readState(t *testing.T, path string) *journal.State {
	t.Helper()
	st, err := journal.Read(mustOpen(t, path))
	must(t, err)
	return st
}

// tally drains the destination and the DLQ: the ids missing from both, the
// extra copies at the destination, and what the DLQ held.
func tally(t *testing.T, r *dlqtest.Rig, n int) (lost, dups, inDLQ int) {
	t.Helper()
	seen := map[string]int{}
	for _, d := range r.DrainAll(r.Work) {
		seen[d.MessageId]++
	}
	left := r.DrainAll(r.DLQ)
	for _, d := range left {
		seen[d.MessageId]++
	}
	for _, m := range dlqtest.Jobs(n) {
		switch k := seen[m.MessageId]; {
		case k == 0:
			lost++
		case k > 1:
			dups += k - 1
		}
	}
	return lost, dups, len(left)
}
