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
func (t *trace) unmet() string {
	p := t.plan
	switch p.Fault {
	case Stop:
		return t.noOtherHolder()
	case Close:
		if p.Point == AfterLock {
			return t.noOtherHolder()
		}
		if ackedBefore(t.deliveriesOf(p.Victim), t.firedAt) {
			return "" // acked on receipt: no redelivery can come, as after a kill
		}
		return t.notBack()
	case Kill:
		if p.Point == AfterAck || ackedBefore(t.deliveriesOf(p.Victim), t.firedAt) {
			return "" // nothing left to come back: a loss, if any, is the verdict
		}
		return t.notBack()
	case LagCache:
		return t.noLaggedSecond()
	case Duplicate:
		return t.noOverlap()
	case Failover:
		if why := t.failoverUnproven(); why != "" {
			return why
		}
		return t.noOtherHolder()
	case LagReplica:
		return t.noStaleReplicaRead()
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
func (t *trace) notBack() string {
	key := t.plan.Victim
	if t.repub[key] {
		return ""
	}
	for _, d := range t.deliveriesOf(key) {
		if d.from.After(t.firedAt) {
			return ""
		}
	}
	pg := t.plan.Point == AfterWrite || t.plan.Point == BeforeCommit
	if pg {
		for _, e := range t.events {
			if e.Kind == "commit" && e.Key == key && e.T > t.fired.T {
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
func (t *trace) noOtherHolder() string {
	l := t.faultLease
	victim := t.plan.Victim
	if l == nil {
		return fmt.Sprintf("%s held no lock on %s when dupctl paused it: there was no lock to expire and take over", t.fired.Lane, victim)
	}
	holder := l.slot.lane(l.inst)
	if t.plan.Fault == Failover {
		return t.noFailoverHolder(l, holder)
	}
	paused := t.plan.Fault == Stop
	for _, b := range t.leases {
		if b.lock != l.lock || (b.slot == l.slot && b.inst == l.inst) || b.from.Before(t.firedAt) {
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
			what += fmt.Sprintf(" (paused at %s, its delivery ended at %s)", t.at(t.firedAt), t.at(l.deliv.to))
		}
	}
	if l.ttl <= 0 {
		what += ": the lock has no TTL, so it never expired"
	}
	return what + "; " + t.secondWentTo(l)
}

// noFailoverHolder: after the failover, another worker must be granted
// the lost lock while its first holder still worked under it: a second
// holder after the first one's effect committed is no lock lost at all.
func (t *trace) noFailoverHolder(l *lease, holder string) string {
	if t.grantedAgain(l) != nil {
		return ""
	}
	what := fmt.Sprintf("no other worker took the lock %s that the failover lost while %s still worked on %s", l.lock, holder, t.plan.Victim)
	if until := t.workedUntil(l); until.Before(time.Unix(1<<40, 0)) {
		what += fmt.Sprintf(" (the failover at %s, its work under the lock done at %s)", t.at(t.firedAt), t.at(until))
	}
	return what + "; " + t.secondWentTo(l)
}

// grantedAgain is the lease a different worker took of the lock the
// failover lost, at or after the failover and while its first holder
// still worked under it; nil when there was none.
func (t *trace) grantedAgain(l *lease) *lease {
	until := t.workedUntil(l)
	for _, b := range t.leases {
		if b.lock == l.lock && (b.slot != l.slot || b.inst != l.inst) && !b.from.Before(t.firedAt) && b.from.Before(until) {
			return b
		}
	}
	return nil
}

// workedUntil is when a lease's holder stopped working under it: its
// delivery's first commit of the key after the lease was taken (the work
// the lock guards is done), its release, or the delivery's end, whichever
// came first.
func (t *trace) workedUntil(l *lease) time.Time {
	until := l.over()
	if l.deliv == nil {
		return until
	}
	if end := l.deliv.ended(); end.Before(until) {
		until = end
	}
	for _, seq := range l.deliv.commitSeqs {
		if at := t.start.Add(time.Duration(t.events[seq-1].T) * time.Millisecond); !at.Before(l.from) && at.Before(until) {
			until = at
		}
	}
	return until
}

// secondWentTo says where the victim's messages went after the fault
// fell on the lease's holder.
func (t *trace) secondWentTo(l *lease) string {
	var to []string
	var last *delivery
	for _, d := range t.deliveriesOf(t.plan.Victim) {
		if !d.from.After(t.firedAt) {
			continue
		}
		last = d
		if len(to) < 4 {
			to = append(to, d.slot.lane(d.inst)+" at "+t.at(d.from))
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
func (t *trace) noLaggedSecond() string {
	key := t.plan.Victim
	for _, d := range t.deliveriesOf(key) {
		if d.lagged {
			return ""
		}
	}
	held := slices.ContainsFunc(t.events, func(e Event) bool { return e.Kind == "cache-held" && e.Key == key })
	if !held {
		return fmt.Sprintf("no write to a status cache key of %s matching %q was seen, so nothing lagged", key, t.faults.cacheKeys)
	}
	return fmt.Sprintf("no second message for %s was handled while its status cache write was held back: it came after the write landed", key)
}

// noOverlap: in race, the two messages for the key must be handled at
// once.
func (t *trace) noOverlap() string {
	ds := t.deliveriesOf(t.plan.Victim)
	for i, a := range ds {
		for _, b := range ds[i+1:] {
			if b.from.Before(a.ended()) {
				return ""
			}
		}
	}
	return fmt.Sprintf("the two messages for %s were handled one after the other, never at once", t.plan.Victim)
}

// lockLostUnnoticed finds the holder the Redis cut fell on going on as the
// lock's holder - a write or a commit of the key in the same delivery -
// after another worker took the lock. An ack after an effect made under
// the lock is not one: the lock guarded the effect, not the ack.
func (t *trace) lockLostUnnoticed() []LockLoss {
	l := t.faultLease
	if t.fired == nil || t.plan.Fault != Close || t.plan.Point != AfterLock || l == nil || l.deliv == nil {
		return nil
	}
	var next *lease
	for _, b := range t.leases {
		if b.lock == l.lock && (b.slot != l.slot || b.inst != l.inst) && !b.from.Before(t.firedAt) {
			next = b
			break
		}
	}
	if next == nil {
		return nil
	}
	holder, from, until := l.slot.lane(l.inst), next.from.Sub(t.start).Milliseconds(), l.deliv.ended().Sub(t.start).Milliseconds()
	var acts []string
	for _, e := range t.events {
		if e.Lane == holder && e.Key == l.key && e.T >= from && e.T <= until && (e.Kind == "write" || e.Kind == "commit") {
			acts = append(acts, e.Line())
		}
	}
	if len(acts) == 0 {
		return nil
	}
	why := fmt.Sprintf("dupctl cut %s's Redis connection at %s, right after it took the lock %s (TTL %s); "+
		"the lock expired and %s took it at %s; %s went on as its holder, unaware: %s",
		holder, t.at(t.firedAt), l.lock, l.ttl.Round(time.Millisecond), next.slot.lane(next.inst),
		t.at(next.from), holder, strings.Join(acts[:min(3, len(acts))], "; "))
	return []LockLoss{{Key: l.key, Why: why, Evidence: t.evidence(l.key)}}
}

// noStaleReplicaRead: in replica-lag, a worker must read the victim's
// status on the replica while its replay is paused and after the write
// committed on the primary.
func (t *trace) noStaleReplicaRead() string {
	key := t.plan.Victim
	for _, s := range t.stale {
		if s.replica && s.key == key {
			return ""
		}
	}
	var after []string
	for _, e := range t.events {
		if e.Key != key || e.T < t.fired.T || len(after) >= 4 {
			continue
		}
		switch e.Kind {
		case "read":
			after = append(after, fmt.Sprintf("%s on the primary at t=%dms (%s)", e.Lane, e.T, e.Text))
		case "replica-read":
			after = append(after, fmt.Sprintf("%s on the replica at t=%dms, replay no longer paused", e.Lane, e.T))
		}
	}
	why := fmt.Sprintf("no read of %s reached the replica while its replay was paused after the write committed", key)
	if len(after) == 0 {
		return why + ": nothing read it after the fault (does the worker read its status through {replica}?); " + t.deliveredAfter()
	}
	return why + " (reads after the fault: " + strings.Join(after, "; ") + ")"
}

// deliveredAfter says where the victim's messages went after the fault.
func (t *trace) deliveredAfter() string {
	var to []string
	for _, d := range t.deliveriesOf(t.plan.Victim) {
		if d.from.After(t.firedAt) && len(to) < 4 {
			to = append(to, d.slot.lane(d.inst)+" at "+t.at(d.from))
		}
	}
	if len(to) == 0 {
		return "the second message was never delivered"
	}
	return "deliveries after the fault: " + strings.Join(to, ", ")
}

// failoverUnproven says why the real failover proved nothing ("" when it
// lost the lock). The caller holds r.mu.
func (t *trace) failoverUnproven() string {
	f := t.faults.sentinel
	switch {
	case f == nil || f.lostSeq > 0:
		return ""
	case f.newMaster == "":
		return "the failover did not complete, so the lock was never looked for on a new master"
	}
	return fmt.Sprintf("the lock %s was on the new master %s after the failover: it had replicated after all, nothing was lost",
		t.faultLease.lock, f.newMaster)
}
