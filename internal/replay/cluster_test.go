package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestRabbitClusterReplayLeaderKilled replays a quorum DLQ into a quorum
// work queue on the 3-node cluster, dupctl's URL naming every node with
// a, the leader of both queues, first (so both its connections are on
// a), and SIGKILLs a mid-run (issue 39: a crash, where a stop had hidden
// what a killed node leaves - its consumers still counted, the quorum
// queue answering 0 for a DLQ without its leader).
//
//   - failover: the run goes on through another node in the same process
//     and to its end: it counts the DLQ only once it shows what it must
//     hold, says it reached its count only when the DLQ's depth confirms
//     it, and exits 0, or 1 for messages in doubt - never 0 with messages
//     it did not read (exit 3 and DLQ_REPLAY_UNREAD then). The DLQ mixes
//     4,000 distinct jobs and 1,000 identical copies, and the run reads its
//     destination (--check-destination): what it leaves in doubt is at
//     most twice the copies really both at the destination and in the DLQ.
//   - dupctl-killed: 5,000 distinct jobs; dupctl itself is SIGKILLed once
//     the part after the failover has published 300; a comes back, and a
//     --resume --check-destination completes the run.
//
// Either way nothing is lost (every message at the destination or in the
// DLQ) and every duplicate at the destination was reported in doubt. The
// figures go to the log (docs/benchmarks.md).
func TestRabbitClusterReplayLeaderKilled(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	bin := buildDupctl(t)
	t.Run("failover", func(t *testing.T) { leaderKilled(t, c, bin, false, 1000) })
	t.Run("dupctl-killed", func(t *testing.T) { leaderKilled(t, c, bin, true, 0) })
}

// TestRabbitClusterReplayLeaderStopped: dupctl's URL names the two nodes
// other than a, and a, the leader of both queues, is stopped and
// restarted: the leaders move under the run's connections, which it never
// loses (no failover). Exit 0 with every message once - or, as seen once
// in three runs, acks the leader change dropped (88 of 4,000): those
// copies are back in the DLQ and at the destination, and the run must
// count each as ack lost and exit 1 (before, it exited 0 saying it left
// nothing).
func TestRabbitClusterReplayLeaderStopped(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	bin := buildDupctl(t)
	b, other := c.Nodes[1], c.Nodes[2]
	leaderStopped(t, c, bin, "amqp://guest:guest@"+b.Addr+","+other.Addr+"/")
}

const clusterWindow = 200

// clusterJobs are the DLQ of the killed-leader cases: distinct jobs, then
// identical copies (one content, no message id).
func clusterJobs(distinct, identical int) []amqp.Publishing {
	out := dlqtest.Jobs(distinct)
	for range identical {
		out = append(out, amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-exception-message": "gateway timeout"}, Body: []byte(`{"orderId":"same"}`)})
	}
	return out
}

// leaderKilled is one case of TestRabbitClusterReplayLeaderKilled. A
// process killed without its end record leaves no bound on the acks it
// lost, so after one identical copies found again are all held in doubt:
// the dupctl-killed case replays distinct jobs only.
func leaderKilled(t *testing.T, c *testenv.RabbitCluster, bin string, killDupctl bool, identical int) {
	a, observer := c.Nodes[0], c.Nodes[2]
	r := dlqtest.NewRigAt(t, a.URL, "quorum")
	for _, q := range []string{r.DLQ, r.Work} {
		if l, err := c.Leader(q); err != nil || l != a.Name {
			t.Fatalf("queue %s is led by %q (%v), want %s: declared through it", q, l, err, a.Name)
		}
	}
	distinct := 5000 - identical
	n := distinct + identical
	start := time.Now()
	r.DeadLetter(clusterJobs(distinct, identical))
	r.Use(observer.URL) // counts and drains through a node that stays up
	jpath := filepath.Join(t.TempDir(), "replay.journal")
	run1 := startReplay(t, bin, []string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--window", strconv.Itoa(clusterWindow),
		"--rate", "1000", "--journal", jpath, "--amqp-url", c.URL, "--drain-grace", "10s", "--check-destination", "-o", "json"})
	waitAtDestination(t, r, n/8, run1)
	killAt := time.Now()
	c.Kill(t, a.Name)
	if killDupctl {
		// Once the part after the failover has published 300.
		waitJournal(t, jpath, run1, func(starts, pubsSince int) bool { return starts >= 2 && pubsSince >= 300 })
		must(t, run1.cmd.Process.Kill())
	}
	code, out := run1.wait(t)
	t.Logf("the first run exited %d %s after the kill", code, time.Since(killAt).Round(time.Millisecond))
	must(t, c.Restart(t, a.Name))
	doubt := 0
	if killDupctl {
		resumed := startReplay(t, bin, []string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--window", strconv.Itoa(clusterWindow),
			"--resume", jpath, "--check-destination", "--amqp-url", c.URL, "--drain-grace", "10s", "-o", "json"})
		code, out = resumed.wait(t)
		sum := replaySummary(t, resumed, out)
		t.Logf("the resume exited %d: %+v; destination checks %+v", code, sum.Counts, sum.DestinationChecks)
		doubt = checkEnd(t, code, out, sum, false, a.Addr)
	} else {
		sum := replaySummary(t, run1, out)
		doubt = checkEnd(t, code, out, sum, true, a.Addr)
	}
	lost, dups, inDLQ := tallyMixed(t, r, distinct, identical)
	t.Logf("FIGURES %s: %d messages (%d identical), lost %d, in doubt %d, duplicates %d, left in the DLQ %d, total %s",
		t.Name(), n, identical, lost, doubt, dups, inDLQ, time.Since(start).Round(time.Millisecond))
	if lost != 0 || inDLQ != doubt {
		t.Fatalf("%d lost, %d left in the DLQ (want the %d in doubt)", lost, inDLQ, doubt)
	}
	if dups > doubt || doubt > 2*dups {
		t.Fatalf("%d duplicates at the destination, %d reported in doubt: want every duplicate in doubt, and at most twice as many "+
			"in doubt as there are", dups, doubt)
	}
}

// checkEnd checks how a run that ends after the kill ended: exit 0 or 1,
// every message read accounted for, nothing it did not read (no
// DLQ_REPLAY_UNREAD), and with failover, the failover from the killed node.
// It returns what it left in doubt.
func checkEnd(t *testing.T, code int, out string, sum *ReplayResult, failover bool, lost string) int {
	t.Helper()
	c := sum.Counts
	if got := c.Replayed + c.Parked + c.AlreadyDone + c.Left(); got != c.Read {
		t.Errorf("the summary accounts for %d of the %d messages read: %+v", got, c.Read, c)
	}
	if code != 0 && code != 1 || c.Unaccounted != 0 || sum.EndUnchecked != "" || sum.StoppedBy != "count at start reached" {
		t.Fatalf("exit %d, unaccounted %d (%q), stopped by %q: want 0, or 1 for messages in doubt, with the DLQ's depth "+
			"confirming the count\n%s", code, c.Unaccounted, sum.EndUnchecked, sum.StoppedBy, out)
	}
	if failover {
		if len(sum.Failovers) == 0 || sum.Lost != "" {
			t.Fatalf("no failover in the summary (connection lost: %q):\n%s", sum.Lost, out)
		}
		ev := sum.Failovers[0]
		t.Logf("failover: %+v; at the end %+v, must hold %d", ev, sum.AtEnd, sum.MustHold)
		if ev.Lost != lost || ev.TookOver == "" || ev.TookOver == lost || ev.GaveUp != "" || ev.Counted < ev.MustHold {
			t.Fatalf("failover %+v: want %s lost, another node taking over, counting what the DLQ held", ev, lost)
		}
	}
	return c.InDoubt + c.InDoubtEarlier
}

// waitJournal waits (at most two minutes, while the run lasts) until the
// journal's start records and the publishes journaled since the last one
// satisfy ok.
func waitJournal(t *testing.T, path string, run *replayRun, ok func(starts, pubsSince int) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(path)
		starts := bytes.Count(b, []byte(`{"t":"start"`))
		last := bytes.LastIndex(b, []byte(`{"t":"start"`))
		pubs := 0
		if last >= 0 {
			pubs = bytes.Count(b[last:], []byte(`{"t":"pub"`))
		}
		if ok(starts, pubs) {
			return
		}
		select {
		case <-run.done:
			t.Fatalf("the run ended before the journal showed what the test waits for (%d parts, %d publishes in the last):\n%s",
				starts, pubs, run.out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the journal showed %d parts, %d publishes in the last, after two minutes", starts, pubs)
		}
	}
}

// tallyMixed drains the destination and the DLQ of a clusterJobs rig: the
// copies missing from both, the extra copies at the destination, and what
// the DLQ held (identical copies count by number: they are interchangeable).
func tallyMixed(t *testing.T, r *dlqtest.Rig, distinct, identical int) (lost, dups, inDLQ int) {
	t.Helper()
	seen := map[string]int{}
	atDest := map[string]int{}
	for _, d := range r.DrainAll(r.Work) {
		seen[d.MessageId]++
		atDest[d.MessageId]++
	}
	left := r.DrainAll(r.DLQ)
	for _, d := range left {
		seen[d.MessageId]++
	}
	want := map[string]int{"": identical}
	for _, m := range dlqtest.Jobs(distinct) {
		want[m.MessageId] = 1
	}
	for id, w := range want {
		switch k := seen[id]; {
		case k < w:
			lost += w - k
		case k > w:
			dups += k - w
		}
	}
	return lost, dups, len(left)
}

func leaderStopped(t *testing.T, c *testenv.RabbitCluster, bin, url string) {
	a, observer := c.Nodes[0], c.Nodes[2]
	r := dlqtest.NewRigAt(t, a.URL, "quorum")
	for _, q := range []string{r.DLQ, r.Work} {
		if l, err := c.Leader(q); err != nil || l != a.Name {
			t.Fatalf("queue %s is led by %q (%v), want %s: declared through it", q, l, err, a.Name)
		}
	}
	const n = 4000
	start := time.Now()
	r.DeadLetter(dlqtest.Jobs(n))
	t.Logf("%d messages dead-lettered into the quorum DLQ in %s", n, time.Since(start).Round(time.Millisecond))
	r.Use(observer.URL) // counts and drains through a node that stays up

	jpath := filepath.Join(t.TempDir(), "replay.journal")
	args := []string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--window", strconv.Itoa(clusterWindow), "--rate", "1000",
		"--journal", jpath, "--amqp-url", url, "--drain-grace", "10s", "-o", "json"}
	run1 := startReplay(t, bin, args)
	stalls := watchProgress(t, observer.URL, r.Work, run1)
	waitAtDestination(t, r, n/4, run1)
	stopAt := time.Now()
	c.StopApp(t, a.Name)
	stopTook := time.Since(stopAt)
	// Once the destination grows again (the run went on through another
	// node), the stopped node comes back under it.
	restarted := make(chan bool, 1)
	go func() { restarted <- growsAgain(observer.URL, r.Work, run1) && startApp(t, c, a.Name) }()
	code, out := run1.wait(t)
	exited := time.Since(stopAt)
	back := <-restarted
	t.Logf("the run lasted %s; the destination gained nothing for %s at most", time.Since(run1.start).Round(time.Millisecond),
		(<-stalls).Round(100*time.Millisecond))
	leader := newLeader(c, r.DLQ, a.Name)
	t.Logf("stop_app %s took %s; the replay exited %d %s after it began (the node restarted under it: %v); the DLQ's leader is %s",
		a.Name, stopTook.Round(time.Millisecond), code, exited.Round(time.Millisecond), back, leader)
	sum := replaySummary(t, run1, out)
	c1 := sum.Counts
	if got := c1.Replayed + c1.Parked + c1.AlreadyDone + c1.Left(); got != c1.Read {
		t.Errorf("the summary accounts for %d of the %d messages read: %+v", got, c1.Read, c1)
	}
	// The leader moving under the consumer's channel was seen to drop 88
	// of its acks: those copies are back in the DLQ (and at the
	// destination), which the run must count and fail on (exit 1).
	if len(sum.Failovers) != 0 || code != 0 && (code != 1 || c1.AckLost == 0) {
		t.Fatalf("no node of the URL was stopped, yet: exit %d, failovers %+v, ack lost %d\n%s", code, sum.Failovers, c1.AckLost, out)
	}
	if !back {
		startApp(t, c, a.Name)
	}
	lost, dups, inDLQ := tally(t, r, n)
	t.Logf("FIGURES %s: %d messages, lost %d, duplicates %d, left in the DLQ %d (ack lost %d), run %s, total %s", t.Name(), n, lost,
		dups, inDLQ, c1.AckLost, (time.Duration(sum.ElapsedMs) * time.Millisecond).Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))
	if lost != 0 || inDLQ != c1.AckLost || dups != c1.AckLost {
		t.Fatalf("%d lost, %d duplicates, %d left in the DLQ: want 0 lost and every copy left counted as ack lost (%d)", lost, dups,
			inDLQ, c1.AckLost)
	}
}

// TestRabbitClusterReplayClassicNodeStopped replays a classic DLQ that
// lives on node a, through a URL naming every node (a first), and stops a
// mid-run. No other node can serve the DLQ until a is back (they answer
// "home node ... is down or inaccessible"), so the run gives up at once,
// as the reads do (dlqread's TestRabbitClusterReadsNodeStopped,
// classic-on-a): exit 3, the failover's gave_up saying the queue lives on
// the lost node, DLQ_REPLAY_CONNECTION_LOST, and nothing lost.
// --failover-wait is 120 s and the run must end within 60 s of the stop:
// one that waited for another node to answer for the DLQ is killed and
// the test fails. The figures go to the log.
func TestRabbitClusterReplayClassicNodeStopped(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	bin := buildDupctl(t)
	a, observer := c.Nodes[0], c.Nodes[2]
	r := dlqtest.NewRigAt(t, a.URL, "classic")
	const n = 8000
	r.DeadLetter(dlqtest.Jobs(n))
	r.Use(observer.URL) // counts and drains through a node that stays up
	// A DLQ on b whose replay goes to r's work queue, on a.
	rb := dlqtest.NewRigAt(t, c.Nodes[1].URL, "classic")
	rb.DeadLetter(dlqtest.Jobs(50))
	jpath := filepath.Join(t.TempDir(), "replay.journal")
	args := []string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--window", strconv.Itoa(clusterWindow), "--rate", "500",
		"--journal", jpath, "--amqp-url", c.URL, "--failover-wait", "120s", "--drain-grace", "10s", "-o", "json"}
	run := startReplay(t, bin, args)
	waitAtDestination(t, r, n/16, run)
	stopAt := time.Now()
	ctx, cancel := context.WithTimeoutCause(context.Background(), 60*time.Second,
		errors.New("60 s after the stop began, with --failover-wait 120s: it waited for another node to answer for the DLQ"))
	defer cancel()
	c.StopApp(t, a.Name)
	stopTook := time.Since(stopAt)
	code, out := run.waitCtx(t, ctx)
	took := time.Since(stopAt)
	sum := replaySummary(t, run, out)
	t.Logf("FIGURES %s: stop_app took %s; the replay exited %d %s after it began; read %d, replayed %d, failovers %+v",
		t.Name(), stopTook.Round(time.Millisecond), code, took.Round(time.Millisecond), sum.Counts.Read, sum.Counts.Replayed,
		sum.Failovers)
	for _, ev := range sum.Failovers {
		t.Logf("FIGURES %s: the run ended %d ms after it lost %s", t.Name(), sum.ElapsedMs-ev.AtMs, ev.Lost)
	}
	if code != 3 || sum.Lost == "" {
		t.Fatalf("exit %d, connection lost %q: want exit 3 for the lost connection\n%s", code, sum.Lost, out)
	}
	if len(sum.Failovers) != 1 {
		t.Fatalf("failovers %+v, want the one given up", sum.Failovers)
	}
	ev := sum.Failovers[0]
	const why = "the queue lives on the lost node, and no other node can serve it until that node is back"
	if ev.Lost != a.Addr || ev.TookOver != "" || !strings.Contains(ev.GaveUp, why) || !strings.Contains(ev.GaveUp, "down or inaccessible") {
		t.Errorf("failover %+v: want %s lost, no node taking over, given up because %s (the broker's answer)", ev, a.Addr, why)
	}
	if !strings.Contains(out, "DLQ_REPLAY_CONNECTION_LOST") || !strings.Contains(out, "no failover ("+why) {
		t.Errorf("no DLQ_REPLAY_CONNECTION_LOST, or the error does not say why it did not fail over:\n%s", out)
	}
	if got := sum.Counts.Replayed + sum.Counts.Parked + sum.Counts.AlreadyDone + sum.Counts.Left(); got != sum.Counts.Read {
		t.Errorf("the summary accounts for %d of the %d messages read: %+v", got, sum.Counts.Read, sum.Counts)
	}
	downAtStart(t, c, bin, r, rb, jpath)
	startApp(t, c, a.Name)
	lost, dups, inDLQ := tally(t, r, n)
	t.Logf("after a is back: lost %d, at the destination and in the DLQ both %d, in the DLQ %d", lost, dups, inDLQ)
	if lost != 0 {
		t.Fatalf("%d messages lost: in neither the destination nor the DLQ", lost)
	}
}

// downAtStart runs dlq commands while node a, home of r's queues, is
// down. The --resume the replay's error asks for, and a stats, say the
// DLQ's node is down (exit 3), not that the queue does not exist; a replay
// of rb's DLQ (on b) into r's work queue stops before publishing anything,
// as for a missing destination (exit 2), naming the broker's answer.
func downAtStart(t *testing.T, c *testenv.RabbitCluster, bin string, r, rb *dlqtest.Rig, jpath string) {
	t.Helper()
	for _, tc := range []struct {
		name string
		code int
		args []string
		want []string
	}{
		{"resume", 3, []string{"dlq", "replay", "--queue", r.DLQ, "--yes", "--resume", jpath}, []string{"is down or inaccessible"}},
		{"stats", 3, []string{"dlq", "stats", "--queue", r.DLQ}, []string{"is down or inaccessible"}},
		{"destination", 2, []string{"dlq", "replay", "--queue", rb.DLQ, "--to", ":" + r.Work, "--yes", "--journal",
			filepath.Join(t.TempDir(), "to-a.journal")}, []string{
			// The message's evidence, and the error.
			"not published: queue " + r.Work + " (default exchange) is unavailable (NOT_FOUND - home node",
			"is down or inaccessible): nothing was published to it"}},
	} {
		code, out := startReplay(t, bin, append(tc.args, "--amqp-url", c.URL)).wait(t)
		t.Logf("%s with a down: exit %d: %s", tc.name, code, strings.TrimSpace(out))
		if code != tc.code || strings.Contains(out, "not found") || strings.Contains(out, r.Work+" (default exchange) does not exist") {
			t.Errorf("%s with a down: exit %d, want %d, and not that the queue was not found or does not exist:\n%s", tc.name, code, tc.code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s with a down: the output does not say %q", tc.name, w)
			}
		}
	}
	if left := rb.Count(rb.DLQ); left != 50 {
		t.Errorf("%d in the DLQ on b after a replay into a queue on the down node, want all 50", left)
	}
}

// replaySummary is the -o json summary a run printed.
func replaySummary(t *testing.T, run *replayRun, out string) *ReplayResult {
	t.Helper()
	var doc struct {
		Data ReplayResult `json:"data"`
	}
	if err := json.Unmarshal(run.stdout.Bytes(), &doc); err != nil {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	return &doc.Data
}

// growsAgain waits (while the run goes on) until the destination holds
// more messages than when it was first read here: the run publishes again.
func growsAgain(url, queue string, run *replayRun) bool {
	conn, err := amqp.Dial(url)
	if err != nil {
		return false
	}
	defer conn.Close()
	base := -1
	for {
		select {
		case <-run.done:
			return false
		case <-time.After(100 * time.Millisecond):
		}
		ch, err := conn.Channel()
		if err != nil {
			return false
		}
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		ch.Close()
		switch {
		case err != nil:
		case base < 0:
			base = q.Messages
		case q.Messages > base+2*clusterWindow:
			return true
		}
	}
}

// startApp starts a stopped node again and waits for it (safe to call from
// another goroutine: it reports, never stops the test).
func startApp(t *testing.T, c *testenv.RabbitCluster, node string) bool {
	for _, args := range [][]string{{"start_app"}, {"await_startup", "--timeout", "120"}} {
		if _, err := c.Ctl(node, args...); err != nil {
			t.Errorf("restart %s: %v", node, err)
			return false
		}
	}
	return true
}

type replayRun struct {
	start  time.Time
	cmd    *exec.Cmd
	out    *bytes.Buffer // stdout and stderr
	stdout *bytes.Buffer
	done   chan struct{} // closed when it exited, err set
	err    error
}

func startReplay(t *testing.T, bin string, args []string) *replayRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out, stdout bytes.Buffer
	both := &lockedWriter{w: &out}
	cmd.Stdout, cmd.Stderr = io.MultiWriter(both, &stdout), both
	must(t, cmd.Start())
	r := &replayRun{start: time.Now(), cmd: cmd, out: &out, stdout: &stdout, done: make(chan struct{})}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	return r
}

// lockedWriter lets stdout's and stderr's copiers share one buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// wait waits for the run (at most two minutes) and returns its exit code
// and output.
func (r *replayRun) wait(t *testing.T) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return r.waitCtx(t, ctx)
}

// waitCtx waits for the run until ctx ends, then kills it and fails the
// test.
func (r *replayRun) waitCtx(t *testing.T, ctx context.Context) (int, string) {
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
	case <-ctx.Done():
		_ = r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("the replay did not end (%v):\n%s", context.Cause(ctx), r.out.String())
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
