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
}

// run is a run of several parts: the first, and one more after each lost
// connection while another node answers.
func (f *Failover) run(ctx context.Context, d ReplayDeps, o ReplayOptions) (*ReplayResult, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	meter := &consume.PartMeter{Meter: progress.Or(d.Progress)}
	defer meter.Meter.Done()
	d.Progress = meter
	start := d.Now()
	total, err := replayPart(ctx, d, o)
	last := total
	for n := 0; err == nil && last != nil && last.Lost != "" && ctx.Err() == nil && n < f.Nodes; n++ {
		ev := FailoverEvent{Lost: last.lostNode, Why: last.Lost, InDoubt: last.Counts.InDoubt, AtMs: d.Now().Sub(start).Milliseconds()}
		lostAt := d.Now()
		po, perr := f.nextPart(o, total, &ev)
		if perr != nil {
			ev.GaveUp = perr.Error()
		} else {
			ev.TookOver, ev.GaveUp = f.await(ctx, o.Queue, ev.Lost)
		}
		if ev.GaveUp != "" {
			total.Failovers = append(total.Failovers, ev)
			break
		}
		ev.PauseMs = d.Now().Sub(lostAt).Milliseconds()
		po.partWhy = fmt.Sprintf("failover: the connection to %s was lost (%s); going on through %s", ev.Lost, ev.Why, ev.TookOver)
		meter.Base += int64(last.Counts.Read)
		pd := d
		pd.Dial = f.Redial(ev.Lost)
		next, nerr := replayPart(ctx, pd, *po)
		if next == nil {
			ev.GaveUp = nerr.Error()
			total.Failovers = append(total.Failovers, ev)
			return total, fmt.Errorf("failover to %s: %w", ev.TookOver, nerr)
		}
		ev.InDoubtAfter = next.Counts.InDoubtEarlier
		total = mergeParts(total, next, ev)
		last, err = next, nerr
	}
	if total != nil {
		el := d.Now().Sub(start)
		total.ElapsedMs = el.Milliseconds()
		if el > 0 {
			total.PerSecond = float64(total.Counts.Replayed+total.Counts.Parked) / el.Seconds()
		}
	}
	return total, err
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
// Await) and returns its address, or why the run cannot go on.
func (f *Failover) await(ctx context.Context, queue, lost string) (node, gaveUp string) {
	conn, why := f.Await(ctx, queue, lost, 0, "answered for the queue") // a replay starts only on a DLQ without consumers
	if conn == nil {
		return "", why
	}
	defer conn.Close()
	if ctx.Err() != nil {
		return conn.RemoteAddr().String(), "interrupted"
	}
	return conn.RemoteAddr().String(), ""
}

// mergeParts is the result of a run so far (total) and its next part. The
// next part read again everything an earlier part left in the DLQ, so what
// is left is the last part's; what was done (replayed, parked, acked as
// done) adds up, and read = replayed + parked + already done + left holds.
func mergeParts(total, next *ReplayResult, ev FailoverEvent) *ReplayResult {
	t := total.Counts
	c := next.Counts
	c.Read += t.Replayed + t.Parked + t.AlreadyDone
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
