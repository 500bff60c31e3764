package replay

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/replay/internal/consume"
	"github.com/dupctl/dupctl/internal/replay/journal"
)

// Failover is how a replay of a queue goes on when its connection to one
// node of a cluster is lost mid-run: it waits for another node to answer
// for the DLQ, reads its own journal back and runs another part of the run
// through that node, as `--resume JOURNAL` would have in a new process.
// Nothing about which copy is which is decided here: the next part is a
// resume (journal.Book), so what the lost part left unconfirmed, or
// confirmed with its DLQ ack unseen, is held in doubt exactly as after a
// crash. Delivery tags and confirm numbers belong to a channel, so nothing
// of the lost connections is carried over but the journal.
type Failover struct {
	// Failover dials the URL's addresses again (the lost one last), at
	// most as many times as it names, and bounds the wait for another node
	// to answer for the DLQ, as the reads do (dlqread.Failover, the same
	// type, is its name outside internal/replay).
	consume.Failover
	// Journal reads back the journal the run writes, as --resume reads it.
	Journal func() (*journal.State, error)
}

// FailoverEvent is one failover of a run.
type FailoverEvent struct {
	// Lost is the address of the node whose connection was lost, Why how.
	Lost string `json:"lost_node"`
	Why  string `json:"why"`
	// TookOver is the node the next part read through ("" when none
	// answered within the wait, or the run could not go on: GaveUp says why).
	TookOver string `json:"took_over"`
	GaveUp   string `json:"gave_up,omitempty"`
	// AtMs is when the connection was lost, counted from the run's start;
	// PauseMs how long until the next part started.
	AtMs    int64 `json:"at_ms"`
	PauseMs int64 `json:"pause_ms"`
	// InDoubt are the lost part's publishes without a confirm; AcksUnknown
	// its (and earlier parts') confirmed publishes whose DLQ ack was sent
	// and not seen applied. InDoubtAfter is what the next part then held
	// in doubt of them: copies that may already be at the destination.
	InDoubt      int `json:"in_doubt"`
	AcksUnknown  int `json:"acks_unknown"`
	InDoubtAfter int `json:"in_doubt_after"`
	// MustHold is how many messages the DLQ held at least when the next
	// part began (the count at the run's start less the acks sent; -1:
	// unknown), Counted what that part counted: fewer only when the node
	// that took over showed fewer for the whole failover wait.
	MustHold int `json:"must_hold"`
	Counted  int `json:"counted"`
}

// maxRereads bounds the parts a run adds, after a failover, because the
// DLQ still held messages it had not read (a DLQ fed during the run would
// otherwise be read again for ever).
const maxRereads = 2

// run is a run of several parts: the first, one more after each lost
// connection while another node answers, and, after a failover, one more
// while the DLQ's depth at the end shows messages the run has not read.
// A part that follows a loss counts the DLQ only once it shows at least
// what it must hold (the count at the run's start less the acks sent); a
// run with a failover ends only once the DLQ's depth confirms it read
// everything it had to, or says how many it did not (Unaccounted).
func (f *Failover) run(ctx context.Context, d ReplayDeps, o ReplayOptions) (*ReplayResult, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	meter := &consume.PartMeter{Meter: progress.Or(d.Progress)}
	defer meter.Meter.Done()
	d.Progress = meter
	r := &runParts{f: f, d: d, o: o, start: d.Now(), meter: meter}
	total, err := replayPart(ctx, d, o)
	if total != nil {
		r.sent, r.ghosts = total.acksSent, total.ghosts
	}
	last := total
	for err == nil && last != nil && ctx.Err() == nil {
		var next *ReplayResult
		var nerr error
		if last.Lost != "" {
			if len(total.Failovers) >= f.Nodes {
				break
			}
			next, total, nerr = r.failover(ctx, total, last)
		} else {
			next, total, nerr = r.reread(ctx, total, last)
		}
		if next == nil {
			if nerr != nil {
				return total, nerr
			}
			break
		}
		last, err = next, nerr
	}
	if total != nil {
		r.account(total, last)
		el := d.Now().Sub(r.start)
		total.ElapsedMs = el.Milliseconds()
		if el > 0 {
			total.PerSecond = float64(total.Counts.Replayed+total.Counts.Parked) / el.Seconds()
		}
	}
	return total, err
}

// runParts is the state of a run of several parts.
type runParts struct {
	f     *Failover
	d     ReplayDeps
	o     ReplayOptions
	start time.Time
	meter *consume.PartMeter
	// sent are the DLQ acks every part so far sent; ghosts the consumers
	// the lost connections may leave counted.
	sent, ghosts int
}

// mustHold is how many messages the DLQ holds at least now: its count at
// the run's start less every ack sent (-1 when another consumer was
// attached at the start: it may have taken some).
func (r *runParts) mustHold(total *ReplayResult) int {
	if total.AtStart.Consumers > 0 {
		return -1
	}
	return max(0, total.AtStart.Messages-r.sent)
}

// failover waits for another node to answer for the DLQ after last lost
// its connection and runs the next part through it; next is nil when the
// run cannot go on (the event in total says why; err when the part
// itself failed).
func (r *runParts) failover(ctx context.Context, total, last *ReplayResult) (next, merged *ReplayResult, err error) {
	ev := FailoverEvent{Lost: last.lostNode, Why: last.Lost, InDoubt: last.Counts.InDoubt, AtMs: r.d.Now().Sub(r.start).Milliseconds()}
	lostAt := r.d.Now()
	po, perr := r.f.nextPart(r.o, total, &ev)
	var reading consume.Reading
	hold := r.mustHold(total)
	if perr != nil {
		ev.GaveUp = perr.Error()
	} else {
		ev.TookOver, reading, ev.GaveUp = r.f.await(ctx, r.o.Queue, ev.Lost, consume.Expect{Ghosts: r.ghosts, AtLeast: max(hold, 0)})
	}
	if ev.GaveUp != "" {
		total.Failovers = append(total.Failovers, ev)
		return nil, total, nil
	}
	ev.PauseMs = r.d.Now().Sub(lostAt).Milliseconds()
	ev.MustHold, ev.Counted = hold, reading.Messages
	po.partWhy = fmt.Sprintf("failover: the connection to %s was lost (%s); going on through %s", ev.Lost, ev.Why, ev.TookOver)
	po.after = &afterLoss{mustHold: hold, ghosts: r.ghosts, short: reading.Short, wait: r.f.Budget()}
	next, err = r.part(ctx, po, last, ev.Lost)
	if next == nil {
		ev.GaveUp = err.Error()
		total.Failovers = append(total.Failovers, ev)
		return nil, total, fmt.Errorf("failover to %s: %w", ev.TookOver, err)
	}
	ev.InDoubtAfter = next.Counts.InDoubtEarlier
	ev.Counted = next.AtStart.Messages
	return next, mergeParts(total, next, ev), err
}

// reread runs one more part when, after a failover, the DLQ's depth at
// the end of the last part shows messages the run has not read (the part
// after the loss counted too few: a quorum queue answering for a leader
// still moving, a lost reader's messages coming back late); nil when
// there is none, or no more may be read.
func (r *runParts) reread(ctx context.Context, total, last *ReplayResult) (next, merged *ReplayResult, err error) {
	if len(total.Failovers) == 0 || r.o.Max > 0 && total.Counts.Replayed >= r.o.Max || total.Rereads >= maxRereads {
		return nil, total, nil
	}
	switch last.StoppedBy {
	case "count at start reached", "queue drained", fmt.Sprintf("no message arrived for %s", idleOf(r.o)):
	default:
		return nil, total, nil // it stopped for a reason of its own
	}
	visible, _, ok := unaccounted(total, r.mustHold(total))
	if !ok || visible == 0 {
		return nil, total, nil
	}
	ev := FailoverEvent{}
	po, perr := r.f.nextPart(r.o, total, &ev)
	if perr != nil {
		return nil, total, nil
	}
	po.partWhy = fmt.Sprintf("read again: after the failover the DLQ held %s the run had not read", msgs(visible))
	po.after = &afterLoss{mustHold: r.mustHold(total), ghosts: r.ghosts, wait: r.f.Budget()}
	next, err = r.part(ctx, po, last, "")
	if next == nil {
		return nil, total, err
	}
	merged = mergeParts(total, next, ev)
	merged.Failovers = total.Failovers // a read again is no failover
	merged.Rereads = total.Rereads + 1
	return next, merged, err
}

// part runs one more part with the lost node (if any) dialled last, and
// adds its acks and consumers to the run's.
func (r *runParts) part(ctx context.Context, po *ReplayOptions, last *ReplayResult, lost string) (*ReplayResult, error) {
	r.meter.Base += int64(last.Counts.Read)
	pd := r.d
	pd.Dial = r.f.Redial(lost)
	next, err := replayPart(ctx, pd, *po)
	if next != nil {
		r.sent += next.acksSent
		if next.Lost != "" {
			r.ghosts += next.ghosts
		}
	}
	return next, err
}

// account says, after a run with a failover, whether the DLQ's depth at
// the end confirms the run read everything it had to: what it holds
// beyond what the run left in it, and what it must still hold but did not
// show, are Unaccounted, and the run does not say it reached its count.
func (r *runParts) account(total, last *ReplayResult) {
	if len(total.Failovers) == 0 || total.Lost != "" || total.DryRun {
		return
	}
	total.MustHold = max(r.mustHold(total), 0)
	_, n, ok := unaccounted(total, r.mustHold(total))
	switch {
	case !ok:
		total.EndUnchecked = "the DLQ did not show this run's acks and requeues applied before it ended, so its depth could not " +
			"confirm that the run read every message it had to"
		if total.StoppedBy == "count at start reached" || total.StoppedBy == "queue drained" {
			total.StoppedBy += " (not confirmed by the DLQ's depth)"
		}
	case n > 0:
		total.Counts.Unaccounted = n
		total.StoppedBy = fmt.Sprintf("%s, yet the DLQ still holds %s this run did not read", last.StoppedBy, msgs(n))
	}
}

// unaccounted is what the DLQ holds at the end that the run neither read
// nor left there by choice: visible, its depth beyond what the run left
// in it (left, not read by choice, acks lost); all, that plus what it must
// still hold (mustHold, -1: unknown) but did not show. ok is false when
// the depth at the end was not seen.
func unaccounted(total *ReplayResult, mustHold int) (visible, all int, ok bool) {
	if total.AtEnd == nil {
		return 0, 0, false
	}
	c := total.Counts
	explained := c.Left() + c.Unread + c.AckLost + c.AckUnknown
	depth := total.AtEnd.Messages
	visible = max(0, depth-explained)
	return visible, max(0, max(depth, mustHold)-explained), true
}

// idleOf is the idle time a part stops after (ReplayOptions.Idle's default).
func idleOf(o ReplayOptions) time.Duration {
	if o.Idle <= 0 {
		return 10 * time.Second
	}
	return o.Idle
}

// nextPart is the options of the part after a failover: a resume of the
// journal so far, with what is left of --max.
func (f *Failover) nextPart(o ReplayOptions, total *ReplayResult, ev *FailoverEvent) (*ReplayOptions, error) {
	st, err := f.Journal()
	if err != nil {
		return nil, fmt.Errorf("read the journal back: %w", err)
	}
	ev.AcksUnknown = st.AckUnknown()
	po := o
	po.Resume = st
	if o.Max > 0 {
		left := o.Max - total.Counts.Replayed
		if left <= 0 {
			return nil, errors.New("the most messages to replay were replayed before the connection was lost")
		}
		po.Max = left
	}
	return &po, nil
}

// await waits for another node to answer for the DLQ (consume.Failover's
// AwaitQueue) and returns its address and reading, or why the run cannot
// go on.
func (f *Failover) await(ctx context.Context, queue, lost string, e consume.Expect) (node string, r consume.Reading, gaveUp string) {
	conn, r, why := f.AwaitQueue(ctx, queue, lost, e, "answered for the queue") // a replay starts only on a DLQ without consumers
	if conn == nil {
		return "", r, why
	}
	defer conn.Close()
	if ctx.Err() != nil {
		return conn.RemoteAddr().String(), r, "interrupted"
	}
	return conn.RemoteAddr().String(), r, ""
}

// mergeParts is the result of a run so far (total) and its next part. The
// next part reads again what an earlier part left in the DLQ, so what is
// left is the last part's; what was done (replayed, parked, acked as done)
// adds up, and read = replayed + parked + already done + left holds. What
// the next part did not find again of the earlier parts' publishes whose
// copy is certainly still in the DLQ stays in the account (issue 39: a
// part after a failover that read nothing made 479 in doubt vanish): one
// in doubt (read by an earlier part) as in doubt, one whose ack never
// left as ack lost.
func mergeParts(total, next *ReplayResult, ev FailoverEvent) *ReplayResult {
	t := total.Counts
	c := next.Counts
	u := next.untaken
	c.InDoubtEarlier += u.Doubt
	c.AckLost += u.Done
	c.Read += t.Replayed + t.Parked + t.AlreadyDone + u.Doubt
	c.Replayed += t.Replayed
	c.Parked += t.Parked
	c.AlreadyDone += t.AlreadyDone
	c.Succeeded += t.Succeeded - t.SucceededLeft
	c.NoKey += t.NoKey
	c.UserIDDropped += t.UserIDDropped
	c.MalformedHeader = max(c.MalformedHeader, t.MalformedHeader)
	res := *next
	res.Counts = c
	res.AtStart = total.AtStart
	res.Quorum = total.Quorum || next.Quorum
	res.Destinations = mergeDestinations(total.Destinations, next.Destinations)
	res.UnmatchedGroups = []string{}
	for _, g := range next.UnmatchedGroups {
		for _, h := range total.UnmatchedGroups {
			if g == h { // matched in no part
				res.UnmatchedGroups = append(res.UnmatchedGroups, g)
			}
		}
	}
	res.Failovers = append(append([]FailoverEvent{}, total.Failovers...), ev)
	res.DestinationChecks = append(append([]DestCheck{}, total.DestinationChecks...), next.DestinationChecks...)
	res.Rereads = total.Rereads
	return &res
}

// mergeDestinations adds up the routing rows of two parts (what each part
// decided to publish where).
func mergeDestinations(a, b []DestCount) []DestCount {
	out := append([]DestCount{}, a...)
	for _, d := range b {
		i := 0
		for i < len(out) && (out[i].Kind != d.Kind || out[i].Target.String() != d.Target.String()) {
			i++
		}
		if i == len(out) {
			out = append(out, d)
			continue
		}
		m := &out[i]
		m.Messages += d.Messages
		m.Bytes += d.Bytes
		reasons := map[string]int{}
		for _, r := range []map[string]int{m.reasons, d.reasons} {
			for k, v := range r {
				reasons[k] += v
			}
		}
		m.reasons, m.Reasons = reasons, reasonText(reasons)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Kind+"\x00"+out[i].Target.String() < out[j].Kind+"\x00"+out[j].Target.String()
	})
	return out
}
