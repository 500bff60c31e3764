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
	amqp "github.com/rabbitmq/amqp091-go"
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
	// Dial dials the URL's addresses again, the one whose host:port is
	// lost after the others.
	Dial func(ctx context.Context, role, lost string) (*amqp.Connection, error)
	// Journal reads back the journal the run writes, as --resume reads it.
	Journal func() (*journal.State, error)
	// Nodes is how many addresses the URL names: a run fails over at most
	// that many times.
	Nodes int
	// Wait bounds the wait for another node to answer for the DLQ (0: 30 s).
	Wait time.Duration
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

const defaultFailoverWait = 30 * time.Second

// run is a run of several parts: the first, and one more after each lost
// connection while another node answers.
func (f *Failover) run(ctx context.Context, d ReplayDeps, o ReplayOptions) (*ReplayResult, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	meter := &partMeter{Meter: progress.Or(d.Progress)}
	defer meter.Meter.Done()
	d.Progress = meter
	start := d.Now()
	total, err := replayPart(ctx, d, o)
	last := total
	for n := 0; err == nil && last != nil && last.Lost != "" && ctx.Err() == nil && n < f.Nodes; n++ {
		ev := FailoverEvent{Lost: last.lostNode, Why: last.Lost, InDoubt: last.Counts.InDoubt, AtMs: d.Now().Sub(start).Milliseconds()}
		lostAt := d.Now()
		po, perr := f.nextPart(o, total, &ev)
		if perr == nil {
			ev.TookOver = f.await(ctx, o.Queue, ev.Lost)
		}
		switch {
		case perr != nil:
			ev.GaveUp = perr.Error()
		case ctx.Err() != nil:
			ev.GaveUp = "interrupted"
		case ev.TookOver == "":
			ev.GaveUp = fmt.Sprintf("no other node answered for the queue within %s", f.wait())
		}
		if ev.GaveUp != "" {
			total.Failovers = append(total.Failovers, ev)
			break
		}
		ev.PauseMs = d.Now().Sub(lostAt).Milliseconds()
		po.partWhy = fmt.Sprintf("failover: the connection to %s was lost (%s); going on through %s", ev.Lost, ev.Why, ev.TookOver)
		meter.base += int64(last.Counts.Read)
		pd, lost := d, ev.Lost
		pd.Dial = func(ctx context.Context, role string) (*amqp.Connection, error) { return f.Dial(ctx, role, lost) }
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

func (f *Failover) wait() time.Duration {
	if f.Wait <= 0 {
		return defaultFailoverWait
	}
	return f.Wait
}

// await waits for another node to answer for the queue (consume.AwaitNode)
// and returns its address ("" when none did within the wait).
func (f *Failover) await(ctx context.Context, queue, lost string) string {
	dial := func(ctx context.Context) (*amqp.Connection, error) { return f.Dial(ctx, "read", lost) }
	return consume.AwaitNode(ctx, dial, queue, 0, f.wait()) // a replay starts only on a DLQ without consumers
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

// partMeter is the run's progress meter as each part sees it: its total
// counts on from what earlier parts read, and only the run ends it.
type partMeter struct {
	progress.Meter
	base int64
}

func (p *partMeter) SetTotal(n int64) { p.Meter.SetTotal(p.base + n) }
func (p *partMeter) Done()            {}
