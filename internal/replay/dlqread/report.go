package dlqread

import (
	"fmt"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// readReport is the report of a verb that only reads: the findings of
// the read itself.
func readReport(command string, data any, queue string, r Result) *findings.Report {
	rep := &findings.Report{Command: command, Data: data}
	rep.Check(ReadChecks...)
	rep.Check(ruleReadLost.Code)
	rep.Add(Findings(queue, r)...)
	rep.Add(lossFindings(queue, r)...)
	return rep
}

// lossFindings say what a node lost mid-read did: the read holds only
// what it took before (an error), or the queue was read again through
// another node (stats).
func lossFindings(queue string, r Result) []findings.Finding {
	var out []findings.Finding
	q := "queue " + queue
	for _, l := range r.Failovers {
		out = append(out, ruleReadFailover.New(q, fmt.Sprintf("node %s lost after %s read (%s): read again, whole, through %s",
			l.Lost, msgs(l.ReadBefore), l.Why, l.TookOver)))
	}
	if r.Lost != "" {
		out = append(out, ruleReadLost.New(q, fmt.Sprintf("connection to node %s lost after %s of the %d to read (%s): "+
			"what is shown is only the messages read before the loss", r.LostNode, msgs(r.Read), r.Target, r.Lost)))
	}
	return out
}

// Findings are the findings of a read itself (consumers, quorum reads,
// malformed headers, a count it cannot vouch for); a replay adds them to
// its own.
func Findings(queue string, r Result) []findings.Finding {
	var out []findings.Finding
	q := "queue " + queue
	if r.AtStart.Consumers > 0 {
		out = append(out, ruleHasConsumers.New(q, fmt.Sprintf("%s attached to the DLQ (what they hold unacknowledged is in no count)",
			english.Count(r.AtStart.Consumers, "consumer", "consumers"))))
	}
	if r.Quorum {
		out = append(out, ruleQuorumReads.New(q, fmt.Sprintf("quorum queue: messages carry x-delivery-count (highest %d); each read adds one", r.MaxDeliveryCount)))
	}
	if r.Malformed > 0 {
		out = append(out, ruleMalformed.New(q, fmt.Sprintf("%s with death headers of the wrong type", msgs(r.Malformed))))
	}
	if why := r.inexact(); len(why) > 0 && r.Lost == "" { // a lost read says so itself
		out = append(out, RuleReadIncomplete.New(q, why[0], why[1:]...))
	}
	return out
}

// inexact says why the read's count may not be the queue's, most
// important first (nil: it is exact).
func (r Result) inexact() []string {
	var why []string
	if r.Read < r.Target {
		why = append(why, fmt.Sprintf("read %d of the %d counted at the start: no more arrived (another consumer took them, or they expired)", r.Read, r.Target))
	}
	if !r.Settled {
		why = append(why, fmt.Sprintf("the messages read were not all back in the queue when it ended (it showed %d ready, %s)",
			r.AtEnd.Messages, english.Count(r.AtEnd.Consumers, "consumer", "consumers")))
	} else if r.AtStart.Consumers == 0 && r.AtEnd.Messages > r.AtStart.Messages-r.Acked {
		why = append(why, fmt.Sprintf("%s arrived during the read: not in its count", msgs(r.AtEnd.Messages-(r.AtStart.Messages-r.Acked))))
	}
	return why
}

// msgs is "1 message" or "n messages".
func msgs(n int) string { return english.Count(n, "message", "messages") }
