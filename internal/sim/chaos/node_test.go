package chaos_test

import (
	"path/filepath"
	"testing"

	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/testenv"
)

// nodeWorker runs testdata/workers/nodeworker (amqplib, node-postgres;
// installed from npm on first use) in place of goworker.
func nodeWorker(t *testing.T, f *fixture) {
	t.Helper()
	modules := testenv.NodeModules(t, "../../../testdata/workers/nodeworker/package.json")
	script, err := filepath.Abs("../../../testdata/workers/nodeworker/worker.js")
	if err != nil {
		t.Fatal(err)
	}
	f.opts.Worker = "exec node " + script
	f.opts.Env = append(f.opts.Env, "NODE_PATH="+modules)
}

// A Node.js worker that acks on receipt, whose commit reply dupctl
// withholds (redelivery at after-write): its charge is durable, pg
// rejects the query, and the unhandled error ends the process. The
// message was acked before the fault, so no redelivery could ever come:
// the run is reached and ok, not CHAOS_FAULT_NOT_REACHED. The copy's exit
// says it crashed and quotes pg's error, not Node's version line under it.
func TestNodeAckOnReceiptCommitReplyLost(t *testing.T) {
	f := setup(t, "redelivery", "ACK=first")
	nodeWorker(t, f)
	f.opts.At, f.opts.Keys, f.opts.Attempts = []chaos.Point{chaos.AfterWrite}, 1, 1
	res := f.run(t)
	rr := res.Runs[0]
	if rr.Fault == nil || rr.Failed() || rr.Keys[0].Effects != 1 || len(findingCodes(res)) > 0 {
		t.Fatalf("missing %q, outcome %s, findings %v: want reached, ok, one effect, no finding\n%s",
			rr.Missing, rr.Outcome, findingCodes(res), describe(res))
	}
	var exits []string
	for _, e := range rr.Events {
		if e.Kind == "exit" && e.Lane == rr.Fault.Lane {
			exits = append(exits, e.Text)
		}
	}
	const want = "the worker process crashed (exit code 1); its error: Error: Connection terminated unexpectedly"
	if len(exits) != 1 || exits[0] != want {
		t.Fatalf("%s's exits %q, want %q\n%s", rr.Fault.Lane, exits, want, describe(res))
	}
}
