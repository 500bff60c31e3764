package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
)

// Outcomes of a key and of a run.
const (
	OutcomeOK        = "ok"
	OutcomeDup       = "DUP"
	OutcomeLoss      = "LOSS"
	OutcomeDeadLet   = "dead-lettered"
	OutcomeUnsettled = "unsettled"
	// OutcomeUndecided: the effects were counted in the log, and the
	// fault came between the key's committed write and the line that
	// would have logged it: the count may be one short, so the log
	// cannot tell one effect from two (or none from one).
	OutcomeUndecided = "not decided"
)

// KeyVerdict is what happened to one business key in one run.
type KeyVerdict struct {
	Key     string `json:"key"`
	Effects int    `json:"effects"`
	// IdemKeys is how many distinct idempotency keys the effects were
	// made under: the effects query's third column, or those on the
	// effect log lines (nil when not known).
	IdemKeys *int   `json:"idempotency_keys,omitempty"`
	Outcome  string `json:"outcome"`
	// Cause is the finding code of a duplicate's cause (the cause model's
	// codes, internal/cause) or of a loss.
	Cause    string   `json:"cause,omitempty"`
	Why      string   `json:"why,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// Deciding are the events (Event.Seq) a duplicate's cause rests on.
	Deciding []int `json:"deciding,omitempty"`
}

// RunResult is one run: its plan, whether the fault came, the verdict per
// key and the schedule.
type RunResult struct {
	Seed uint64 `json:"seed"`
	ID   string `json:"id"`
	Plan Plan   `json:"plan"`
	// Fault is the fault as injected, when the run reached what its
	// scenario is about; nil when the fault's point never came, or the
	// fault came and the scenario's condition did not follow (Missing
	// says which; the fault is still among the Events).
	Fault *Event `json:"fault"`
	// Missing says what the run lacked to prove anything: the point that
	// never came, or the scenario's condition that did not happen (no
	// other worker took the expired lock, the message never came back,
	// ...). Empty when the run reached it.
	Missing string       `json:"missing,omitempty"`
	Outcome string       `json:"outcome"`
	Keys    []KeyVerdict `json:"keys"`
	// Unsettled says what was still happening when the run timed out.
	Unsettled string `json:"unsettled,omitempty"`
	// ForeignUnlocks are plain DELs of a lock another worker held.
	ForeignUnlocks []string `json:"foreign_unlocks,omitempty"`
	// LockLost are workers that went on as a lock's holder after the
	// lock had gone to another worker.
	LockLost []LockLoss `json:"lock_lost,omitempty"`
	// Attempts are the run's earlier tries, whose scenario condition did
	// not happen.
	Attempts []Attempt `json:"attempts,omitempty"`
	// Start is the wall-clock time of the run's t=0 (the last attempt's).
	Start  time.Time `json:"start"`
	Events []Event   `json:"events"`
	// Deliveries, Leases and Effects are the spans and effect lines the
	// run's picture is drawn from (spans.go); EffectsFrom says where the
	// effects were counted (EffectsSQL: after the run, with no times).
	Deliveries  []Delivery   `json:"deliveries"`
	Leases      []Lease      `json:"leases"`
	Effects     []EffectLine `json:"effect_lines,omitempty"`
	EffectsFrom string       `json:"effects_from"`
	// ElapsedMs is the time of every attempt together.
	ElapsedMs int64  `json:"elapsed_ms"`
	Replay    string `json:"replay,omitempty"`

	// conditionMissed: the fault came, nothing failed, and the scenario's
	// condition did not happen - the run is worth another attempt.
	conditionMissed bool
}

// Attempt is an earlier try of a run whose fault came but whose
// scenario condition did not happen.
type Attempt struct {
	ID        string `json:"id"`
	Plan      Plan   `json:"plan"`
	Missing   string `json:"missing"`
	ElapsedMs int64  `json:"elapsed_ms"`
}

// LockLoss is a worker that went on as a lock's holder after dupctl cut
// it off from Redis and another worker took the lock.
type LockLoss struct {
	Key      string   `json:"key"`
	Why      string   `json:"why"`
	Evidence []string `json:"evidence"`
}

// Failed reports a duplicate, a loss, or a key whose effects could not be
// counted.
func (rr *RunResult) Failed() bool { return rr.Outcome != OutcomeOK }

// judge gives the verdict on every key of a finished trace, from the
// effects counted per key and what was still happening if the run did
// not settle (unsettled). It reads the trace alone and changes nothing
// in it: the same trace judges the same way, with or without services.
func (t *trace) judge(effects map[string]effectRow, unsettled string) *RunResult {
	rr := &RunResult{
		Seed: t.plan.Seed, ID: t.id, Plan: t.plan, Fault: t.fired, Unsettled: unsettled,
		ElapsedMs: t.end.Sub(t.start).Milliseconds(),
	}
	seen := map[string]bool{}
	for _, k := range t.keys {
		e := effects[k]
		kv := KeyVerdict{Key: k, Effects: e.n, IdemKeys: e.idem, Outcome: OutcomeOK}
		switch {
		case e.n > 1:
			kv.Outcome = OutcomeDup
			kv.Cause, kv.Why, kv.Deciding = t.cause(k, e)
		case e.n == 0:
			kv.Outcome, kv.Cause, kv.Why = t.missing(k, unsettled)
		case t.logBlind(k):
			kv.Outcome, kv.Cause, kv.Why = OutcomeUndecided, RuleUncounted.Code, undecided(k, e.n)
		}
		if kv.Outcome != OutcomeOK {
			kv.Evidence = t.evidence(k)
		}
		seen[kv.Outcome] = true
		rr.Keys = append(rr.Keys, kv)
	}
	switch {
	case seen[OutcomeDup] && seen[OutcomeLoss]:
		rr.Outcome = OutcomeDup + "+" + OutcomeLoss
	case seen[OutcomeDup]:
		rr.Outcome = OutcomeDup
	case seen[OutcomeLoss]:
		rr.Outcome = OutcomeLoss
	case seen[OutcomeUndecided]:
		rr.Outcome = OutcomeUndecided
	default:
		rr.Outcome = OutcomeOK
	}
	switch {
	case t.fired == nil:
		rr.Missing = fmt.Sprintf("the %s point never came for %s", t.plan.Point, t.plan.Victim)
	case !seen[OutcomeDup] && !seen[OutcomeLoss]:
		// A duplicate or a loss is a verdict on its own; a run that
		// found neither has earned "ok" only if what its scenario is
		// about happened.
		if missing := t.unmet(); missing != "" {
			rr.Fault, rr.Missing, rr.conditionMissed = nil, missing, true
		}
	}
	for _, f := range t.foreign {
		rr.ForeignUnlocks = append(rr.ForeignUnlocks, fmt.Sprintf("t=%dms %s: DEL %s deleted the lock %s held",
			f.at.Sub(t.start).Milliseconds(), f.by, f.lock, f.of.slot.lane(f.of.inst)))
	}
	rr.LockLost = t.lockLostUnnoticed()
	t.spans(rr)
	rr.Events = slices.Clone(t.events)
	slices.SortStableFunc(rr.Events, func(a, b Event) int { return int(a.T - b.T) })
	return rr
}

// undecided words a key whose count from the log cannot be trusted: the
// fault came right after its write committed, before any line about it.
func undecided(key string, n int) string {
	could := "once or not at all"
	if n > 0 {
		could = fmt.Sprintf("%d or %d times", n, n+1)
	}
	return fmt.Sprintf("%s counted in the log for %s, but the fault came right after the worker's write for it committed and before "+
		"the worker could log the effect: the effect ran %s, and the log cannot tell which; "+
		"a query on what the worker writes ({EffectsSQL}) decides it", english.Count(n, "effect", "effects"), key, could)
}

func (t *trace) deliveriesOf(key string) []*delivery {
	var out []*delivery
	for _, d := range t.delivs {
		if d.key == key {
			out = append(out, d)
		}
	}
	return out
}

func (t *trace) leasesOf(key string) []*lease {
	var out []*lease
	for _, l := range t.leases {
		if l.key == key {
			out = append(out, l)
		}
	}
	return out
}

// ended is when a delivery ended, or far in the future while it is open.
func (d *delivery) ended() time.Time {
	if d.end == "" {
		return time.Unix(1<<40, 0)
	}
	return d.to
}

// over is when a lease stopped protecting its holder: released, deleted
// by another, or expired.
func (l *lease) over() time.Time {
	t := l.expires
	if l.ttl <= 0 {
		t = time.Unix(1<<40, 0)
	}
	for _, x := range []time.Time{l.released, l.deleted} {
		if !x.IsZero() && x.Before(t) {
			t = x
		}
	}
	return t
}

func (t *trace) at(when time.Time) string {
	return fmt.Sprintf("t=%dms", when.Sub(t.start).Milliseconds())
}

func (t *trace) endText(d *delivery) string {
	switch d.end {
	case "returned":
		return "its connection closed: " + t.faultText(d)
	case "":
		return "still open"
	}
	return d.end
}

func (t *trace) faultText(d *delivery) string {
	if d.faulted && t.fired != nil {
		return string(t.plan.Fault) + " at " + string(t.plan.Point)
	}
	return "the worker went away"
}

// logBlind reports whether the key's count from the log cannot be
// trusted: the effects come from log lines and the run's fault fell on
// this key right after its write committed, before any line about it.
func (t *trace) logBlind(key string) bool {
	return t.effectsLogged() && t.fired != nil && t.plan.Point == AfterWrite && t.plan.Victim == key
}

// missing judges a key with no effect.
func (t *trace) missing(key, unsettled string) (outcome, code, why string) {
	ds := t.deliveriesOf(key)
	if len(ds) == 0 {
		return OutcomeUnsettled, "", key + " was never delivered to a worker"
	}
	for _, d := range ds {
		if d.end == "rejected" || t.repub[key] {
			return OutcomeDeadLet, "", key + " was rejected without requeue or published again by the worker " +
				"(a retry or dead-letter queue): no effect, but not lost"
		}
	}
	if unsettled != "" {
		return OutcomeUnsettled, "", key + " has no effect yet, and the run did not settle: " + unsettled
	}
	if t.logBlind(key) {
		return OutcomeUndecided, RuleUncounted.Code, undecided(key, 0)
	}
	for _, d := range ds {
		if (d.end == "ack" || d.end == "auto-ack") && d.committed == 0 {
			how := "acked it"
			if d.end == "auto-ack" {
				how = "consumed it with no-ack (the broker forgot it on delivery)"
			}
			lane := d.slot.lane(d.inst)
			switch {
			case d.faulted && t.fired != nil && t.plan.Point == BeforeCommit:
				return OutcomeLoss, RuleLoss.Code, fmt.Sprintf("dupctl dropped %s's PostgreSQL connection before its COMMIT, so the server rolled "+
					"its writes back; %s %s anyway: the broker never sent it again and its effect never ran", lane, lane, how)
			case d.faulted && t.fired != nil:
				return OutcomeLoss, RuleLoss.Code, fmt.Sprintf("%s %s before any write, then died (%s at %s): "+
					"the broker never sent it again and its effect never ran", lane, how, t.plan.Fault, t.plan.Point)
			}
			return OutcomeLoss, RuleLoss.Code, fmt.Sprintf("%s %s without any committed write for it: the effect never ran", lane, how)
		}
	}
	why = key + " was delivered but no effect was counted and no delivery is left: lost"
	if t.unkeyed > 0 {
		why += fmt.Sprintf(" (unless it is among the %s that named no business key of the run: map the field that holds it to tell)",
			english.Count(t.unkeyed, "side-effect line", "side-effect lines"))
	}
	return OutcomeLoss, RuleLoss.Code, why
}

// evidence is the schedule of one key: its events and the run's fault. A
// stretch of deliveries that only found the lock busy and went back is
// shortened to its ends.
func (t *trace) evidence(key string) []string {
	events := slices.Clone(t.events)
	slices.SortStableFunc(events, func(a, b Event) int { return int(a.T - b.T) })
	var mine []Event
	for _, e := range events {
		if e.Key == key || e.Fault || e.Kind == "exit" || (e.Kind == "start" && strings.Contains(e.Lane, "#")) {
			mine = append(mine, e)
		}
	}
	var out []string
	for i := 0; i < len(mine); {
		j := i
		for j < len(mine) && bounce(mine[j].Kind) {
			j++
		}
		if j-i > 9 {
			for _, e := range mine[i : i+3] {
				out = append(out, e.Line())
			}
			out = append(out, fmt.Sprintf("… %d more events from t=%dms to t=%dms: %s", j-i-6, mine[i+3].T, mine[j-4].T, bounceText(mine[i+3:j-3])))
			for _, e := range mine[j-3 : j] {
				out = append(out, e.Line())
			}
			i = j
			continue
		}
		out = append(out, mine[i].Line())
		i++
	}
	if len(out) > 60 {
		out = append(out[:59], fmt.Sprintf("… %d more events (-o json has them all)", len(out)-59))
	}
	return out
}

// bounce kinds make up a busy loop: a delivery, a busy lock, a requeue.
func bounce(kind string) bool { return kind == "deliver" || kind == "busy" || kind == "requeued" }

// bounceText says what a shortened busy loop was, in what the wire showed
// of it: deliveries sent back (a nack or reject with requeue seen), or
// attempts at the lock within deliveries that stayed open (a client that
// polls the lock, as redis-py's blocking Lock.acquire does).
func bounceText(events []Event) string {
	n := map[string]int{}
	for _, e := range events {
		n[e.Kind]++
	}
	requeued, busy, delivered := n["requeued"], n["busy"]-n["requeued"], n["deliver"]-n["requeued"]
	var parts []string
	if requeued > 0 {
		parts = append(parts, english.Count(requeued, "delivery that found the lock busy and was requeued",
			"deliveries that found the lock busy and were requeued"))
	}
	if delivered > 0 {
		parts = append(parts, english.Count(delivered, "delivery", "deliveries"))
	}
	switch {
	case busy > 0 && requeued == 0:
		parts = append(parts, english.Count(busy, "attempt", "attempts")+" at the lock that found it busy while the delivery stayed open "+
			"(no nack or reject on the wire: the worker waits for the lock)")
	case busy > 0:
		parts = append(parts, english.Count(busy, "more attempt", "more attempts")+" at the lock that found it busy")
	}
	return strings.Join(parts, ", ")
}
