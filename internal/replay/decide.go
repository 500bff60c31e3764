package replay

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/journal"
)

// decide is every rule of the replay for one message, in order. It returns
// the publish to make, or nil when the message is settled or held.
func (e *engine) decide(it *item, succeeded map[string]bool, now time.Time) *pending {
	o, c := e.o, &e.res.Counts
	m, in := it.m, &it.in
	if in.Origin.ReplayRun != "" && in.Origin.ReplayRun == o.Rewrite.Run {
		// One of this run's own replays died again and came back: never
		// replayed twice in one run.
		c.Bounced++
		e.problem(it, "bounced", "replayed by this run and dead-lettered again: the failure is not fixed")
		// Journaled so the run's picture shows where the loop guard held it.
		e.d.Journal.Add(journal.Record{T: journal.Skip, FP: it.fp, ID: m.Props.MessageID, Why: SkipBounced})
		e.hold(it)
		if c.Bounced > o.MaxBounces && e.stop == "" {
			e.stop = fmt.Sprintf("%s replayed by this run came back (bounced)", msgs(c.Bounced))
		}
		return nil
	}
	if it.past {
		// Read past the count at the start, to look for bounces only: a
		// new dead letter stays for a later run.
		c.New++
		e.hold(it)
		return nil
	}
	if o.Resume != nil && e.resumed(it) {
		return nil
	}
	if len(o.Filter.Groups) > 0 {
		e.groups[in.Group] = true
	}
	if !o.Filter.Match(m, in, now) {
		c.Filtered++
		e.hold(it)
		return nil
	}
	if o.Max > 0 && e.selected >= o.Max {
		c.OverMax++
		e.hold(it)
		return nil
	}
	if o.MaxReplays > 0 && in.Origin.ReplayCount >= int64(o.MaxReplays) {
		// The reason travels in the parked message's dupctl-parked-why
		// header, read where no option has a name: the limit in words.
		return e.park(it, fmt.Sprintf("replayed %d times already (limit %d)", in.Origin.ReplayCount, o.MaxReplays))
	}
	if succeeded != nil {
		if p, done := e.alreadySucceeded(it, succeeded); done {
			return p
		}
	}
	dst, ok := o.Router.Route(m, in)
	if ok && dst.Exchange == "" && dst.RoutingKey == o.Queue && o.Queue != "" {
		ok = false // its origin is this DLQ itself: replaying would loop
	}
	if !ok {
		c.NoDestination++
		e.problem(it, "no-destination", "no x-death or x-original-* headers (or they name this DLQ): give {To}")
		e.d.Journal.Add(journal.Record{T: journal.Skip, FP: it.fp, ID: m.Props.MessageID, Why: "no destination"})
		e.hold(it)
		return nil
	}
	it.dst = dst
	e.selected++
	e.count(dst, "replay", it)
	if in.Class == classify.NonRetryable {
		c.NonRetryable++ // the run sends it back as the dry run said it would
	}
	if !o.Yes {
		e.hold(it)
		return nil
	}
	return e.newPending(it, "replay")
}

// alreadySucceeded parks or holds a message whose idempotency key the
// source of truth has as SUCCEEDED, and reports whether it did.
func (e *engine) alreadySucceeded(it *item, succeeded map[string]bool) (*pending, bool) {
	o, c, m := e.o, &e.res.Counts, it.m
	key, _, ok := classify.FirstOf(m, o.IdempotencyKeys)
	switch {
	case !ok:
		c.NoKey++
	case succeeded[key]:
		c.Succeeded++
		e.d.Journal.Add(journal.Record{T: journal.Skip, FP: it.fp, ID: m.Props.MessageID, Why: "idempotency key " + key + " already SUCCEEDED"})
		if o.ParkSucceeded {
			return e.park(it, "idempotency key "+key+" already SUCCEEDED"), true
		}
		c.SucceededLeft++
		e.hold(it)
		return nil, true
	}
	return nil, false
}

// resumed settles or holds a copy an earlier part of the run stands for,
// and reports whether it did; a copy it returns false for is decided
// afresh (with --retry-in-doubt, its publish names the earlier one).
func (e *engine) resumed(it *item) bool {
	c := &e.res.Counts
	seq, cl := e.book.Take(it.fp, it.occ, it.m.Redelivered)
	switch cl {
	case journal.ClaimDone:
		// At its destination, and this copy's ack never left: settle it.
		c.AlreadyDone++
		if e.src.bound() >= 0 {
			it.seq = seq
			e.d.Journal.Add(journal.Record{T: journal.ResumedAck, Seq: seq})
			e.ack(it)
		}
		return true
	case journal.ClaimDoubt, journal.ClaimAckSent:
		if e.o.RetryInDoubt {
			it.of = seq
			return false
		}
		c.InDoubtEarlier++
		why := "published by an earlier part of this run, confirm never seen: left in the DLQ (check the destination, then {RetryInDoubt})"
		if cl == journal.ClaimAckSent {
			why = "an earlier part of this run published a copy with this exact content and sent its DLQ ack, then stopped before the DLQ " +
				"showed the ack applied: this may be that copy (the ack was lost) or an identical dead letter not yet replayed. " +
				"Left in the DLQ (check the destination, then {RetryInDoubt})"
		}
		e.problem(it, "in-doubt", fmt.Sprintf("%s [publish %d of run %s]", why, seq, e.o.Rewrite.Run))
		e.hold(it)
		return true
	}
	return false
}

func (e *engine) park(it *item, why string) *pending {
	q := e.o.ParkQueue
	it.dst = classify.Target{RoutingKey: q, From: "park"}
	it.in.ClassRule = why
	e.count(it.dst, "park", it)
	if !e.o.Yes {
		e.hold(it)
		return nil
	}
	return e.newPending(it, "park")
}

func (e *engine) newPending(it *item, kind string) *pending {
	e.seq++
	seq := e.seq
	if e.o.Resume != nil {
		seq += e.o.Resume.MaxSeq
	}
	it.seq = seq
	p := &pending{it: it, seq: seq, kind: kind, id: fmt.Sprintf("%s-%d", e.o.Rewrite.Run, seq)}
	e.d.Journal.Add(journal.Record{T: journal.Pub, Seq: seq, FP: it.fp, Occ: it.occ, Of: it.of, ID: it.m.Props.MessageID, Kind: kind,
		To: it.dst.String()})
	return p
}

func (e *engine) count(t classify.Target, kind string, it *item) {
	key := kind + "\x00" + t.String()
	d := e.dest[key]
	if d == nil {
		d = &DestCount{Target: t, Kind: kind, reasons: map[string]int{}}
		e.dest[key] = d
	}
	d.Messages++
	d.Bytes += int64(len(it.m.Body))
	d.reasons[it.in.Reason]++
}

func (e *engine) problem(it *item, what, why string) {
	if len(e.res.Problems) >= maxProblems {
		return
	}
	e.res.Problems = append(e.res.Problems, MessageRef{MessageID: it.m.Props.MessageID, FP: it.fp, What: what, Why: why})
}

func reasonText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// lookup asks the idempotency store about a batch's keys at once.
func (e *engine) lookup(ctx context.Context, items []*item) (map[string]bool, error) {
	if e.d.Idempotency == nil {
		return nil, nil
	}
	var keys []string
	for _, it := range items {
		if k, _, ok := classify.FirstOf(it.m, e.o.IdempotencyKeys); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return map[string]bool{}, nil
	}
	got, err := e.d.Idempotency.Succeeded(ctx, keys)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return map[string]bool{}, nil
		}
		return nil, fmt.Errorf("idempotency look-up in %s: %w", e.d.Idempotency, err)
	}
	return got, nil
}
