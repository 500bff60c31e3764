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
	rep.Check(ruleReadLost.Code, ruleReadFailover.Code)
	rep.Add(Findings(queue, r)...)
	rep.Add(lossFindings(queue, r)...)
	return rep
}

// lossFindings say what a node lost mid-read did: the queue was read
// again through another node, or the read holds only what it took before
// (an error that says how many were not read, and why no other node read
// them).
func lossFindings(queue string, r Result) []findings.Finding {
	var out []findings.Finding
	q := "queue " + queue
	for i, l := range r.Failovers {
		if l.AfterRead {
			out = append(out, afterReadFinding(q, l, r))
			continue
		}
		next := r.AtStart.Messages // what the read after this loss counted
		if i+1 < len(r.Failovers) {
			next = r.Failovers[i+1].Counted
		}
		var ev []string
		if next != l.Counted {
			ev = append(ev, fmt.Sprintf("the queue held %s when the lost read began and %s when it was read again: "+
				"the figures are the queue's at the second count (messages arrived, expired or were dead-lettered meanwhile)",
				english.Number(int64(l.Counted)), english.Number(int64(next))))
		}
		out = append(out, ruleReadFailover.New(q, fmt.Sprintf("node %s lost after %s read (%s): read again, whole, through %s",
			l.Lost, msgs(l.ReadBefore), l.Why, l.TookOver), ev...))
	}
	if r.RereadRepeats > 0 {
		out = append(out, ruleReadFailover.New(q, fmt.Sprintf("the read after the failover was given %s twice "+
			"(a quorum queue right after a leader change can do so, missing as many): read again, whole", msgs(r.RereadRepeats))))
	}
	if r.Lost != "" {
		var ev []string
		if r.NoFailover != "" {
			ev = append(ev, "not read again through another node: "+r.NoFailover)
		}
		out = append(out, ruleReadLost.New(q, fmt.Sprintf("connection to node %s lost after %s of the %s to read (%s): "+
			"%s not read; what is shown is only the messages read before the loss", r.LostNode, msgs(r.Read),
			english.Number(int64(r.Target)), r.Lost, english.Number(int64(r.Target-r.Read))), ev...))
	}
	return out
}

// afterReadFinding says what a node lost once the read was whole did: the
// read's messages, given back, were shown back through another node (or
// were not: the read says it is not exact).
func afterReadFinding(q string, l NodeLoss, r Result) findings.Finding {
	if l.TookOver == "" {
		return ruleReadFailover.New(q, fmt.Sprintf("node %s lost once the %s were read, while they were given back (%s): "+
			"no other node showed them back (%s)", l.Lost, msgs(l.ReadBefore), l.Why, r.NoFailover))
	}
	return ruleReadFailover.New(q, fmt.Sprintf("node %s lost once the %s were read, while they were given back (%s): "+
		"the queue's count was read through %s", l.Lost, msgs(l.ReadBefore), l.Why, l.TookOver))
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
		out = append(out, ruleQuorumReads.New(q,
			fmt.Sprintf("quorum queue: messages carry x-delivery-count (highest %d); each read adds one", r.MaxDeliveryCount)))
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
	if r.Repeats > 0 {
		why = append(why, fmt.Sprintf("%s came twice in the read (shown once): as many of the %d counted may not have been "+
			"read - a quorum queue right after a leader change can do so, or the queue holds identical copies", msgs(r.Repeats), r.Target))
	}
	if r.Untrusted() {
		why = append(why, fmt.Sprintf("the queue held %s when the read that lost its node began, and showed only %s after the "+
			"failover for as long as dupctl waited: this count is not trusted (%s are in neither figure). A node right after a "+
			"quorum queue's leader change was seen to show 0 for a full queue, and on RabbitMQ 3.10 the messages a killed node's "+
			"reader held stay with its consumer until the queue's leader changes again", english.Number(int64(r.CountBefore)),
			english.Number(int64(r.AtStart.Messages)), msgs(r.CountBefore-r.AtStart.Messages)))
	}
	if r.Read < r.Target {
		why = append(why, fmt.Sprintf("read %d of the %d counted at the start: no more arrived "+
			"(another consumer took them, or they expired)", r.Read, r.Target))
	}
	if r.SettleUnanswered {
		why = append(why, "the broker stopped answering before the messages read showed back in the queue "+
			"(seen after a quorum queue's leader change): they come back when the connection closes")
	} else if !r.Settled {
		why = append(why, fmt.Sprintf("the messages read were not all back in the queue when it ended (it showed %d ready, %s)",
			r.AtEnd.Messages, english.Count(r.AtEnd.Consumers, "consumer", "consumers")))
	} else if r.AtStart.Consumers == 0 && r.AtEnd.Messages > r.AtStart.Messages-r.Acked {
		why = append(why, fmt.Sprintf("%s arrived during the read: not in its count", msgs(r.AtEnd.Messages-(r.AtStart.Messages-r.Acked))))
	}
	return why
}

// msgs is "1 message" or "n messages".
func msgs(n int) string { return english.Count(n, "message", "messages") }
