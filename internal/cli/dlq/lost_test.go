package dlq

import (
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
)

// A read whose connection was lost exits 3 after its output, naming the
// node and how many of how many it read; its findings' exit gives way to
// it, a render error does not.
func TestReadLostExitsUnavailable(t *testing.T) {
	if readLost(dlqread.Result{Read: 10, Target: 10}, "x") != nil {
		t.Fatal("a whole read is an error")
	}
	err := readLost(dlqread.Result{Read: 3, Target: 20, Lost: "consumer channel closed", LostNode: "10.0.0.1:5672"}, "the messages shown are")
	if code := cmdutil.ExitCode(err, -1); code != exitcode.Unavailable || !exitcode.KeepsOutput(err) {
		t.Fatalf("exit %d (output kept: %v), want %d after the output", code, exitcode.KeepsOutput(err), exitcode.Unavailable)
	}
	for _, want := range []string{"10.0.0.1:5672", "after 3 of the 20"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err.Error(), want)
		}
	}
	if got := lostOr(err, exitcode.FindingsFailed()); got != err {
		t.Errorf("lostOr with findings failed: %v, want the lost read's error", got)
	}
	render := exitcode.InputError(errTest("render"), "")
	if got := lostOr(err, render); got != render {
		t.Errorf("lostOr with a render error: %v, want the render error", got)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestAMQPConnCountsTheNodes(t *testing.T) {
	f := factory()
	f.Global.AMQPURL = "amqp://u:p@127.0.0.1:5701,127.0.0.1:5702/v"
	c, err := amqpConn(f, "t")
	if err != nil || c.nodes != 2 || c.vhost != "v" {
		t.Fatalf("amqpConn: %+v, %v; want 2 nodes, vhost v", c, err)
	}
	f.Global.AMQPURL = "amqp://u:p@127.0.0.1:5701/"
	if c, _ := amqpConn(f, "t"); c.nodes != 1 {
		t.Fatalf("one address: %d nodes", c.nodes)
	}
}

// A read again after a lost node that was given messages twice exits 3
// too, naming how many were not read.
func TestReadAgainWithRepeatsExitsUnavailable(t *testing.T) {
	err := readLost(dlqread.Result{Read: 20, Target: 20, Repeats: 4,
		Failovers: []dlqread.NodeLoss{{Lost: "10.0.0.1:5672", TookOver: "10.0.0.2:5672"}}}, "the messages shown are")
	if code := cmdutil.ExitCode(err, -1); code != exitcode.Unavailable || !exitcode.KeepsOutput(err) {
		t.Fatalf("exit %d (output kept: %v), want %d after the output", code, exitcode.KeepsOutput(err), exitcode.Unavailable)
	}
	for _, want := range []string{"10.0.0.1:5672", "4 of its 20 messages twice", "as many were not read"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err.Error(), want)
		}
	}
}

// A count after a failover that stayed below the one before the loss is
// not trusted: exit 3 after the output, naming both counts, whatever the
// findings say (issue 39: stats exited 0 with 13,499 of 20,000).
func TestUntrustedCountExitsUnavailable(t *testing.T) {
	r := dlqread.Result{AtStart: dlqread.QueueState{Messages: 13499}, Target: 13499, Read: 13499, CountBefore: 20000,
		Failovers: []dlqread.NodeLoss{{Lost: "10.0.0.1:5672", TookOver: "10.0.0.2:5672"}}}
	err := readLost(r, "the figures count")
	if code := cmdutil.ExitCode(err, -1); code != exitcode.Unavailable || !exitcode.KeepsOutput(err) {
		t.Fatalf("exit %d (output kept: %v), want %d after the output", code, exitcode.KeepsOutput(err), exitcode.Unavailable)
	}
	for _, want := range []string{"count not trusted", "held 20000", "only 13499", "6501 are in neither", "10.0.0.1:5672"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err.Error(), want)
		}
	}
	if got := lostOr(err, nil); got != err {
		t.Errorf("lostOr with no findings failed: %v, want the count's error", got)
	}
	r.CountBefore = 13499
	if err := readLost(r, "x"); err != nil {
		t.Errorf("a count that came back is trusted, got %v", err)
	}
}
