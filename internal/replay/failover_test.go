package replay

import (
	"errors"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/replay/journal"
)

// TestMergePartsKeepsTheAccount: what an earlier part left is read again
// by the next, so the merged counts take the last part's left ones and add
// up what was done, and read = replayed + parked + already done + left.
func TestMergePartsKeepsTheAccount(t *testing.T) {
	dst := classify.Target{RoutingKey: "orders.work"}
	p1 := &ReplayResult{AtStart: dlqread.QueueState{Messages: 1000}, Counts: Counts{Read: 700, Replayed: 480, Parked: 10, InDoubt: 200,
		NotPublished: 10, Succeeded: 5, SucceededLeft: 5, MalformedHeader: 2},
		Destinations:    []DestCount{{Target: dst, Kind: "replay", Messages: 690, Bytes: 6900, reasons: map[string]int{"rejected": 690}}},
		UnmatchedGroups: []string{"aaaaaaaa", "bbbbbbbb"}, Failovers: []FailoverEvent{}}
	p2 := &ReplayResult{AtStart: dlqread.QueueState{Messages: 510}, Counts: Counts{Read: 510, Replayed: 300, AlreadyDone: 3,
		InDoubtEarlier: 200,
		SucceededLeft:  5, Succeeded: 5, Filtered: 2, MalformedHeader: 1},
		Destinations:    []DestCount{{Target: dst, Kind: "replay", Messages: 300, Bytes: 3000, reasons: map[string]int{"expired": 300}}},
		UnmatchedGroups: []string{"bbbbbbbb"}, Failovers: []FailoverEvent{}}
	got := mergeParts(p1, p2, FailoverEvent{Lost: "a:1", TookOver: "b:2", InDoubt: 200, InDoubtAfter: 200})
	c := got.Counts
	if c.Replayed != 780 || c.Parked != 10 || c.AlreadyDone != 3 || c.InDoubt != 0 || c.InDoubtEarlier != 200 || c.NotPublished != 0 {
		t.Errorf("merged counts %+v", c)
	}
	if left := c.Left(); c.Read != c.Replayed+c.Parked+c.AlreadyDone+left {
		t.Errorf("read %d, want replayed %d + parked %d + already done %d + left %d", c.Read, c.Replayed, c.Parked, c.AlreadyDone, left)
	}
	if c.Succeeded != 5 || c.MalformedHeader != 2 {
		t.Errorf("succeeded %d (want 5: the first part's were left and read again), malformed %d (want 2)", c.Succeeded, c.MalformedHeader)
	}
	if got.AtStart.Messages != 1000 || len(got.Failovers) != 1 || got.Failovers[0].TookOver != "b:2" {
		t.Errorf("at start %+v, failovers %+v", got.AtStart, got.Failovers)
	}
	if len(got.Destinations) != 1 || got.Destinations[0].Messages != 990 || got.Destinations[0].Reasons != "expired 300, rejected 690" {
		t.Errorf("destinations %+v", got.Destinations)
	}
	if len(got.UnmatchedGroups) != 1 || got.UnmatchedGroups[0] != "bbbbbbbb" {
		t.Errorf("unmatched groups %v, want the one no part matched", got.UnmatchedGroups)
	}
	if len(p1.Failovers) != 0 {
		t.Errorf("merging changed the earlier result's failovers: %+v", p1.Failovers)
	}
}

// TestReplayFailsOverToTheNextAddress: on the single broker, a URL naming
// it twice is a "cluster" of two addresses. The broker closes the
// replay's consumer (or publisher) connection mid-run: the run goes on
// through the next address in the same process, as a resume of its
// journal, instead of exiting 3. Nothing is lost; what it holds in doubt
// is in the DLQ. (The real failover, a quorum leader's node stopped, is
// TestRabbitClusterReplayLeaderStopped.)
func TestReplayFailsOverToTheNextAddress(t *testing.T) {
	bin, ctl := closingRig(t)
	for _, role := range []string{"consume", "publish"} {
		t.Run(role, func(t *testing.T) {
			r := dlqtest.NewRig(t, "")
			const n = 2000
			r.DeadLetter(dlqtest.Jobs(n))
			u, err := url.Parse(r.URL)
			must(t, err)
			u.Host += "," + u.Host
			run := "failover-" + NewRunID()
			out, errOut, err := replayClosing(t, bin, ctl, "dlq "+role+" run="+run, "dlq", "replay", "--queue", r.DLQ, "--yes",
				"--rate", "200", "--window", "100", "--run-id", run, "--journal", filepath.Join(t.TempDir(), "j"),
				"--amqp-url", u.String(), "-o", "json")
			var ee *exec.ExitError
			if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
				t.Fatalf("exit %v, want 0, or 1 for messages in doubt:\n%s\n%s", err, out.String(), errOut.String())
			}
			doc := summaryOf(t, out)
			res, c := doc.Data, doc.Data.Counts
			if len(res.Failovers) != 1 || res.Failovers[0].TookOver == "" || res.Lost != "" ||
				!strings.Contains(out.String(), "DLQ_REPLAY_FAILOVER") {
				t.Fatalf("failovers %+v, connection lost %q:\n%s", res.Failovers, res.Lost, errOut.String())
			}
			if c.Replayed+c.Parked+c.AlreadyDone+c.Left() != c.Read {
				t.Errorf("the summary accounts for %d of the %d read: %+v", c.Replayed+c.Parked+c.AlreadyDone+c.Left(), c.Read, c)
			}
			waitNoConsumers(t, r)
			lost, dups, inDLQ := tally(t, r, n)
			doubt := c.InDoubt + c.InDoubtEarlier
			t.Logf("%s closed: %+v; replayed %d, in doubt %d; lost %d, duplicates %d, in the DLQ %d", role, res.Failovers[0],
				c.Replayed, doubt, lost, dups, inDLQ)
			// A message in doubt that did reach the destination is there and
			// in the DLQ: a copy counted twice, never more than the in doubt.
			if lost != 0 || inDLQ != doubt || dups > doubt {
				t.Fatalf("lost %d, in the DLQ %d (want the %d in doubt), duplicates %d", lost, inDLQ, doubt, dups)
			}
		})
	}
}

// TestMergePartsKeepsWhatTheNextPartDidNotFind: a part after a failover
// that did not find again an earlier part's copies that are certainly
// still in the DLQ (in doubt, or an ack that never left) keeps them in the
// account (issue 39: a part that read nothing after the failover made the
// 479 in doubt before it vanish, and the run exited 0).
func TestMergePartsKeepsWhatTheNextPartDidNotFind(t *testing.T) {
	p1 := &ReplayResult{AtStart: dlqread.QueueState{Messages: 20000}, Counts: Counts{Read: 2801, Replayed: 2661, InDoubt: 140,
		AckUnknown: 2661}, Failovers: []FailoverEvent{}}
	p2 := &ReplayResult{Counts: Counts{}, StoppedBy: "count at start reached", Failovers: []FailoverEvent{},
		untaken: journal.Untaken{Doubt: 140, Done: 2, AckSent: 2661}}
	c := mergeParts(p1, p2, FailoverEvent{}).Counts
	if c.InDoubtEarlier != 140 || c.AckLost != 2 || c.Replayed != 2661 {
		t.Fatalf("merged %+v: want the 140 in doubt and the 2 acks lost the next part did not find", c)
	}
	if c.Read != c.Replayed+c.Parked+c.AlreadyDone+c.Left() {
		t.Errorf("read %d, want replayed + parked + already done + left = %d", c.Read, c.Replayed+c.Parked+c.AlreadyDone+c.Left())
	}
}

// TestUnaccountedAfterAFailover: what the DLQ holds at the end beyond what
// the run left in it, or must still hold and did not show, is not read -
// and a run whose end depth was not seen cannot say it read everything.
func TestUnaccountedAfterAFailover(t *testing.T) {
	at := func(n int) *dlqread.QueueState { return &dlqread.QueueState{Messages: n} }
	for _, tc := range []struct {
		name         string
		res          ReplayResult
		mustHold     int
		visible, all int
		ok           bool
	}{
		{"read nothing after the failover", ReplayResult{AtEnd: at(18352)}, 17339, 18352, 18352, true},
		{"emptied", ReplayResult{AtEnd: at(0)}, 0, 0, 0, true},
		{"left by choice", ReplayResult{AtEnd: at(95), Counts: Counts{InDoubtEarlier: 78, Filtered: 10, AckLost: 7}}, 85, 0, 0, true},
		{"held by the lost node", ReplayResult{AtEnd: at(78), Counts: Counts{InDoubtEarlier: 78}}, 5679, 0, 5601, true},
		{"no end reading", ReplayResult{Counts: Counts{InDoubtEarlier: 3}}, 3, 0, 0, false},
		{"another consumer at the start", ReplayResult{AtEnd: at(10), Counts: Counts{Filtered: 10}}, -1, 0, 0, true},
	} {
		v, a, ok := unaccounted(&tc.res, tc.mustHold)
		if v != tc.visible || a != tc.all || ok != tc.ok {
			t.Errorf("%s: visible %d, all %d, ok %v; want %d, %d, %v", tc.name, v, a, ok, tc.visible, tc.all, tc.ok)
		}
	}
}

// TestAccountNeverSaysReachedWhenTheDLQIsNotEmptied: after a failover the
// run says it reached its count only when the DLQ's depth confirms it.
func TestAccountNeverSaysReachedWhenTheDLQIsNotEmptied(t *testing.T) {
	r := &runParts{sent: 2661}
	total := &ReplayResult{AtStart: dlqread.QueueState{Messages: 20000}, StoppedBy: "count at start reached",
		AtEnd: &dlqread.QueueState{Messages: 17355}, Counts: Counts{Read: 2661, Replayed: 2661}, Failovers: []FailoverEvent{{}}}
	r.account(total, total)
	if total.Counts.Unaccounted != 17355 || !strings.Contains(total.StoppedBy, "still holds 17,355 messages") {
		t.Fatalf("unaccounted %d, stopped by %q: want the 17,355 still in the DLQ", total.Counts.Unaccounted, total.StoppedBy)
	}
	rep := total.Report()
	found := false
	for _, f := range rep.Findings {
		found = found || f.Code == ruleUnread.Code
	}
	if !found {
		t.Errorf("no %s finding: %+v", ruleUnread.Code, rep.Findings)
	}
	unseen := &ReplayResult{AtStart: dlqread.QueueState{Messages: 20000}, StoppedBy: "count at start reached",
		Failovers: []FailoverEvent{{}}}
	r.account(unseen, unseen)
	if unseen.EndUnchecked == "" || unseen.StoppedBy == "count at start reached" {
		t.Errorf("end not seen: unchecked %q, stopped by %q", unseen.EndUnchecked, unseen.StoppedBy)
	}
	whole := &ReplayResult{AtStart: dlqread.QueueState{Messages: 20000}, StoppedBy: "count at start reached",
		AtEnd: &dlqread.QueueState{Messages: 78}, Counts: Counts{InDoubtEarlier: 78}, Failovers: []FailoverEvent{{}}}
	(&runParts{sent: 19922}).account(whole, whole)
	if whole.Counts.Unaccounted != 0 || whole.StoppedBy != "count at start reached" || whole.EndUnchecked != "" {
		t.Errorf("an emptied DLQ: %+v, stopped by %q, unchecked %q", whole.Counts, whole.StoppedBy, whole.EndUnchecked)
	}
}

// ackedSource is a source that only says how many acks it sent.
type ackedSource struct {
	source
	n int
}

func (s ackedSource) acked() int { return s.n }

// TestSurplusAtTheEndIsAcksLost: a run whose consumer channel stayed open
// ends with the DLQ holding more than its count at the start less the acks
// sent, nothing having arrived: those acks were lost (a quorum queue whose
// leader moved under the channel dropped 88 of 4,000), and the copies are
// both at the destination and in the DLQ - counted as ack lost, an error
// (the run exited 0 saying it left nothing), and a bound for the journal.
func TestSurplusAtTheEndIsAcksLost(t *testing.T) {
	newEngine := func() *engine {
		return &engine{o: &ReplayOptions{Yes: true}, src: ackedSource{n: 4000},
			res: &ReplayResult{Queue: "q", AtStart: dlqread.QueueState{Messages: 4000}, Problems: []MessageRef{},
				Settled: true, AckLostExact: true, AtEnd: &dlqread.QueueState{Messages: 88}}} // as finish leaves it
	}
	e := newEngine()
	if !e.countSurplusAcks(dlqread.QueueState{Messages: 88}) || e.res.Counts.AckLost != 88 || e.acksLostMax != 88 {
		t.Fatalf("ack lost %d, bound %d: want the 88 the DLQ holds beyond its count less the acks", e.res.Counts.AckLost, e.acksLostMax)
	}
	var sev findings.Severity
	for _, f := range e.res.Report().Findings {
		if f.Code == ruleAckLost.Code {
			sev = f.Severity
		}
	}
	if sev != findings.Error {
		t.Errorf("%s at %v, want error: copies left in the DLQ are never a pass", ruleAckLost.Code, sev)
	}
	if e := newEngine(); e.countSurplusAcks(dlqread.QueueState{Messages: 0}) || e.res.Counts.AckLost != 0 {
		t.Errorf("an emptied DLQ: ack lost %d", e.res.Counts.AckLost)
	}
	e = newEngine()
	e.res.Counts.Arrived = 5
	if e.countSurplusAcks(dlqread.QueueState{Messages: 88}) || e.res.Counts.AckLost != 0 {
		t.Errorf("the DLQ gained messages during the run: its depth counts nothing, yet ack lost %d", e.res.Counts.AckLost)
	}
}
