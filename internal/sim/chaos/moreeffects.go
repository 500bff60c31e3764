package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
)

// A duplicate's cause accounts for two effects: the first run and the one
// that ran again. A key counted three times or more has its further
// effects said too - which delivery made each and how that delivery came
// about - from what the proxies recorded, so that no counted effect is
// left for the reader to find in the evidence alone.

// moreEffects explains the key's effects beyond those its cause accounts
// for (the writers its deciding events name, two at least): each further
// delivery that committed a write for the key, in the order of its first
// commit. events are the run's, in the order they were recorded (a seq
// is its place there), start its t=0. "" when nothing is beyond.
func moreEffects(k *duplicated, events []Event, start time.Time) string {
	writers := slices.Clone(k.writers)
	slices.SortStableFunc(writers, func(a, b *delivery) int { return firstCommit(a) - firstCommit(b) })
	explained := map[*delivery]bool{}
	for _, w := range writers {
		if k.names(w) {
			explained[w] = true
		}
	}
	for _, w := range writers { // a cause that names one writer speaks of the other run too
		if len(explained) >= 2 {
			break
		}
		explained[w] = true
	}
	covered := max(2, len(explained))
	beyond := k.effects.n - covered
	if beyond <= 0 {
		return ""
	}
	var rest []*delivery
	for _, w := range writers {
		if !explained[w] {
			rest = append(rest, w)
		}
	}
	at := func(t time.Time) string { return fmt.Sprintf("t=%dms", t.Sub(start).Milliseconds()) }
	var parts []string
	for i, w := range rest {
		what := writerText(w, k.ds, at, events)
		if len(rest) > beyond {
			parts = append(parts, what)
			continue
		}
		parts = append(parts, effectName(covered+i+1)+": "+what)
	}
	switch {
	case len(rest) > beyond:
		return fmt.Sprintf("; beyond the two above, %s counted, and these further deliveries committed a write for %s "+
			"(the count does not say which of them made %s): %s", english.Count(beyond, "more effect was", "more effects were"),
			k.key, english.Plural(beyond, "it", "them"), strings.Join(parts, "; "))
	case len(rest) < beyond:
		parts = append(parts, fmt.Sprintf("%s: the proxies saw no further delivery commit a write for %s "+
			"(a write retried within one delivery, or one not naming the key, is not told apart)",
			english.Count(beyond-len(rest), "more effect was counted", "more effects were counted"), k.key))
	}
	return "; " + strings.Join(parts, "; ")
}

// firstCommit is the event of a delivery's first commit of its key (0:
// none recorded).
func firstCommit(d *delivery) int {
	if len(d.commitSeqs) == 0 {
		return 0
	}
	return d.commitSeqs[0]
}

// names reports whether the cause's deciding events name a delivery: its
// start, end, reads or commits, or a lock it took.
func (k *duplicated) names(d *delivery) bool {
	in := func(seq int) bool { return seq > 0 && slices.Contains(k.deciding, seq) }
	if in(d.seq) || in(d.endSeq) || slices.ContainsFunc(d.commitSeqs, in) || slices.ContainsFunc(d.checkSeqs, in) {
		return true
	}
	return slices.ContainsFunc(k.leases, func(l *lease) bool { return l.deliv == d && in(l.seq) })
}

// writerText says which delivery committed a write (its copy, how it came
// about, when it committed) and whether it checked first.
func writerText(w *delivery, ds []*delivery, at func(time.Time) string, events []Event) string {
	check := "without reading " + w.key + " first"
	if w.readFirst {
		check = "after a check that found it not done (" + checksText(w) + ")"
	}
	when := ""
	if seq := firstCommit(w); seq > 0 && seq <= len(events) {
		when = fmt.Sprintf(" at t=%dms", events[seq-1].T)
	}
	return fmt.Sprintf("%s's delivery of %s, %s, committed a write for it%s %s",
		w.slot.lane(w.inst), w.key, deliveryOrigin(w, ds, at), when, check)
}

// deliveryOrigin says how a delivery came about: a redelivery (after
// which delivery ended unacked), another of dupctl's messages for the
// key, or a message the worker published again.
func deliveryOrigin(w *delivery, ds []*delivery, at func(time.Time) string) string {
	if w.redelivered {
		// The last delivery before it that ended unacked: its end may be
		// recorded after the redelivery began (the broker requeues as the
		// server side closes, the proxy records the end as the client's
		// side does).
		var prev *delivery
		for _, d := range ds {
			if d != w && d.end != "" && d.end != "ack" && d.end != "auto-ack" && d.from.Before(w.from) {
				prev = d
			}
		}
		if prev == nil {
			return "redelivered at " + at(w.from)
		}
		return fmt.Sprintf("redelivered at %s after %s's delivery of it ended unacked (%s)", at(w.from), prev.slot.lane(prev.inst),
			unackedText(prev))
	}
	first := !slices.ContainsFunc(ds, func(d *delivery) bool { return d != w && d.from.Before(w.from) })
	switch {
	case w.copyN > 1:
		return fmt.Sprintf("delivered at %s with dupctl's message #%d for it (the scenario's second)", at(w.from), w.copyN)
	case first:
		return "its first delivery, at " + at(w.from)
	case w.copyN == 1:
		return fmt.Sprintf("delivered at %s with dupctl's first message for it again, not marked redelivered", at(w.from))
	}
	return fmt.Sprintf("delivered at %s with a message for it that dupctl did not publish (the worker published it again)", at(w.from))
}

// unackedText says how a delivery ended without an ack.
func unackedText(d *delivery) string {
	how := map[string]string{"returned": "its connection closed", "requeued": "sent back with a nack", "rejected": "rejected"}[d.end]
	if d.faulted {
		how += ", the run's fault fell on it"
	}
	return how
}

// effectName words the nth effect: "the third effect", "effect 11".
func effectName(n int) string {
	words := []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}
	if n >= 1 && n <= len(words) {
		return "the " + words[n-1] + " effect"
	}
	return fmt.Sprintf("effect %d", n)
}
