package dlqread

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/testenv"
)

// TestRabbitClusterReadsNodeStopped runs `dupctl dlq stats` and `export`
// on the 3-node cluster with --amqp-url naming every node, the one they
// connect to (a) first, and loses a once the read has taken about a
// quarter of the DLQ - three faults, each chosen for what only it shows:
//
//   - quorum-stats-killed: the DLQ's leader is a, and a is SIGKILLed (a
//     crash, issue 39). stats fails over and counts every message once
//     (exit 0), or - when the killed reader's cancelled consumers keep
//     the messages they had taken, as RabbitMQ 3.10 does until the
//     queue's leader changes - says its count is not trusted, naming both
//     counts (exit 3); never exit 0 with a count short of the queue's.
//   - quorum-export-stopped: a is stopped (rabbitmqctl stop_app: its
//     listener and connections close) and b and c elect another leader.
//     export fails over and renames its file with every message once.
//   - classic-on-a-export-stopped: the DLQ lives on a, so no other node
//     can serve it until a is back: exit 3 and DLQ_READ_CONNECTION_LOST
//     naming the messages not read; the file keeps its .partial name,
//     each record in it once.
//
// Nothing is removed either way (the DLQ holds every message again once a
// is back and, after a kill, the queue's leader moved). The figures (time
// from the loss to the exit, counts) go to the log for docs/benchmarks.md.
// (Before issue 39 this ran the three commands on three queues, 9 stops:
// peek takes the path export does, and a classic queue on b the one a
// quorum queue does.)
func TestRabbitClusterReadsNodeStopped(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	bin := buildDupctl(t)
	for _, tc := range []struct {
		name, queueType, cmd string
		kill, failover       bool
	}{
		{"quorum-stats-killed", "quorum", "stats", true, true},
		{"quorum-export-stopped", "quorum", "export", false, true},
		{"classic-on-a-export-stopped", "classic", "export", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dlqtest.NewRigAt(t, c.Nodes[0].URL, tc.queueType)
			start := time.Now()
			r.DeadLetter(dlqtest.Jobs(clusterDLQ))
			t.Logf("%d dead letters in the %s DLQ in %s", clusterDLQ, tc.queueType, time.Since(start).Round(time.Millisecond))
			r.Use(c.Nodes[2].URL) // counts through a node that stays up
			nodeStopped(t, c, bin, r, tc.cmd, tc.failover, tc.kill)
		})
	}
}

// clusterDLQ is how many dead letters each case reads; clusterPeek how
// many the peek asks for. With a window of 20 the read takes a few
// seconds, long enough to stop a node under it.
const (
	clusterDLQ    = 12000
	clusterPeek   = 6000
	clusterWindow = "20"
)

// readRun is one dupctl command run by a cluster test.
type readRun struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	ended  time.Time
	code   int
}

func startRead(t *testing.T, bin string, args ...string) *readRun {
	t.Helper()
	r := &readRun{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), "NO_COLOR=1")
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		r.ended = time.Now()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
		case err != nil:
			r.code = -1
		}
		close(r.done)
	}()
	return r
}

func (r *readRun) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(3 * time.Minute):
		_ = r.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines' stacks: where it hangs
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		t.Fatalf("dupctl did not end:\n%s", r.stderr.String())
	}
}

// readDoc is the -o json output of a read verb: its findings, and of its
// data what the three verbs share plus each one's own.
type readDoc struct {
	Findings []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"findings"`
	Data struct {
		Read     Result            `json:"read"`
		Messages json.RawMessage   `json:"messages"` // stats: a count; peek: the messages
		Written  int               `json:"written"`
		Groups   []json.RawMessage `json:"groups"`
	} `json:"data"`
}

func (d *readDoc) finding(code string) string {
	for _, f := range d.Findings {
		if f.Code == code {
			return f.Message
		}
	}
	return ""
}

func nodeStopped(t *testing.T, c *testenv.RabbitCluster, bin string, r *dlqtest.Rig, cmd string, failover, kill bool) {
	a := c.Nodes[0]
	out := filepath.Join(t.TempDir(), "dlq.jsonl")
	args := []string{"dlq", cmd, "--queue", r.DLQ, "--amqp-url", c.URL, "-o", "json"}
	switch cmd {
	case "peek":
		args = append(args, "-n", strconv.Itoa(clusterPeek))
	case "export":
		args = append(args, "--out", out, "--window", clusterWindow)
	default:
		args = append(args, "--window", clusterWindow)
	}
	target := clusterDLQ
	if cmd == "peek" {
		target = clusterPeek
	}
	run := startRead(t, bin, args...)
	// The read holds what it took: the DLQ's ready count falls as it reads.
	until := clusterDLQ - target/4
	if cmd == "peek" {
		until = clusterDLQ - 50 // its window is its count: the broker sends them at once
	}
	for r.Count(r.DLQ) > until {
		select {
		case <-run.done:
			t.Fatalf("dupctl ended (exit %d) before it read a quarter of the DLQ:\n%s", run.code, run.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	var down time.Time
	var stopped <-chan time.Duration
	if kill {
		down, stopped = killUnder(t, c, a, run)
	} else {
		down, stopped = stopUnder(t, c, a, run)
	}
	run.wait(t)
	took := run.ended.Sub(down)
	stopTook := <-stopped
	if kill {
		dlqtest.Must(t, c.Restart(t, a.Name))
		// What the killed reader's cancelled consumers held comes back
		// only with another leader (RabbitMQ 3.10): the failover may
		// already have elected b, so move it to whichever is not leading.
		dlqtest.Must(t, c.ChangeLeader(r.DLQ, c.Nodes[1].Name, c.Nodes[2].Name))
	} else {
		c.StartApp(t, a.Name)
	}
	var doc readDoc
	if err := json.Unmarshal(run.stdout.Bytes(), &doc); err != nil {
		t.Fatalf("exit %d, output: %v\n%s\n%s", run.code, err, run.stdout.String(), run.stderr.String())
	}
	ids, dups := readIDs(t, cmd, &doc, out)
	left := settledCount(r)
	t.Logf("FIGURES %s: exit %d %s after node a was lost (the stop or kill took %s); read %d of %d (failovers %d, lost %q); "+
		"distinct ids %d, duplicated %d, missing %d (repeats %d, before a read once more %d); DLQ holds %d after",
		t.Name(), run.code, took.Round(time.Millisecond), stopTook.Round(time.Millisecond), doc.Data.Read.Read, doc.Data.Read.Target,
		len(doc.Data.Read.Failovers), doc.Data.Read.Lost, len(ids), dups, target-len(ids), doc.Data.Read.Repeats,
		doc.Data.Read.RereadRepeats, left)
	for _, l := range doc.Data.Read.Failovers {
		t.Logf("failover: %+v", l)
	}
	t.Logf("stderr: %s", strings.TrimSpace(run.stderr.String()))
	if left != clusterDLQ {
		t.Errorf("the DLQ holds %d after the read, want %d: a read removes nothing", left, clusterDLQ)
	}
	if dups > 0 {
		t.Errorf("%d messages twice in the output", dups)
	}
	switch {
	case failover && run.code == 3 && doc.Data.Read.Repeats > 0:
		checkRepeats(t, cmd, &doc, len(ids), out)
	case failover && run.code == 3 && doc.Data.Read.Untrusted():
		checkUntrusted(t, run, &doc)
	case failover:
		checkFailedOver(t, cmd, run, &doc, len(ids), target, out, a.Addr)
	default:
		checkLost(t, cmd, run, &doc, len(ids), target, out)
	}
}

// checkUntrusted: the read again through another node showed fewer
// messages than the queue held before the loss for the whole failover
// wait (after a kill, the lost reader's cancelled consumers keep theirs):
// exit 3, the error and the finding naming both counts.
func checkUntrusted(t *testing.T, run *readRun, doc *readDoc) {
	t.Helper()
	r := doc.Data.Read
	t.Logf("UNTRUSTED %s: the queue held %d before the loss, %d after it", t.Name(), r.CountBefore, r.AtStart.Messages)
	for _, want := range []string{"count not trusted", fmt.Sprintf("held %d", r.CountBefore), fmt.Sprintf("only %d", r.AtStart.Messages)} {
		if !strings.Contains(run.stderr.String(), want) {
			t.Errorf("the error does not say %q:\n%s", want, run.stderr.String())
		}
	}
	if r.CountBefore != clusterDLQ || !strings.Contains(doc.finding("DLQ_READ_INCOMPLETE"), "not trusted") {
		t.Errorf("count before the loss %d (want %d), DLQ_READ_INCOMPLETE %q", r.CountBefore, clusterDLQ, doc.finding("DLQ_READ_INCOMPLETE"))
	}
}

// checkRepeats: the read again through another node was given messages
// twice (a quorum queue right after its leader's node stopped, RabbitMQ
// 3.10.8) even when read once more: the command shows each message once,
// says how many were not read, exits 3, and an export is not renamed.
func checkRepeats(t *testing.T, cmd string, doc *readDoc, ids int, out string) {
	t.Helper()
	r := doc.Data.Read
	t.Logf("REPEATS %s: %d messages came twice in the read again (%d in the read before it); %d shown once", t.Name(), r.Repeats,
		r.RereadRepeats, ids)
	if !strings.Contains(doc.finding("DLQ_READ_INCOMPLETE"), "came twice") || r.RereadRepeats == 0 {
		t.Errorf("no DLQ_READ_INCOMPLETE saying messages came twice, or no read once more: %+v", doc.Findings)
	}
	if cmd != "stats" && ids != r.Read-r.Repeats {
		t.Errorf("%d distinct messages in the output, want the %d read less the %d repeats", ids, r.Read, r.Repeats)
	}
	if _, err := os.Stat(out); cmd == "export" && err == nil {
		t.Errorf("an export short of %d messages was renamed %s", r.Repeats, out)
	}
}

// checkFailedOver: the command went on through another node and read
// everything it meant to, each message once.
func checkFailedOver(t *testing.T, cmd string, run *readRun, doc *readDoc, ids, target int, out, lost string) {
	t.Helper()
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 after a failover:\n%s", run.code, run.stderr.String())
	}
	fo := doc.Data.Read.Failovers
	if len(fo) == 0 || fo[0].Lost != lost || !tookOverInTurn(fo) || doc.finding("DLQ_READ_FAILOVER") == "" {
		t.Errorf("failovers %+v, want %s lost and another node taking over (DLQ_READ_FAILOVER)", fo, lost)
	} else if fo[0].AfterRead || fo[0].ReadBefore >= target {
		t.Errorf("failover %+v: the node was lost once the read was whole, not mid-read", fo[0])
	}
	if len(fo) > 1 {
		// A quorum queue's new leader's node was seen to close the read
		// again right after taking over: a second failover, through the
		// third node.
		t.Logf("%d failovers: %+v", len(fo), fo)
	}
	if doc.Data.Read.Lost != "" || doc.Data.Read.Read != target {
		t.Errorf("read %d of %d, lost %q: want the whole read through another node", doc.Data.Read.Read, target, doc.Data.Read.Lost)
	}
	if doc.Data.Read.SettleUnanswered {
		t.Logf("the broker stopped answering before the read's messages showed back (they came back: the DLQ count is checked)")
	} else if !doc.Data.Read.Settled || doc.finding("DLQ_READ_INCOMPLETE") != "" {
		t.Errorf("read %d of %d, lost %q, settled %v, %s", doc.Data.Read.Read, target, doc.Data.Read.Lost, doc.Data.Read.Settled,
			doc.finding("DLQ_READ_INCOMPLETE"))
	}
	if cmd != "stats" && ids != target {
		t.Errorf("%d distinct messages in the output, want %d", ids, target)
	}
	if cmd == "export" {
		if _, err := os.Stat(out); err != nil {
			t.Errorf("the export was not renamed %s: %v", out, err)
		}
		if _, err := os.Stat(out + ".partial"); err == nil {
			t.Errorf("%s.partial is left beside the whole export", out)
		}
	}
}

// checkLost: the command ended with exit 3 and a finding that names what
// it did not read; what it shows holds each message once.
func checkLost(t *testing.T, cmd string, run *readRun, doc *readDoc, ids, target int, out string) {
	t.Helper()
	msg := doc.finding("DLQ_READ_CONNECTION_LOST")
	if run.code != 3 || doc.Data.Read.Lost == "" || !strings.Contains(msg, "not read") {
		t.Fatalf("exit %d, lost %q, DLQ_READ_CONNECTION_LOST %q: want exit 3 and a finding naming what was not read\n%s",
			run.code, doc.Data.Read.Lost, msg, run.stderr.String())
	}
	if want := english.Number(int64(target-doc.Data.Read.Read)) + " not read"; !strings.Contains(msg, want) {
		t.Errorf("the finding does not say %s were not read: %q", want, msg)
	}
	// Given up at once (docs/dlq.md): another node said the queue's home
	// node is down, rather than --failover-wait running out.
	if why := doc.Data.Read.NoFailover; !strings.Contains(why, "lives on the lost node") {
		t.Errorf("not read again because %q, want: the queue lives on the lost node", why)
	}
	if cmd != "stats" && ids != doc.Data.Read.Read {
		t.Errorf("%d distinct messages in the output, the read says %d", ids, doc.Data.Read.Read)
	}
	if cmd == "export" {
		if _, err := os.Stat(out); err == nil {
			t.Errorf("an export cut by a lost node was renamed %s", out)
		}
		if doc.Data.Written != ids {
			t.Errorf("%s.partial holds %d distinct records, the result says %d written", out, ids, doc.Data.Written)
		}
	}
}

// stopUnder stops node a under a read. stop_app closes a's connections
// 1 to 7 s after it begins, and a read of a few thousand messages can be
// over by then (a peek always is), so the read is frozen (SIGSTOP) first
// and thawed once a's listener refuses connections: the loss then lands
// mid-read, as it does in the field for a larger queue, and the time
// counts from the listener's close. It returns that moment and, once
// stop_app is done, how long it took.
func stopUnder(t *testing.T, c *testenv.RabbitCluster, a testenv.RabbitNode, run *readRun) (time.Time, <-chan time.Duration) {
	t.Helper()
	dlqtest.Must(t, run.cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _, _ = c.Ctl(a.Name, "start_app") })
	begin := time.Now()
	took := make(chan time.Duration, 1)
	go func() {
		if _, err := c.Ctl(a.Name, "stop_app"); err != nil {
			t.Errorf("stop %s: %v", a.Name, err)
		}
		took <- time.Since(begin)
	}()
	for {
		conn, err := net.DialTimeout("tcp", a.Addr, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Since(begin) > 2*time.Minute {
			t.Fatalf("%s still accepts connections 2 minutes after stop_app began", a.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	down := time.Now()
	dlqtest.Must(t, run.cmd.Process.Signal(syscall.SIGCONT))
	return down, took
}

// killUnder SIGKILLs node a under a read, frozen (SIGSTOP) until the node
// no longer answers so the loss lands mid-read; it returns that moment and
// how long the kill took.
func killUnder(t *testing.T, c *testenv.RabbitCluster, a testenv.RabbitNode, run *readRun) (time.Time, <-chan time.Duration) {
	t.Helper()
	if err := run.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		<-run.done
		t.Fatalf("dupctl ended (exit %d) before the kill: %v\n%s", run.code, err, run.stderr.String())
	}
	begin := time.Now()
	c.Kill(t, a.Name)
	took := make(chan time.Duration, 1)
	took <- time.Since(begin)
	down := time.Now()
	dlqtest.Must(t, run.cmd.Process.Signal(syscall.SIGCONT))
	return down, took
}

// readIDs are the distinct message ids a peek showed or an export wrote
// (whichever file the export left), and how many more copies there were;
// stats shows no messages, so its count stands for them.
func readIDs(t *testing.T, cmd string, doc *readDoc, out string) (map[string]bool, int) {
	t.Helper()
	ids := map[string]bool{}
	dups := 0
	add := func(rec []byte) {
		var m struct {
			Properties struct {
				MessageID string `json:"message_id"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(rec, &m); err != nil {
			t.Fatalf("record %s: %v", rec, err)
		}
		if ids[m.Properties.MessageID] {
			dups++
		}
		ids[m.Properties.MessageID] = true
	}
	switch cmd {
	case "peek":
		var msgs []struct {
			Record json.RawMessage `json:"record"`
		}
		if err := json.Unmarshal(doc.Data.Messages, &msgs); err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			add(m.Record)
		}
	case "export":
		path := out
		if _, err := os.Stat(path); err != nil {
			path += ".partial"
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("no export file: %v", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			add(sc.Bytes())
		}
	default:
		var n int
		if err := json.Unmarshal(doc.Data.Messages, &n); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			ids[strconv.Itoa(i)] = true
		}
	}
	return ids, dups
}

// settledCount waits (at most 60 s) for the DLQ's count to stop moving
// after a read and returns it.
func settledCount(r *dlqtest.Rig) int {
	deadline := time.Now().Add(60 * time.Second)
	prev := -1
	for {
		n := r.Count(r.DLQ)
		if n == clusterDLQ || n == prev && time.Now().After(deadline) {
			return n
		}
		if time.Now().After(deadline) {
			return n
		}
		prev = n
		time.Sleep(250 * time.Millisecond)
	}
}

// buildDupctl builds the command into the test's directory, or returns
// DUPCTL_TEST_BIN when set: the same stops measured on another build
// (docs/benchmarks.md compares main's).
func buildDupctl(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DUPCTL_TEST_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "dupctl")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dupctl/dupctl/cmd/dupctl").CombinedOutput(); err != nil {
		t.Fatalf("build dupctl: %v\n%s", err, out)
	}
	return bin
}

// tookOverInTurn: each failover's node took over from a lost one, and a
// later loss is of the node that took over before it.
func tookOverInTurn(fo []NodeLoss) bool {
	for i, l := range fo {
		if l.TookOver == "" || l.TookOver == l.Lost || i > 0 && l.Lost != fo[i-1].TookOver {
			return false
		}
	}
	return true
}
