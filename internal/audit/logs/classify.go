package logs

import (
	"cmp"
	"fmt"
	"github.com/dupctl/dupctl/internal/cause"
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

// verdict is one cause whose evidence holds - or, with candidates, the
// causes the lines cannot tell apart and the line that would.
type verdict struct {
	code        string
	explanation string
	evidence    []Evidence
	candidates  []string
	decide      string
	absent      []Absence
}

// detector looks for one cause's evidence in a pair's lines: nil when it
// does not hold, a verdict naming the cause when it does, or an
// undetermined verdict with candidates when the lines fit this cause and
// another equally.
type detector func(*judge) *verdict

// detectors run in the cause model's precedence; the first cause proven
// is the pair's cause.
var detectors = cause.NewDetectors(map[string]detector{
	cause.UnstableKey.Code:     (*judge).unstableKey,
	cause.StaleCache.Code:      (*judge).staleCache,
	cause.UnlockNoToken.Code:   (*judge).unlockNoToken,
	cause.LockExpiry.Code:      (*judge).lockExpiry,
	cause.LockKeyJobID.Code:    (*judge).lockKeyJobID,
	cause.NonAtomicCommit.Code: (*judge).nonAtomic,
	cause.Redelivery.Code:      (*judge).redelivery,
	cause.Race.Code:            (*judge).race,
}, cause.Blind{Code: cause.LockFailover.Code, Why: lockFailoverBlind})

// lockFailoverBlind is why audit logs does not name a lock lost in a
// failover. A worker's lines show a second holder of the lock inside the
// first one's TTL with no release between them; an unlogged DEL, an
// eviction under maxmemory, a FLUSHDB or a failover all leave exactly
// that. What would tell a failover apart is the Redis side's own line
// (Sentinel's +switch-master, a replica's "MASTER MODE enabled") on the
// same time line, and audit logs reads lines that name a business key:
// a keyless line from another process's log reaches no key's group.
const lockFailoverBlind = "the worker lines a failover leaves (a second holder inside the first one's TTL) fit an " +
	"unlogged DEL, an eviction or a flush as well; the failover itself is logged by Redis Sentinel, in lines that " +
	"name no business key"

// CauseOrder lists the causes audit logs detects, in the order it tries
// them: the cause model's precedence (internal/cause holds it so).
func CauseOrder() []string { return detectors.Codes() }

// CausesBlind lists the causes audit logs cannot see in logs, and why.
func CausesBlind() []cause.Blind { return detectors.Blind() }

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
		var found, open []verdict
		for _, detect := range detectors.All() {
			switch v := detect(j); {
			case v == nil:
			case len(v.candidates) > 0:
				open = append(open, *v)
			default:
				found = append(found, *v)
			}
		}
		p := Pair{Also: []string{}, Candidates: []string{}, Absent: []Absence{}}
		var v verdict
		switch {
		case len(found) > 0:
			// A cause the evidence proves; the open questions and other
			// proven causes are listed as also fitting.
			v = found[0]
			for _, x := range found[1:] {
				p.Also = append(p.Also, x.code)
			}
			for _, x := range open {
				p.Also = append(p.Also, x.candidates...)
			}
		case len(open) > 0:
			v = open[0]
		default:
			v = j.unexplained()
		}
		p.Cause, p.Explanation, p.Evidence = v.code, v.explanation, tidy(v.evidence)
		if len(v.candidates) > 0 {
			p.Candidates, p.Decide = v.candidates, v.decide
		}
		if v.absent != nil {
			p.Absent = v.absent
		}
		p.Also = dedupe(p.Also, p.Cause)
		d.Pairs = append(d.Pairs, p)
	}
	d.Cause, d.Explanation = d.Pairs[0].Cause, d.Pairs[0].Explanation
	d.Candidates = d.Pairs[0].Candidates
	return d
}

// dedupe drops repeats and the cause itself from also.
func dedupe(also []string, cause string) []string {
	out := []string{}
	for _, a := range also {
		if a != cause && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Absence is a line an explanation says the log does not hold: no line of
// one run (before its side effect, with BeforeEffect) was recognised as
// What. Anchor is a line of that run; Unmatched counts its lines (in that
// span) that no event name or phrase matched, which may be the missing
// one worded in a way the mapping does not know.
type Absence struct {
	What         string   `json:"what"` // "idempotency check", "status commit", "ack"
	Kinds        []string `json:"kinds"`
	Worker       string   `json:"worker"`
	Anchor       string   `json:"anchor"`
	BeforeEffect bool     `json:"before_side_effect"`
	Unmatched    int      `json:"unmatched_lines"`
}

// absence describes what run r does not show; before is its side effect
// when the claim is about the lines before it.
func absence(r *run, what string, before *logread.Event) Absence {
	a := Absence{What: what, Worker: r.worker, Anchor: r.first().Where(), BeforeEffect: before != nil}
	switch what {
	case "idempotency check":
		a.Kinds = []string{logread.KindCheck.String(), logread.KindDuplicate.String(), logread.KindClaimed.String()}
	case "status commit":
		a.Kinds = []string{logread.KindCommitted.String()}
	case "ack":
		a.Kinds = []string{logread.KindAcked.String()}
	case "lock":
		a.Kinds = []string{logread.KindLockAcquired.String(), logread.KindLockFailed.String(),
			logread.KindLockReleased.String(), logread.KindLockLost.String()}
	}
	for _, e := range r.events {
		if before != nil && e == before {
			break
		}
		if e.Kind == logread.KindOther && e.Match.Phrase == 0 {
			a.Unmatched++
		}
	}
	return a
}

// sentence words an absence for an explanation.
func (a Absence) sentence() string {
	s := "no " + a.What + " line of " + orDash(a.Worker)
	if a.BeforeEffect {
		s += " before its side effect"
	}
	s += " is recognised"
	if a.Unmatched > 0 {
		s += fmt.Sprintf(" (%d of its lines matched no event)", a.Unmatched)
	}
	return s
}

// ev turns a line into evidence with a note.
func ev(e *logread.Event, note string) Evidence {
	return Evidence{Where: e.Where(), Time: e.Time, Worker: e.Consumer(), Event: eventLabel(e), Detail: detail(e), Note: note}
}

// before reports whether x happened before y beyond doubt: on one worker
// by its own clock, across workers by more than the clock skew.
func (j *judge) before(x, y *logread.Event) bool {
	if x.Consumer() == y.Consumer() && x.Source == y.Source {
		if x.Time.IsZero() || y.Time.IsZero() {
			return x.Line < y.Line // a line without a time keeps its place in its file
		}
		return x.Time.Before(y.Time) || (x.Time.Equal(y.Time) && x.Line < y.Line)
	}
	if x.Time.IsZero() || y.Time.IsZero() {
		return false // across files, only times order lines
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
	return &verdict{code: RuleUnstableKey.Code,
		explanation: fmt.Sprintf("the idempotency key %s between the runs (%s, then %s), so the second run's check could not find the first",
			how, ka, kb),
		evidence: []Evidence{ev(j.a, "first side effect, key "+ka), ev(j.b, "second side effect, key "+kb)}}
}

// staleCache: the later run's check was answered by a cache saying "not
// done" after another run had committed (proven), or after the first
// effect had run while no commit of it is logged (the cache may have
// lagged a commit that is not logged, or there was none: the lines cannot
// tell).
func (j *judge) staleCache() *verdict {
	var open *verdict
	for _, c := range j.rb.checks {
		if c.FromCache != logread.True || c.Hit == logread.True || !j.before(c, j.b) && c != j.b {
			continue
		}
		for _, r := range j.g.runs {
			if r == j.rb || r.commit == nil || !j.before(r.commit, c) {
				continue
			}
			return &verdict{code: RuleStaleCache.Code,
				explanation: fmt.Sprintf("%s committed at %s, then %s asked the cache at %s and was told it was not done",
					orDash(r.worker), clock(r.commit.Time), orDash(j.rb.worker), clock(c.Time)),
				evidence: []Evidence{ev(j.a, "first side effect"), ev(r.commit, "status committed to the database"),
					ev(c, "cache answered: not done"), ev(j.b, "side effect again")}}
		}
		if open == nil && j.ra.commit == nil && j.before(j.a, c) {
			ab := absence(j.ra, "status commit", nil)
			open = &verdict{code: RuleUndetermined.Code,
				explanation: fmt.Sprintf("%s ran the effect at %s and %s asked the cache at %s and was told it was not done; %s: "+
					"the cache lagged a commit that was not logged (%s), or the first run never committed (%s)",
					orDash(j.ra.worker), clock(j.a.Time), orDash(j.rb.worker), clock(c.Time), ab.sentence(), RuleStaleCache.Code, RuleNonAtomic.Code),
				evidence: []Evidence{ev(j.a, "first side effect, no commit of it recognised"), ev(c, "cache answered: not done"),
					ev(j.b, "side effect again")},
				candidates: []string{RuleStaleCache.Code, RuleNonAtomic.Code},
				decide: fmt.Sprintf("a status commit line of %s between %s and %s (then %s), or its absence from a log that logs commits (then %s)",
					orDash(j.ra.worker), clock(j.a.Time), clock(c.Time), RuleStaleCache.Code, RuleNonAtomic.Code),
				absent: []Absence{ab}}
		}
	}
	return open
}

// lockPair returns the two runs ordered by when they acquired the same
// lock key, or nil when they did not both acquire one.
// Both acquisitions must name their key (two unknown keys are not the
// same key) and carry a time (the causes read TTLs off them).
func (j *judge) lockPair() (p, q *run) {
	if j.sameRun() || j.ra.acquire == nil || j.rb.acquire == nil || j.ra.lockKey() == "" || j.ra.lockKey() != j.rb.lockKey() ||
		j.ra.acquire.Time.IsZero() || j.rb.acquire.Time.IsZero() {
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
		if rel.Time.IsZero() {
			continue // when it released is not known
		}
		held := x.acquire != nil && x.lockFailed == nil && (x.ttl() == 0 || !x.acquire.Time.IsZero() && rel.Time.Sub(x.acquire.Time) < x.ttl())
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
		return &verdict{code: RuleUnlockNoToken.Code,
			explanation: fmt.Sprintf("%s %s at %s while %s held it; %s then acquired it and ran the effect again",
				orDash(x.worker), why, clock(rel.Time), orDash(p.worker), orDash(q.worker)),
			evidence: append(evs, ev(j.a, "side effect"), ev(j.b, "side effect again"))}
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
		if e.Kind == logread.KindSideEffect || e.Kind == logread.KindCommitted ||
			e.Kind == logread.KindLockReleased || e.Kind == logread.KindAcked {
			if (ttl > 0 && e.Time.Sub(p.acquire.Time) > ttl) || (ttl == 0 && j.before(q.acquire, e)) {
				late = e
				break
			}
		}
	}
	if late == nil || late.Time.IsZero() {
		return nil
	}
	ttlText := "an unlogged TTL"
	if ttl > 0 {
		ttlText = "TTL " + ttl.String()
	}
	return &verdict{code: RuleLockExpiry.Code,
		explanation: fmt.Sprintf("%s held %s with %s from %s and was still working at %s; %s acquired the same key at %s",
			orDash(p.worker), p.lockKey(), ttlText, clock(p.acquire.Time), clock(late.Time), orDash(q.worker), clock(q.acquire.Time)),
		evidence: []Evidence{
			ev(p.acquire, "first holder acquires the lock"),
			ev(q.acquire, fmt.Sprintf("second worker acquires it %s later", gap.Round(time.Millisecond))),
			ev(late, "first holder still working after its lease expired"),
			ev(j.a, "side effect"), ev(j.b, "side effect again"),
		}}
}

func (j *judge) lockKeyJobID() *verdict {
	if j.sameRun() || j.ra.acquire == nil || j.rb.acquire == nil {
		return nil
	}
	ka, kb := j.ra.lockKey(), j.rb.lockKey()
	if ka == "" || kb == "" || ka == kb || j.ra.acquire.Time.IsZero() || j.rb.acquire.Time.IsZero() {
		return nil // held "at the same time" needs both times
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
	return &verdict{code: RuleLockKeyJobID.Code,
		explanation: fmt.Sprintf("%s locked %s and %s locked %s at the same time: %s",
			orDash(p.worker), p.lockKey(), orDash(q.worker), q.lockKey(), note),
		evidence: []Evidence{ev(p.acquire, "locks "+p.lockKey()), ev(q.acquire, "locks a different key "+q.lockKey()),
			ev(j.a, "side effect"), ev(j.b, "side effect again")}}
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
	var absent []Absence
	note := "the run ends here"
	switch {
	case ra.commit != nil:
		note = fmt.Sprintf("the status was committed only at %s, after the second side effect", clock(ra.commit.Time))
	case ra.end != nil:
		last = ra.end
		note = "the run ends without a status commit: " + eventLabel(ra.end)
		absent = append(absent, absence(ra, "status commit", nil))
	default:
		absent = append(absent, absence(ra, "status commit", nil))
		note = absent[0].sentence() + "; the run ends here"
	}
	evs := []Evidence{ev(j.a, "side effect"), ev(last, note)}
	if len(j.rb.checks) > 0 {
		evs = append(evs, ev(j.rb.checks[0], "the next run's check finds nothing"))
	}
	explanation := fmt.Sprintf("%s ran the effect and ended before committing its status; "+
		"the next run's check found no record and it ran again", orDash(ra.worker))
	if ra.commit != nil {
		explanation = fmt.Sprintf("%s ran the effect and committed its status only at %s; meanwhile the next run's check found no record "+
			"and it ran again: the effect and its status are not one atomic step", orDash(ra.worker), clock(ra.commit.Time))
	}
	return &verdict{code: RuleNonAtomic.Code, explanation: explanation,
		evidence: append(evs, ev(j.b, "side effect again")), absent: absent}
}

// redelivery: the same message came again after a run that ran the effect
// and was not acked, and the redelivery ran the effect with no check
// recognised. With the first run's commit logged, a check would have found
// it: a redelivery that ran without one. With no commit logged either,
// the lines cannot tell that from a check that ran and found the status
// uncommitted (NON_ATOMIC_COMMIT): both are named, with what would decide.
func (j *judge) redelivery() *verdict {
	ra, rb := j.ra, j.rb
	if j.sameRun() || hasCheck(rb) {
		return nil
	}
	same := (ra.msg != "" && ra.msg == rb.msg) || (ra.msg == "" && ra.job != "" && ra.job == rb.job)
	if !same || (ra.ack != nil && j.before(ra.ack, rb.first())) {
		return nil
	}
	var absent []Absence
	end := "its ack came only after the redelivery"
	last := ra.last()
	if ra.ack == nil {
		absent = append(absent, absence(ra, "ack", nil))
		end = absent[0].sentence()
	}
	if ra.end != nil {
		last, end = ra.end, "it ended ("+eventLabel(ra.end)+"); "+end
	}
	recv := rb.first()
	if rb.received != nil {
		recv = rb.received
	}
	flag := "same message delivered again"
	if rb.redelivered {
		flag += " (redelivered)"
	}
	noCheck := absence(rb, "idempotency check", j.b)
	absent = append(absent, noCheck)
	msg := orDash(firstNonEmpty(ra.msg, ra.job))
	if ra.commit != nil {
		return &verdict{code: RuleRedelivery.Code,
			explanation: fmt.Sprintf("%s ran the effect and committed, then %s; the broker delivered message %s again to %s, and %s, "+
				"so nothing stopped it",
				orDash(ra.worker), end, msg, orDash(rb.worker), noCheck.sentence()),
			evidence: []Evidence{ev(j.a, "side effect"), ev(ra.commit, "status committed: a check would find it"), ev(last, end), ev(recv, flag),
				ev(j.b, "side effect again, no check recognised before it")},
			absent: absent}
	}
	noCommit := absence(ra, "status commit", nil)
	absent = append(absent, noCommit)
	return &verdict{code: RuleUndetermined.Code,
		explanation: fmt.Sprintf("%s ran the effect, then %s; %s; message %s came again to %s, and %s: it ran without a check (%s), "+
			"or its check found the status uncommitted (%s)",
			orDash(ra.worker), end, noCommit.sentence(), msg, orDash(rb.worker), noCheck.sentence(), RuleRedelivery.Code, RuleNonAtomic.Code),
		evidence: []Evidence{ev(j.a, "side effect, no commit of it recognised"), ev(last, end), ev(recv, flag),
			ev(j.b, "side effect again, no check recognised before it")},
		candidates: []string{RuleRedelivery.Code, RuleNonAtomic.Code},
		decide: fmt.Sprintf("an idempotency check line of %s before %s (then %s), or a status commit line of %s after %s (then %s)",
			orDash(rb.worker), clock(j.b.Time), RuleNonAtomic.Code, orDash(ra.worker), clock(j.a.Time), RuleRedelivery.Code),
		absent: absent}
}

func (j *judge) race() *verdict {
	ra, rb := j.ra, j.rb
	if j.sameRun() || firstNonEmpty(ra.msg, ra.job) == firstNonEmpty(rb.msg, rb.job) || ra.namesLock() || rb.namesLock() ||
		j.g.mayHoldLock(ra) || j.g.mayHoldLock(rb) {
		return nil
	}
	// A race needs the runs to overlap: one that acked (or ended) before
	// the other began was not raced, and a lock would not have stopped it.
	if ra.closed && j.before(ra.last(), rb.first()) {
		return nil
	}
	evs := []Evidence{}
	for _, r := range []*run{ra, rb} {
		if r.received != nil {
			evs = append(evs, ev(r.received, "a message for the same business key"))
		}
	}
	absent := []Absence{absence(ra, "lock", nil), absence(rb, "lock", nil)}
	return &verdict{code: RuleRace.Code,
		explanation: fmt.Sprintf("two messages (%s, %s) for one business key were processed by %s and %s, and %s",
			orDash(firstNonEmpty(ra.msg, ra.job)), orDash(firstNonEmpty(rb.msg, rb.job)), orDash(ra.worker), orDash(rb.worker),
			"no line of either run names a lock"),
		evidence: append(evs, ev(j.a, "side effect, no lock recognised in its run"),
			ev(j.b, "side effect again, no lock recognised in its run")),
		absent: absent}
}

func (j *judge) unexplained() verdict {
	var facts []string
	var absent []Absence
	if j.sameRun() {
		facts = append(facts, "the same run logged the side effect twice")
	} else {
		switch ma, mb := firstNonEmpty(j.ra.msg, j.ra.job), firstNonEmpty(j.rb.msg, j.rb.job); {
		case ma == "" || mb == "":
			// Equal only because both are unknown is not the same message.
			facts = append(facts, "no message or job id on the runs' lines says whether they handled one message or two")
		case ma == mb:
			facts = append(facts, "the same message ran twice")
		default:
			facts = append(facts, "two different messages ran")
		}
		if j.ra.commit != nil {
			facts = append(facts, "the first run committed")
		}
		if hasCheck(j.rb) {
			facts = append(facts, "the second run's check did not find it")
		} else {
			a := absence(j.rb, "idempotency check", j.b)
			absent = append(absent, a)
			facts = append(facts, a.sentence())
		}
	}
	evs := []Evidence{}
	for _, r := range []*run{j.ra, j.rb} {
		if r.received != nil {
			evs = append(evs, ev(r.received, ""))
		}
	}
	evs = append(evs, ev(j.a, "side effect"), ev(j.b, "side effect again"))
	return verdict{code: RuleUnexplained.Code, explanation: "no known cause fits the logged evidence: " + strings.Join(facts, "; "),
		evidence: evs, absent: absent}
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
