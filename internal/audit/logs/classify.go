package logs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// judge holds what classifying one repeated side effect needs.
type judge struct {
	g    *group
	skew time.Duration
	a, b *logread.Event // the earlier and the later side effect
	ra   *run
	rb   *run
}

// verdict is one cause whose evidence holds.
type verdict struct {
	code        string
	explanation string
	evidence    []Evidence
}

// classify explains every side effect after the first against the one
// before it.
func (g *group) classify(skew time.Duration) Duplicate {
	d := Duplicate{Key: g.key, KeyKind: keyKinds[g.kind], Effects: len(g.fx), Pairs: []Pair{}, Workers: []string{}}
	seenW := map[string]bool{}
	for _, e := range g.fx {
		if d.JobType == "" {
			d.JobType = e.JobType()
		}
		if w := e.Consumer(); w != "" && !seenW[w] {
			seenW[w] = true
			d.Workers = append(d.Workers, w)
		}
	}
	for i := 1; i < len(g.fx); i++ {
		j := &judge{g: g, skew: skew, a: g.fx[i-1], b: g.fx[i]}
		j.ra, j.rb = g.runOf[j.a], g.runOf[j.b]
		var found []verdict
		for _, rule := range []func() *verdict{j.unstableKey, j.staleCache, j.unlockNoToken, j.lockExpiry, j.lockKeyJobID, j.nonAtomic, j.redelivery, j.race} {
			if v := rule(); v != nil {
				found = append(found, *v)
			}
		}
		p := Pair{Also: []string{}}
		if len(found) == 0 {
			v := j.unexplained()
			p.Cause, p.Explanation, p.Evidence = RuleUnexplained.Code, v.explanation, v.evidence
		} else {
			p.Cause, p.Explanation, p.Evidence = found[0].code, found[0].explanation, found[0].evidence
			for _, v := range found[1:] {
				p.Also = append(p.Also, v.code)
			}
		}
		p.Evidence = tidy(p.Evidence)
		d.Pairs = append(d.Pairs, p)
	}
	d.Cause, d.Explanation = d.Pairs[0].Cause, d.Pairs[0].Explanation
	return d
}

// ev turns a line into evidence with a note.
func ev(e *logread.Event, note string) Evidence {
	return Evidence{Where: e.Where(), Time: e.Time, Worker: e.Consumer(), Event: eventLabel(e), Detail: detail(e), Note: note}
}

// before reports whether x happened before y beyond doubt: on one worker
// by its own clock, across workers by more than the clock skew.
func (j *judge) before(x, y *logread.Event) bool {
	if x.Consumer() == y.Consumer() && x.Source == y.Source {
		return x.Time.Before(y.Time) || (x.Time.Equal(y.Time) && x.Line < y.Line)
	}
	return y.Time.Sub(x.Time) > j.skew
}

func (j *judge) sameRun() bool { return j.ra == j.rb }

func (j *judge) unstableKey() *verdict {
	if j.sameRun() {
		return nil
	}
	ka, kb := j.ra.idemKey(j.a), j.rb.idemKey(j.b)
	if ka == "" || kb == "" || ka == kb {
		return nil
	}
	how := "changed"
	if strings.EqualFold(ka, kb) {
		how = "changed only in letter case"
	}
	return &verdict{RuleUnstableKey.Code,
		fmt.Sprintf("the idempotency key %s between the runs (%s, then %s), so the second run's check could not find the first", how, ka, kb),
		[]Evidence{ev(j.a, "first side effect, key "+ka), ev(j.b, "second side effect, key "+kb)}}
}

// staleCache: the later run's check was answered by a cache saying "not
// done" after another run had committed.
func (j *judge) staleCache() *verdict {
	for _, c := range j.rb.checks {
		if c.FromCache != logread.True || c.Hit == logread.True || !j.before(c, j.b) && c != j.b {
			continue
		}
		for _, r := range j.g.runs {
			if r == j.rb || r.commit == nil || !j.before(r.commit, c) {
				continue
			}
			return &verdict{RuleStaleCache.Code,
				fmt.Sprintf("%s committed at %s, then %s asked the cache at %s and was told it was not done", orDash(r.worker), clock(r.commit.Time), orDash(j.rb.worker), clock(c.Time)),
				[]Evidence{ev(j.a, "first side effect"), ev(r.commit, "status committed to the database"), ev(c, "cache answered: not done"), ev(j.b, "side effect again")}}
		}
	}
	return nil
}

// lockPair returns the two runs ordered by when they acquired the same
// lock key, or nil when they did not both acquire one.
func (j *judge) lockPair() (p, q *run) {
	if j.sameRun() || j.ra.acquire == nil || j.rb.acquire == nil || j.ra.lockKey() != j.rb.lockKey() {
		return nil, nil
	}
	p, q = j.ra, j.rb
	if q.acquire.Time.Before(p.acquire.Time) {
		p, q = q, p
	}
	return p, q
}

// releasedBefore: p released its lock before q acquired it.
func (j *judge) releasedBefore(p, q *run) bool {
	return p.release != nil && j.before(p.release, q.acquire)
}

func (j *judge) unlockNoToken() *verdict {
	p, q := j.lockPair()
	if p == nil || j.releasedBefore(p, q) {
		return nil
	}
	if ttl := p.ttl(); ttl > 0 && q.acquire.Time.Sub(p.acquire.Time) >= ttl-j.skew {
		return nil // the lease may simply have expired
	}
	lk := p.lockKey()
	for _, x := range j.g.runs {
		if x == p || x == q || x.release == nil || x.release.LockKey() != lk && x.release.LockKey() != "" {
			continue
		}
		rel := x.release
		// The release must fall between the two acquisitions, as far as
		// the clocks can tell: a lock-busy answer before it already
		// proves the lock was held.
		if j.before(rel, p.acquire) || j.before(q.acquire, rel) {
			continue
		}
		held := x.acquire != nil && x.lockFailed == nil && (x.ttl() == 0 || rel.Time.Sub(x.acquire.Time) < x.ttl())
		if held && rel.LockToken() != "" {
			continue
		}
		why := "released a lock it did not hold"
		if x.lockFailed != nil {
			why = "released the lock after failing to acquire it"
		}
		if rel.LockToken() == "" {
			why += ", by key without a token"
		}
		evs := []Evidence{ev(p.acquire, "holder acquires the lock")}
		if x.lockFailed != nil {
			evs = append(evs, ev(x.lockFailed, "lock busy"))
		}
		evs = append(evs, ev(rel, why), ev(q.acquire, "acquires the lock while the holder still runs"))
		return &verdict{RuleUnlockNoToken.Code,
			fmt.Sprintf("%s %s at %s while %s held it; %s then acquired it and ran the effect again", orDash(x.worker), why, clock(rel.Time), orDash(p.worker), orDash(q.worker)),
			append(evs, ev(j.a, "side effect"), ev(j.b, "side effect again"))}
	}
	return nil
}

func (j *judge) lockExpiry() *verdict {
	p, q := j.lockPair()
	if p == nil || j.releasedBefore(p, q) {
		return nil
	}
	ttl := p.ttl()
	gap := q.acquire.Time.Sub(p.acquire.Time)
	if ttl > 0 && gap < ttl-j.skew {
		return nil // the lease was still valid: not an expiry
	}
	// The first holder must have been working after its lease ran out.
	var late *logread.Event
	for _, e := range p.events {
		if e.Kind == logread.KindSideEffect || e.Kind == logread.KindCommitted || e.Kind == logread.KindLockReleased || e.Kind == logread.KindAcked {
			if (ttl > 0 && e.Time.Sub(p.acquire.Time) > ttl) || (ttl == 0 && j.before(q.acquire, e)) {
				late = e
				break
			}
		}
	}
	if late == nil {
		return nil
	}
	ttlText := "an unlogged TTL"
	if ttl > 0 {
		ttlText = "TTL " + ttl.String()
	}
	return &verdict{RuleLockExpiry.Code,
		fmt.Sprintf("%s held %s with %s from %s and was still working at %s; %s acquired the same key at %s", orDash(p.worker), p.lockKey(), ttlText, clock(p.acquire.Time), clock(late.Time), orDash(q.worker), clock(q.acquire.Time)),
		[]Evidence{ev(p.acquire, "first holder acquires the lock"), ev(q.acquire, fmt.Sprintf("second worker acquires it %s later", gap.Round(time.Millisecond))), ev(late, "first holder still working after its lease expired"), ev(j.a, "side effect"), ev(j.b, "side effect again")}}
}

func (j *judge) lockKeyJobID() *verdict {
	if j.sameRun() || j.ra.acquire == nil || j.rb.acquire == nil {
		return nil
	}
	ka, kb := j.ra.lockKey(), j.rb.lockKey()
	if ka == "" || kb == "" || ka == kb {
		return nil
	}
	p, q := j.ra, j.rb
	if q.acquire.Time.Before(p.acquire.Time) {
		p, q = q, p
	}
	if p.release != nil && j.before(p.release, q.acquire) {
		return nil // one after the other: the different keys did not matter
	}
	note := "lock keys differ for one business key"
	for _, r := range []*run{p, q} {
		k := r.lockKey()
		if (r.job != "" && strings.Contains(k, r.job)) || (r.msg != "" && strings.Contains(k, r.msg)) {
			note = "the lock key contains the job/message id"
		}
	}
	return &verdict{RuleLockKeyJobID.Code,
		fmt.Sprintf("%s locked %s and %s locked %s at the same time: %s", orDash(p.worker), p.lockKey(), orDash(q.worker), q.lockKey(), note),
		[]Evidence{ev(p.acquire, "locks "+p.lockKey()), ev(q.acquire, "locks a different key "+q.lockKey()), ev(j.a, "side effect"), ev(j.b, "side effect again")}}
}

// hasCheck: the run consulted the idempotency layer (check or claim).
func hasCheck(r *run) bool { return len(r.checks) > 0 || r.claim != nil }

func (j *judge) nonAtomic() *verdict {
	ra := j.ra
	if j.sameRun() || ra.commit != nil && !j.before(j.b, ra.commit) || ra.ack != nil || !hasCheck(j.rb) {
		return nil
	}
	for _, c := range j.rb.checks {
		if c.Hit == logread.True {
			return nil
		}
	}
	last := ra.last()
	note := "no status commit logged after the side effect; the run ends here"
	if ra.end != nil {
		last = ra.end
		note = "the run ends without committing the status: " + eventLabel(ra.end)
	}
	evs := []Evidence{ev(j.a, "side effect"), ev(last, note)}
	if len(j.rb.checks) > 0 {
		evs = append(evs, ev(j.rb.checks[0], "the next run's check finds nothing"))
	}
	return &verdict{RuleNonAtomic.Code,
		fmt.Sprintf("%s ran the effect and ended before committing its status; the next run found no record and ran it again", orDash(ra.worker)),
		append(evs, ev(j.b, "side effect again"))}
}

func (j *judge) redelivery() *verdict {
	ra, rb := j.ra, j.rb
	if j.sameRun() || hasCheck(rb) {
		return nil
	}
	same := (ra.msg != "" && ra.msg == rb.msg) || (ra.msg == "" && ra.job != "" && ra.job == rb.job)
	if !same || (ra.ack != nil && j.before(ra.ack, rb.first())) {
		return nil
	}
	end := "no ack logged"
	last := ra.last()
	if ra.end != nil {
		last, end = ra.end, "ends without an ack: "+eventLabel(ra.end)
	}
	recv := rb.first()
	if rb.received != nil {
		recv = rb.received
	}
	flag := "same message delivered again"
	if rb.redelivered {
		flag += " (redelivered)"
	}
	return &verdict{RuleRedelivery.Code,
		fmt.Sprintf("%s ran the effect and %s; the broker delivered message %s again to %s, which ran it without an idempotency check", orDash(ra.worker), end, orDash(firstNonEmpty(ra.msg, ra.job)), orDash(rb.worker)),
		[]Evidence{ev(j.a, "side effect"), ev(last, end), ev(recv, flag), ev(j.b, "side effect again, no idempotency check before it")}}
}

func (j *judge) race() *verdict {
	ra, rb := j.ra, j.rb
	if j.sameRun() || firstNonEmpty(ra.msg, ra.job) == firstNonEmpty(rb.msg, rb.job) || ra.lockKey() != "" || rb.lockKey() != "" {
		return nil
	}
	evs := []Evidence{}
	for _, r := range []*run{ra, rb} {
		if r.received != nil {
			evs = append(evs, ev(r.received, "a message for the same business key"))
		}
	}
	return &verdict{RuleRace.Code,
		fmt.Sprintf("two messages (%s, %s) for one business key were processed by %s and %s and neither took a lock", orDash(firstNonEmpty(ra.msg, ra.job)), orDash(firstNonEmpty(rb.msg, rb.job)), orDash(ra.worker), orDash(rb.worker)),
		append(evs, ev(j.a, "side effect, no lock held"), ev(j.b, "side effect again, no lock held"))}
}

func (j *judge) unexplained() verdict {
	var facts []string
	if j.sameRun() {
		facts = append(facts, "the same run logged the side effect twice")
	} else {
		if firstNonEmpty(j.ra.msg, j.ra.job) == firstNonEmpty(j.rb.msg, j.rb.job) {
			facts = append(facts, "the same message ran twice")
		} else {
			facts = append(facts, "two different messages ran")
		}
		if j.ra.commit != nil {
			facts = append(facts, "the first run committed")
		}
		if hasCheck(j.rb) {
			facts = append(facts, "the second run's check did not find it")
		} else {
			facts = append(facts, "no idempotency check is logged before the second effect")
		}
	}
	evs := []Evidence{}
	for _, r := range []*run{j.ra, j.rb} {
		if r.received != nil {
			evs = append(evs, ev(r.received, ""))
		}
	}
	evs = append(evs, ev(j.a, "side effect"), ev(j.b, "side effect again"))
	return verdict{RuleUnexplained.Code, "no known cause fits the logged evidence: " + strings.Join(facts, "; "), evs}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// tidy orders evidence by time (then file and line) and merges the notes
// of a line cited twice.
func tidy(evs []Evidence) []Evidence {
	slices.SortStableFunc(evs, func(a, b Evidence) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Where, b.Where))
	})
	out := evs[:0]
	for _, e := range evs {
		if n := len(out); n > 0 && out[n-1].Where == e.Where {
			if e.Note != "" && !strings.Contains(out[n-1].Note, e.Note) {
				out[n-1].Note += "; " + e.Note
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

// clock is a time of day for explanations (evidence carries the date).
func clock(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format("15:04:05.000")
}
