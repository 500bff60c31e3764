package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A fault proves something only when what its scenario is about followed
// it: the expired lock taken by another worker, the message back after a
// kill, a second message handled while the cache lagged, two messages at
// once. This file says, from what the proxies saw, what a run whose fault
// came still lacked; such a run is not reached (RuleNotReached) and is
// tried again (Options.Attempts), never "ok".

// unmet says what the run lacked after its fault for the scenario's
// question to be asked; "" when it happened. The caller holds r.mu.
func (r *run) unmet() string {
	p := r.plan
	switch p.Fault {
	case Stop:
		return r.noOtherHolder()
	case Close:
		if p.Point == AfterLock {
			return r.noOtherHolder()
		}
		if ackedBefore(r.deliveriesOf(p.Victim), r.firedAt) {
			return "" // acked on receipt: no redelivery can come, as after a kill
		}
		return r.notBack()
	case Kill:
		if p.Point == AfterAck || ackedBefore(r.deliveriesOf(p.Victim), r.firedAt) {
			return "" // nothing left to come back: a loss, if any, is the verdict
		}
		return r.notBack()
	case LagCache:
		return r.noLaggedSecond()
	case Duplicate:
		return r.noOverlap()
	case Failover:
		if why := r.failoverUnproven(); why != "" {
			return why
		}
		return r.noOtherHolder()
	case LagReplica:
		return r.noStaleReplicaRead()
	}
	return ""
}

// ackedBefore reports whether every one of a key's deliveries that began
// before the fault had been acked by then (a worker that acks on
// receipt): the broker has forgotten the message, so whatever the fault
// did - a kill, a dropped connection - no redelivery can follow it.
func ackedBefore(ds []*delivery, fault time.Time) bool {
	began := false
	for _, d := range ds {
		if d.from.After(fault) {
			continue
		}
		began = true
		if (d.end != "ack" && d.end != "auto-ack") || d.to.After(fault) {
			return false
		}
	}
	return began
}

// notBack: after a kill or a dropped connection, the victim's message must
// be handled again - delivered again, republished by the worker, or (a
// dropped PostgreSQL connection) written again in a later transaction.
func (r *run) notBack() string {
	key := r.plan.Victim
	if r.repub[key] {
		return ""
	}
	for _, d := range r.deliveriesOf(key) {
		if d.from.After(r.firedAt) {
			return ""
		}
	}
	pg := r.plan.Point == AfterWrite || r.plan.Point == BeforeCommit
	if pg {
		for _, e := range r.events {
			if e.Kind == "commit" && e.Key == key && e.T > r.fired.T {
				return ""
			}
		}
		return fmt.Sprintf("nothing handled %s again after the fault: the broker never delivered it again "+
			"and no later transaction wrote it", key)
	}
	return fmt.Sprintf("the broker never delivered %s again after the fault", key)
}

// noOtherHolder: after lock-expiry's pause, the Redis cut or the
// failover, another worker must take the lock the fault fell on - while
// the paused holder (or the one whose lock the failover lost) still held
// its message, or, after a cut, at all (a holder that noticed the cut and
// let go is what the cut asks for).
func (r *run) noOtherHolder() string {
	l := r.faultLease
	victim := r.plan.Victim
	if l == nil {
		return fmt.Sprintf("%s held no lock on %s when dupctl paused it: there was no lock to expire and take over", r.fired.Lane, victim)
	}
	holder := l.slot.lane(l.inst)
	if r.plan.Fault == Failover {
		return r.noFailoverHolder(l, holder)
	}
	paused := r.plan.Fault == Stop
	for _, b := range r.leases {
		if b.lock != l.lock || (b.slot == l.slot && b.inst == l.inst) || b.from.Before(r.firedAt) {
			continue
		}
		if !paused || l.deliv == nil || b.from.Before(l.deliv.ended()) {
			return ""
		}
	}
	what := fmt.Sprintf("no other worker took the lock %s after dupctl cut %s's Redis connection", l.lock, holder)
	if paused {
		what = fmt.Sprintf("no other worker took the lock %s while %s held %s", l.lock, holder, victim)
		if l.deliv != nil && l.deliv.end != "" {
			what += fmt.Sprintf(" (paused at %s, its delivery ended at %s)", r.at(r.firedAt), r.at(l.deliv.to))
		}
	}
	if l.ttl <= 0 {
		what += ": the lock has no TTL, so it never expired"
	}
	return what + "; " + r.secondWentTo(l)
}

// noFailoverHolder: after the failover, another worker must be granted
// the lost lock while its first holder still worked under it: a second
// holder after the first one's effect committed is no lock lost at all.
func (r *run) noFailoverHolder(l *lease, holder string) string {
	if r.grantedAgain(l) != nil {
		return ""
	}
	what := fmt.Sprintf("no other worker took the lock %s that the failover lost while %s still worked on %s", l.lock, holder, r.plan.Victim)
	if until := r.workedUntil(l); until.Before(time.Unix(1<<40, 0)) {
		what += fmt.Sprintf(" (the failover at %s, its work under the lock done at %s)", r.at(r.firedAt), r.at(until))
	}
	return what + "; " + r.secondWentTo(l)
}

// grantedAgain is the lease a different worker took of the lock the
// failover lost, at or after the failover and while its first holder
// still worked under it; nil when there was none.
func (r *run) grantedAgain(l *lease) *lease {
	until := r.workedUntil(l)
	for _, b := range r.leases {
		if b.lock == l.lock && (b.slot != l.slot || b.inst != l.inst) && !b.from.Before(r.firedAt) && b.from.Before(until) {
			return b
		}
	}
	return nil
}

// workedUntil is when a lease's holder stopped working under it: its
// delivery's first commit of the key after the lease was taken (the work
// the lock guards is done), its release, or the delivery's end, whichever
// came first.
func (r *run) workedUntil(l *lease) time.Time {
	until := l.over()
	if l.deliv == nil {
		return until
	}
	if end := l.deliv.ended(); end.Before(until) {
		until = end
	}
	for _, seq := range l.deliv.commitSeqs {
		if t := r.start.Add(time.Duration(r.events[seq-1].T) * time.Millisecond); !t.Before(l.from) && t.Before(until) {
			until = t
		}
	}
	return until
}

// secondWentTo says where the victim's messages went after the fault
// fell on the lease's holder.
func (r *run) secondWentTo(l *lease) string {
	var to []string
	var last *delivery
	for _, d := range r.deliveriesOf(r.plan.Victim) {
		if !d.from.After(r.firedAt) {
			continue
		}
		last = d
		if len(to) < 4 {
			to = append(to, d.slot.lane(d.inst)+" at "+r.at(d.from))
		}
	}
	switch {
	case last == nil:
		return "the second message was never delivered"
	case last.slot == l.slot:
		return fmt.Sprintf("the second message went to %s itself (deliveries after the fault: %s)", l.slot.lane(l.inst), strings.Join(to, ", "))
	}
	return "deliveries after the fault: " + strings.Join(to, ", ")
}

// noLaggedSecond: in stale-cache, a second message for the key must be
// handled while its status cache write is held back.
func (r *run) noLaggedSecond() string {
	key := r.plan.Victim
	for _, d := range r.deliveriesOf(key) {
		if d.lagged {
			return ""
		}
	}
	held := slices.ContainsFunc(r.events, func(e Event) bool { return e.Kind == "cache-held" && e.Key == key })
	if !held {
		return fmt.Sprintf("no write to a status cache key of %s matching %q was seen, so nothing lagged", key, r.o.CacheKeys)
	}
	return fmt.Sprintf("no second message for %s was handled while its status cache write was held back: it came after the write landed", key)
}

// noOverlap: in race, the two messages for the key must be handled at
// once.
func (r *run) noOverlap() string {
	ds := r.deliveriesOf(r.plan.Victim)
	for i, a := range ds {
		for _, b := range ds[i+1:] {
			if b.from.Before(a.ended()) {
				return ""
			}
		}
	}
	return fmt.Sprintf("the two messages for %s were handled one after the other, never at once", r.plan.Victim)
}

// lockLostUnnoticed finds the holder the Redis cut fell on going on as the
// lock's holder - a write or a commit of the key in the same delivery -
// after another worker took the lock. An ack after an effect made under
// the lock is not one: the lock guarded the effect, not the ack.
func (r *run) lockLostUnnoticed() []LockLoss {
	l := r.faultLease
	if r.fired == nil || r.plan.Fault != Close || r.plan.Point != AfterLock || l == nil || l.deliv == nil {
		return nil
	}
	var next *lease
	for _, b := range r.leases {
		if b.lock == l.lock && (b.slot != l.slot || b.inst != l.inst) && !b.from.Before(r.firedAt) {
			next = b
			break
		}
	}
	if next == nil {
		return nil
	}
	holder, from, until := l.slot.lane(l.inst), next.from.Sub(r.start).Milliseconds(), l.deliv.ended().Sub(r.start).Milliseconds()
	var acts []string
	for _, e := range r.events {
		if e.Lane == holder && e.Key == l.key && e.T >= from && e.T <= until && (e.Kind == "write" || e.Kind == "commit") {
			acts = append(acts, e.Line())
		}
	}
	if len(acts) == 0 {
		return nil
	}
	why := fmt.Sprintf("dupctl cut %s's Redis connection at %s, right after it took the lock %s (TTL %s); "+
		"the lock expired and %s took it at %s; %s went on as its holder, unaware: %s",
		holder, r.at(r.firedAt), l.lock, l.ttl.Round(time.Millisecond), next.slot.lane(next.inst),
		r.at(next.from), holder, strings.Join(acts[:min(3, len(acts))], "; "))
	return []LockLoss{{Key: l.key, Why: why, Evidence: r.evidence(l.key)}}
}
