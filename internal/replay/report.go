package replay

import (
	"fmt"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
)

// Report turns a replay result into findings.
func (res *ReplayResult) Report() *findings.Report {
	rep := &findings.Report{Command: "dlq replay", Data: res}
	rep.Check(replayChecks...)
	subject := "queue " + res.Queue
	if res.File != "" {
		subject = "file " + res.File
	}
	byWhat := map[string][]string{}
	for _, p := range res.Problems {
		id := p.MessageID
		if id == "" {
			id = "fingerprint " + p.FP
		}
		byWhat[p.What] = append(byWhat[p.What], fmt.Sprintf("message %s: %s", id, p.Why))
	}
	c := res.Counts
	add := func(r findings.Rule, n int, what, msg string) {
		if n > 0 {
			rep.Add(r.New(subject, fmt.Sprintf(msg, msgs(n)), evidence(byWhat[what])...))
		}
	}
	add(ruleInDoubt, c.InDoubt+c.InDoubtEarlier, "in-doubt", "%s in doubt: possibly at the destination and still in the DLQ")
	add(ruleReturned, c.Returned, "returned", "%s unroutable (returned): left in the DLQ")
	add(ruleNacked, c.Nacked, "nacked", "%s refused by the broker (nack): left in the DLQ")
	switch {
	case c.Bounced > res.MaxBounces:
		add(ruleBounced, c.Bounced, "bounced", "%s replayed by this run came back to the DLQ: the replay stopped")
	case c.Bounced > 0:
		add(ruleBounced, c.Bounced, "bounced", "%s replayed by this run came back to the DLQ ({MaxBounces} allows it)")
		rep.Findings[len(rep.Findings)-1].Severity = findings.Warn
	case c.Arrived > res.MaxBounces && c.Replayed > 0 && !res.DryRun && res.StoppedBy != "count at start reached":
		rep.Add(ruleBounced.New(subject, fmt.Sprintf("the DLQ gained %s while this run replayed %d: the replay stopped "+
			"(they are most likely its replays failing again; the next run reads them)", msgs(c.Arrived), c.Replayed)))
	}
	add(ruleDestMissing, c.DestinationMissing, "destination-missing", "%s not published: the destination does not exist (left in the DLQ)")
	add(ruleNoDestination, c.NoDestination, "no-destination", "%s without a destination: left in the DLQ")
	res.addAckLost(rep, subject, byWhat["ack-lost"])
	add(ruleNoKey, c.NoKey, "", "%s without an idempotency key: not checked")
	if res.DryRun {
		add(ruleReplayNonRetryable, c.NonRetryable, "", "would replay %s classified non-retryable: most likely they fail the same way again")
	} else {
		add(ruleReplayNonRetryable, c.NonRetryable, "", "chose to replay %s classified non-retryable, as the dry run warned: most likely "+
			"they fail the same way again")
	}
	for _, g := range res.UnmatchedGroups {
		rep.Add(ruleGroupUnmatched.New("group "+g, "no message read belongs to group "+g+": nothing of it was replayed"))
	}
	if res.Lost != "" {
		rep.Add(ruleConnectionLost.New(subject, "connection lost during the replay: "+res.Lost))
	}
	res.addFailovers(rep, subject)
	res.addParked(rep, subject)
	if c.Succeeded > 0 {
		rep.Add(ruleSkippedSucceeded.New(subject, fmt.Sprintf("%s skipped: idempotency key already SUCCEEDED", msgs(c.Succeeded))))
	}
	res.addDestinations(rep)
	read := dlqread.Result{AtStart: res.AtStart, Quorum: res.Quorum, Malformed: c.MalformedHeader, Settled: true}
	rep.Add(dlqread.Findings(res.Queue, read)...)
	// An unsettled end after a lost consumer is worded by addAckLost (a
	// count, or ack_unknown with why); here, the waits that ran out.
	switch {
	case res.Settled:
	case res.DryRun:
		if res.Lost == "" {
			rep.Add(dlqread.RuleReadIncomplete.New(subject, "the messages read were not all back in the DLQ when the dry run ended"))
		}
	case !res.AckLostExact && c.AckUnknown == 0:
		rep.Add(ruleAckLost.New(subject, "the DLQ did not show every ack and requeue of this run applied before it closed: "+
			"replayed messages may be back in the DLQ (a {Resume} run acks them without republishing)"))
	}
	return rep
}

// addFailovers adds each node lost and, after them, what the DLQ's depth
// at the end says the run did not read.
func (res *ReplayResult) addFailovers(rep *findings.Report, subject string) {
	for _, ev := range res.Failovers {
		msg := fmt.Sprintf("node %s lost (%s); %s took over: %d unconfirmed, %d acks not seen applied, %d in doubt after it",
			ev.Lost, ev.Why, ev.TookOver, ev.InDoubt, ev.AcksUnknown, ev.InDoubtAfter)
		if ev.GaveUp == "" && ev.MustHold > ev.Counted {
			msg += fmt.Sprintf("; it showed %s for the whole failover wait, fewer than the %s the DLQ held at least",
				msgs(ev.Counted), english.Number(int64(ev.MustHold)))
		}
		if ev.GaveUp != "" {
			msg = fmt.Sprintf("node %s lost (%s); no failover: %s", ev.Lost, ev.Why, ev.GaveUp)
		}
		rep.Add(ruleFailover.New(subject, msg))
	}
	c := res.Counts
	switch {
	case c.Unaccounted > 0:
		var ev []string
		if res.AtEnd != nil {
			ev = append(ev, fmt.Sprintf("at the end the DLQ showed %s; the run left %s in it by choice, and it held at least %s "+
				"(its count at the start less the acks sent)", msgs(res.AtEnd.Messages),
				english.Number(int64(c.Left()+c.Unread+c.AckLost+c.AckUnknown)), english.Number(int64(res.MustHold))))
		}
		if res.Rereads > 0 {
			ev = append(ev, fmt.Sprintf("read again %s after the failover", english.Count(res.Rereads, "time", "times")))
		}
		rep.Add(ruleUnread.New(subject, fmt.Sprintf("%s still in the DLQ were not read by this run after the failover", msgs(c.Unaccounted)),
			ev...))
	case res.EndUnchecked != "":
		rep.Add(ruleUnread.New(subject, res.EndUnchecked))
	}
}

// addParked adds what was (or, in a dry run, would be) parked.
func (res *ReplayResult) addParked(rep *findings.Report, subject string) {
	n := res.Counts.Parked
	verb := "were"
	if res.DryRun {
		n, verb = parkPreview(res), "would be"
	}
	if n > 0 {
		rep.Add(ruleParked.New(subject, fmt.Sprintf("%s %s parked in %s", msgs(n), verb, res.ParkQueue)))
	}
}

// addDestinations adds, per destination, a fan-out through an exchange and
// a destination the dry run found missing.
func (res *ReplayResult) addDestinations(rep *findings.Report) {
	for _, d := range res.Destinations {
		if d.Kind == "replay" && d.Target.Exchange != "" {
			rep.Add(ruleFanout.New(d.Target.String(), fmt.Sprintf("%s go through exchange %s: every queue bound for the key gets a copy",
				msgs(d.Messages), d.Target.Exchange)))
		}
		if d.Exists != nil && !*d.Exists {
			rep.Add(ruleDestMissing.New(d.Target.String(), fmt.Sprintf("%s would be returned: the destination does not exist", msgs(d.Messages))))
		}
	}
}

func parkPreview(res *ReplayResult) int {
	n := 0
	for _, d := range res.Destinations {
		if d.Kind == "park" {
			n += d.Messages
		}
	}
	return n
}

// evidence lists at most 20 messages (the journal and JSON have them all).
func evidence(lines []string) []string {
	const max = 20
	if len(lines) <= max {
		return lines
	}
	return append(lines[:max:max], fmt.Sprintf("... and %d more (see the journal or -o json)", len(lines)-max))
}

// msgs is "1 message" or "n messages".
func msgs(n int) string { return english.Count(n, "message", "messages") }

// addAckLost says what the run knows of the DLQ acks it lost: a count
// when it is one (the DLQ read back after a lost consumer connection, or
// nothing acked on it), otherwise the certain ones and how many more may
// be lost (acklost.go).
func (res *ReplayResult) addAckLost(rep *findings.Report, subject string, ev []string) {
	c := res.Counts
	switch {
	case c.AckUnknown > 0:
		msg := fmt.Sprintf("%s at the destination may be back in the DLQ: their ack was sent on the lost connection and not seen applied (%s)",
			msgs(c.AckUnknown), res.AckLostWhy)
		if c.AckLost > 0 {
			msg = fmt.Sprintf("%s at the destination whose DLQ ack never left, and %s", msgs(c.AckLost), msg)
		}
		rep.Add(ruleAckLost.New(subject, msg+"; a {Resume} run settles each copy", evidence(ev)...))
	case c.AckLost > 0 && res.AckLostExact && res.Lost != "":
		const counted = "%s at the destination whose DLQ ack was lost (counted from the DLQ's depth after the connection was lost)"
		rep.Add(ruleAckLost.New(subject, fmt.Sprintf(counted, msgs(c.AckLost)), evidence(ev)...))
	case c.AckLost > 0:
		if res.AtEnd != nil && len(res.Failovers) == 0 {
			ev = append(append([]string{}, ev...), "counted from the DLQ's depth at the end, which held that many more than its "+
				"count at the start less the acks sent (dead letters arriving just as the run ended would count too)")
		}
		rep.Add(ruleAckLost.New(subject, fmt.Sprintf("%s at the destination whose DLQ ack was lost: they are back in the DLQ",
			msgs(c.AckLost)), evidence(ev)...))
	}
	if c.AckLost > 0 {
		// Copies left in the DLQ that the run did not mean to leave: never
		// a pass (issue 39).
		rep.Findings[len(rep.Findings)-1].Severity = findings.Error
	}
}
