package replay

import (
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
