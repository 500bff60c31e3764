package replay

import (
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

func severities(rep *findings.Report) map[string]findings.Severity {
	out := map[string]findings.Severity{}
	for _, f := range rep.Findings {
		out[f.Code] = f.Severity
	}
	return out
}

// A run that lost a connection exits 3; its report must fail too, or -o
// json says "failed": false next to that exit status (issue 21).
func TestReplayReportFailsOnALostConnection(t *testing.T) {
	res := &ReplayResult{Queue: "q", Lost: "publisher channel closed", Settled: true, Counts: Counts{Read: 3, Replayed: 3}}
	if got := severities(res.Report())[ruleConnectionLost.Code]; got != findings.Error {
		t.Fatalf("DLQ_REPLAY_CONNECTION_LOST: %v, want error", got)
	}
}

// Bounces past --max-bounces fail the run; fewer are a warning.
func TestReplayReportBounces(t *testing.T) {
	for _, c := range []struct {
		bounced, max int
		want         findings.Severity
	}{{1, 0, findings.Error}, {2, 5, findings.Warn}, {0, 0, 0}} {
		res := &ReplayResult{Queue: "q", Settled: true, MaxBounces: c.max,
			Counts: Counts{Read: 10, Replayed: 10 - c.bounced, Bounced: c.bounced}}
		if got := severities(res.Report())[ruleBounced.Code]; got != c.want {
			t.Errorf("%d bounced, --max-bounces %d: %v, want %v", c.bounced, c.max, got, c.want)
		}
	}
}

func TestReplayReportUnmatchedGroup(t *testing.T) {
	res := &ReplayResult{Queue: "q", Settled: true, UnmatchedGroups: []string{"0000abcd"}, Counts: Counts{Read: 5, Filtered: 5}}
	if _, ok := severities(res.Report())[ruleGroupUnmatched.Code]; !ok {
		t.Fatal("no DLQ_REPLAY_GROUP_UNMATCHED for a group that matched nothing")
	}
}

// The DLQ acks of a run are worded once: counted after a lost consumer,
// a bound with why when not counted, and the wait that ran out when only
// the publisher was lost (or nothing was) and the DLQ did not settle.
func TestReplayReportAckLost(t *testing.T) {
	ackLost := func(res *ReplayResult) []string {
		var msgs []string
		for _, f := range res.Report().Findings {
			if f.Code == ruleAckLost.Code {
				msgs = append(msgs, f.Message)
			}
		}
		return msgs
	}
	for _, c := range []struct {
		name string
		res  ReplayResult
		want string // in the one DLQ_REPLAY_ACK_LOST message ("": none)
	}{
		{"counted", ReplayResult{Lost: "consumer connection closed", AckLostExact: true, Counts: Counts{Replayed: 9, AckLost: 3}},
			"3 messages at the destination whose DLQ ack was lost (counted from the DLQ's depth"},
		{"bound", ReplayResult{Lost: "consumer connection closed", AckLostWhy: "the DLQ could not be read back: refused",
			Counts: Counts{Replayed: 9, AckLost: 1, AckUnknown: 4}},
			"1 message at the destination whose DLQ ack never left, and 4 messages at the destination may be back"},
		{"publisher lost, DLQ not settled", ReplayResult{Lost: "publisher connection: closed", Counts: Counts{Replayed: 9}},
			"the DLQ did not show every ack and requeue of this run applied"},
		{"nothing lost, settled", ReplayResult{Settled: true, AckLostExact: true, Counts: Counts{Replayed: 9}}, ""},
		{"lost consumer, nothing acked", ReplayResult{Lost: "consumer connection closed", AckLostExact: true}, ""},
	} {
		c.res.Queue = "q"
		got := ackLost(&c.res)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: %q, want no DLQ_REPLAY_ACK_LOST", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: %q, want one message with %q", c.name, got, c.want)
		}
	}
}
