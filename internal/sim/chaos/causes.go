package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/cause"
)

// This file names why a key's side effect ran more than once, from what the
// proxies saw: one detector per cause of the cause model, run in its
// precedence (internal/cause); the evidence each needs on the wire is
// written down there (Cause.OnWire).

// duplicated is what the proxies saw of one key whose effect ran more than
// once.
type duplicated struct {
	key     string
	effects effectRow
	ds      []*delivery // the key's deliveries, in order
	writers []*delivery // those that committed a write for it
	leases  []*lease    // the locks taken for it
	// deciding are the events (Event.Seq) the detector that named the
	// cause rests on, for the picture to ring.
	deciding []int
}

// decide records the events a cause rests on (0s, never seen, are left
// out).
func (k *duplicated) decide(seqs ...int) {
	for _, s := range seqs {
		if s > 0 && !slices.Contains(k.deciding, s) {
			k.deciding = append(k.deciding, s)
		}
	}
}

// wireDetector reports whether its cause's evidence holds for the key,
// and why in one sentence.
type wireDetector func(*trace, *duplicated) (why string, ok bool)

var wireDetectors = cause.NewDetectors(map[string]wireDetector{
	cause.UnstableKey.Code:     (*trace).unstableKey,
	cause.StaleCache.Code:      (*trace).staleCache,
	cause.UnlockNoToken.Code:   (*trace).unlockNoToken,
	cause.LockFailover.Code:    (*trace).lockFailover,
	cause.LockExpiry.Code:      (*trace).lockExpiry,
	cause.LockKeyJobID.Code:    (*trace).lockKeyJobID,
	cause.NonAtomicCommit.Code: (*trace).nonAtomic,
	cause.Redelivery.Code:      (*trace).redelivery,
	cause.Race.Code:            (*trace).race,
})

// CauseOrder lists the causes worker chaos detects, in the order it tries
// them: the cause model's precedence (internal/cause holds it so).
func CauseOrder() []string { return wireDetectors.Codes() }

// cause names the first cause, in precedence, whose evidence the wire
// shows. Where none does, the cause is "unexplained" and says what would
// tell.
func (t *trace) cause(key string, e effectRow) (code, why string, deciding []int) {
	k := &duplicated{key: key, effects: e, ds: t.deliveriesOf(key), leases: t.leasesOf(key)}
	for _, d := range k.ds {
		if d.committed > 0 {
			k.writers = append(k.writers, d)
		}
	}
	for code, detect := range wireDetectors.All() {
		if why, ok := detect(t, k); ok {
			slices.Sort(k.deciding)
			return code, why + moreEffects(k, t.events, t.start), k.deciding
		}
	}
	return cause.RuleUnexplained.Code, t.unexplained(k) + moreEffects(k, t.events, t.start), nil
}

// unstableKey: the effects were made under several idempotency keys, or
// two writers wrote different values derived from the key.
func (t *trace) unstableKey(k *duplicated) (string, bool) {
	if e := k.effects; e.idem != nil && *e.idem > 1 {
		for _, d := range k.writers {
			k.decide(d.commitSeqs...)
		}
		return fmt.Sprintf("the %d effects on %s were made under %d different idempotency keys (%s): "+
			"each attempt derived a new key, so none recognised the other", e.n, k.key, *e.idem, t.idemFrom()), true
	}
	for i, a := range k.writers {
		for _, b := range k.writers[i+1:] {
			if va, vb := strings.Join(a.values, ", "), strings.Join(b.values, ", "); va != "" && vb != "" && va != vb {
				k.decide(a.commitSeqs...)
				k.decide(b.commitSeqs...)
				return fmt.Sprintf("the two runs on %s wrote different values derived from it (%s wrote %s; %s wrote %s): "+
					"an idempotency key that changes per attempt recognises nothing", k.key, a.slot.lane(a.inst), va, b.slot.lane(b.inst), vb), true
			}
		}
	}
	return "", false
}

// staleCache: a worker read the key's status from the cache while the
// status write was held back, or on the replica while its replay was
// paused after the key's write committed on the primary (the replica is
// the cache, its replay lag the cache's lag). A replica read by a
// delivery that then wrote the key is the one preferred.
func (t *trace) staleCache(k *duplicated) (string, bool) {
	var onReplica *staleRead
	for i, s := range t.stale {
		wrote := s.deliv != nil && s.deliv.committed > 0
		if s.key == k.key && s.replica && (onReplica == nil || wrote && !(onReplica.deliv != nil && onReplica.deliv.committed > 0)) {
			onReplica = &t.stale[i]
		}
	}
	if onReplica != nil {
		return t.staleReplica(k, *onReplica), true
	}
	for _, s := range t.stale {
		if s.key == k.key {
			k.decide(s.seq)
			return fmt.Sprintf("at %s %s read the status of %s from the cache while the first run's status write was still on its way "+
				"(the cache lagged by %s), found nothing and ran the effect again", t.at(s.at), s.slot.lane(s.inst), k.key, t.faults.cacheLag), true
		}
	}
	return "", false
}

// unlockNoToken: a plain DEL of another worker's lock, then a new holder
// while the old one still worked.
func (t *trace) unlockNoToken(k *duplicated) (string, bool) {
	for _, f := range t.foreign {
		if f.key != k.key {
			continue
		}
		holder := f.of.slot.lane(f.of.inst)
		for _, l := range k.leases {
			if l.from.After(f.at) && (l.slot != f.of.slot || l.inst != f.of.inst) && (f.of.deliv == nil || f.of.deliv.ended().After(l.from)) {
				k.decide(f.seq, l.seq)
				return fmt.Sprintf("at %s %s deleted the lock of %s that %s held (plain DEL, no token check); "+
					"at %s %s took the lock while %s was still working", t.at(f.at), f.by, k.key, holder, t.at(l.from), l.slot.lane(l.inst), holder), true
			}
		}
	}
	return "", false
}

// lockFailover: dupctl's failover took the lock away right after a worker
// acquired it, and a different worker was granted the same lock while the
// first still worked under it. Only the failover fault deletes a lock, so
// no other run's leases can pass for it.
// On a Sentinel setup the failover is real, and counts only when the
// lock was found missing on the new master.
func (t *trace) lockFailover(k *duplicated) (string, bool) {
	a, f := t.faultLease, t.faults.sentinel
	if t.plan.Fault != Failover || t.fired == nil || a == nil || a.key != k.key || (f != nil && f.lostSeq == 0) {
		return "", false
	}
	b := t.grantedAgain(a)
	if b == nil {
		return "", false
	}
	k.decide(a.seq, t.fired.Seq, b.seq)
	how := "Redis failed over right after (played at dupctl's proxy), before the lock replicated, so the new master did not have it"
	if f != nil {
		k.decide(f.lostSeq)
		how = fmt.Sprintf("the Sentinels failed Redis over right after (a real failover: %s promoted in place of %s), "+
			"before the lock replicated, and the new master did not have it", f.newMaster, f.master)
	}
	holder := a.slot.lane(a.inst)
	return fmt.Sprintf("%s took the lock %s at %s; %s; at %s it granted the same lock to %s while %s still worked on %s, "+
		"and both ran the effect (nothing but an idempotency record or a fencing token could have stopped the second)",
		holder, a.lock, t.at(a.from), how, t.at(b.from), b.slot.lane(b.inst), holder, k.key), true
}

// lockExpiry: a lease that expired while its holder still worked, and a
// second holder of the same lock.
func (t *trace) lockExpiry(k *duplicated) (string, bool) {
	for i, a := range k.leases {
		for _, b := range k.leases[i+1:] {
			if a.lock != b.lock || (a.slot == b.slot && a.inst == b.inst) || a.ttl <= 0 {
				continue
			}
			stillWorking := a.deliv == nil || a.deliv.ended().After(b.from)
			if !b.from.Before(a.expires) && (a.released.IsZero() || a.released.After(b.from)) && stillWorking {
				cut := ""
				if a == t.faultLease && t.plan.Fault == Close {
					cut = " (dupctl had cut its Redis connection, so it could neither renew nor release the lock)"
				}
				k.decide(a.seq, b.seq)
				if a == t.faultLease && t.fired != nil {
					k.decide(t.fired.Seq)
				}
				return fmt.Sprintf("%s took the lock %s at %s with a TTL of %s and still held %s unfinished when the lock expired%s; "+
					"at %s %s took the same lock and ran the effect too",
					a.slot.lane(a.inst), a.lock, t.at(a.from), a.ttl.Round(time.Millisecond), k.key, cut, t.at(b.from), b.slot.lane(b.inst)), true
			}
		}
	}
	return "", false
}

// lockKeyJobID: two holders at once under different lock keys.
func (t *trace) lockKeyJobID(k *duplicated) (string, bool) {
	for i, a := range k.leases {
		for _, b := range k.leases[i+1:] {
			if a.lock != b.lock && (a.slot != b.slot || a.inst != b.inst) && b.from.Before(a.over()) {
				k.decide(a.seq, b.seq)
				return fmt.Sprintf("%s held %s while %s held %s, both for %s: the lock key is built from something per message, not the business key",
					a.slot.lane(a.inst), a.lock, b.slot.lane(b.inst), b.lock, k.key), true
			}
		}
	}
	return "", false
}

// nonAtomic: a crash, or a lost commit reply, after the first write and
// before the rest of the commit, and a later delivery that checked - in
// the database or in a status cache - found nothing, because the status
// was never written.
func (t *trace) nonAtomic(k *duplicated) (string, bool) {
	p := t.plan
	if t.fired == nil || (p.Fault != Kill && p.Fault != Close) || p.Point != AfterWrite || p.Victim != k.key {
		return "", false
	}
	how := "the worker died before the rest of its commit"
	if p.Fault == Close {
		how = "its reply was lost with the connection, so the worker failed before the rest of its commit"
	}
	for _, d := range k.writers {
		if !d.faulted && d.readFirst {
			k.decide(t.fired.Seq)
			for _, w := range k.writers {
				if w.faulted {
					k.decide(w.commitSeqs...)
				}
			}
			k.decide(d.checkSeqs...)
			return fmt.Sprintf("the first run's write for %s committed and %s, so its status was never written; at %s %s checked "+
				"before writing (%s), found it not done, and ran the effect again", k.key, how, t.at(d.from), d.slot.lane(d.inst), checksText(d)), true
		}
	}
	return "", false
}

// checksText is what a delivery read of its key before its first write.
func checksText(d *delivery) string {
	if len(d.checks) > 2 {
		return strings.Join(d.checks[:2], "; ") + fmt.Sprintf("; %d more", len(d.checks)-2)
	}
	return strings.Join(d.checks, "; ")
}

// redelivery: a delivery that ended without an ack (its connection
// closed, or the fault came before its ack), then a redelivered copy that
// committed a write.
func (t *trace) redelivery(k *duplicated) (string, bool) {
	for i, a := range k.ds {
		if a.end != "returned" && !(a.faulted && a.end != "ack") {
			continue
		}
		for _, b := range k.ds[i+1:] {
			if b.redelivered && b.committed > 0 {
				k.decide(a.endSeq, b.seq)
				if a.faulted && t.fired != nil {
					k.decide(t.fired.Seq)
				}
				k.decide(b.checkSeqs...)
				check := "without reading " + k.key + " first (no read of it in PostgreSQL or Redis): nothing checked whether it was done"
				if b.readFirst {
					check = "after a check that found it not done (" + checksText(b) + ")"
				}
				return fmt.Sprintf("%s's delivery of %s ended without an ack (%s); the broker redelivered it to %s at %s, "+
					"which ran the effect again %s", a.slot.lane(a.inst), k.key, t.endText(a), b.slot.lane(b.inst), t.at(b.from), check), true
			}
		}
	}
	return "", false
}

// race: two deliveries at once with no lock taken for the key.
func (t *trace) race(k *duplicated) (string, bool) {
	for i, a := range k.ds {
		for _, b := range k.ds[i+1:] {
			if b.from.Before(a.ended()) && len(k.leases) == 0 {
				k.decide(a.seq, b.seq)
				return fmt.Sprintf("%s and %s handled %s at the same time and neither took a lock on it",
					a.slot.lane(a.inst), b.slot.lane(b.inst), k.key), true
			}
		}
	}
	return "", false
}

// unexplained says what the wire shows of a duplicate no cause explains,
// and what is missing to tell.
func (t *trace) unexplained(k *duplicated) string {
	why := fmt.Sprintf("%s ran %d times; what dupctl saw on the wire matches no known cause", k.key, k.effects.n)
	for _, b := range k.writers[min(1, len(k.writers)):] {
		if !b.redelivered && !b.readFirst {
			return why + fmt.Sprintf(" (at %s %s handled another message for %s and wrote without reading it first: "+
				"nothing checked whether it was done)", t.at(b.from), b.slot.lane(b.inst), k.key)
		}
	}
	if len(k.writers) < 2 {
		why += " (the proxies saw fewer than two committed writes naming the key: does the worker write the effect through {postgres}, " +
			"with the key as a parameter?)"
	}
	return why
}

// staleReplica words a duplicate whose second run read the key's status
// on the lagging replica.
func (t *trace) staleReplica(k *duplicated, s staleRead) string {
	first := ""
	for _, d := range k.writers {
		if d != s.deliv && len(d.commitSeqs) > 0 {
			first = fmt.Sprintf("%s's write for %s committed on the primary at t=%dms", d.slot.lane(d.inst), k.key,
				t.events[d.commitSeqs[0]-1].T)
			k.decide(d.commitSeqs[0])
			break
		}
	}
	if first == "" {
		first = "the first write for " + k.key + " committed on the primary"
	}
	k.decide(t.faults.replicaPauseSeq, s.seq)
	if t.fired != nil {
		k.decide(t.fired.Seq)
	}
	if s.deliv != nil {
		k.decide(s.deliv.commitSeqs...)
	}
	return fmt.Sprintf("%s; the replica had received it but not replayed it (dupctl paused its WAL replay at t=%dms, as on a "+
		"standby that lags); at %s %s read the status of %s there (%s), was told it was not done and ran the effect again: "+
		"a status read routed to a lagging replica is a stale cache", first, t.events[t.faults.replicaPauseSeq-1].T, t.at(s.at),
		s.slot.lane(s.inst), k.key, t.events[s.seq-1].Text[strings.Index(t.events[s.seq-1].Text, ": ")+2:])
}

// idemFrom says where a key's count of distinct idempotency keys came
// from, for the unstable-key explanation.
func (t *trace) idemFrom() string {
	if t.effectsLogged() {
		return "the idempotency keys its side-effect lines carry"
	}
	return "the effects query's third column"
}
