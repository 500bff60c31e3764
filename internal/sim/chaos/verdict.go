package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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

type effectRow struct {
	n    int
	idem *int
}

// checkEffectsSQL runs the effects query once, read-only, before anything
// starts: a typo fails now, not after the workers ran.
func checkEffectsSQL(ctx context.Context, pool *pgxpool.Pool, sql string) error {
	_, err := queryEffects(ctx, pool, sql, nil)
	return err
}

func countEffects(ctx context.Context, pool *pgxpool.Pool, sql string, keys []string) (map[string]effectRow, error) {
	return queryEffects(ctx, pool, sql, keys)
}

// queryEffects runs the user's query in a read-only transaction and keeps
// the rows of the given keys.
func queryEffects(ctx context.Context, pool *pgxpool.Pool, sql string, keys []string) (map[string]effectRow, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, problem.System(fmt.Errorf("effects query: %w", err), "")
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, sql)
	if err != nil {
		return nil, sqlError(err)
	}
	defer rows.Close()
	if n := len(rows.FieldDescriptions()); n < 2 {
		// A statement that writes has no columns, and the read-only
		// transaction's refusal arrives with the rows' end (issue 31: it
		// was reported as "returns 0 column(s)").
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, sqlError(err)
		}
		return nil, problem.Inputf("EffectsSQL", "returns %d column(s): want the business key, the number of effects and, "+
			"optionally, the number of distinct idempotency keys", n)
	}
	out := map[string]effectRow{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, sqlError(err)
		}
		key := fmt.Sprint(vals[0])
		if !slices.Contains(keys, key) {
			continue
		}
		n, err := toInt(vals[1])
		if err != nil {
			return nil, problem.Inputf("EffectsSQL", "second column: %w", err)
		}
		row := out[key]
		row.n += n
		if len(vals) > 2 {
			m, err := toInt(vals[2])
			if err != nil {
				return nil, problem.Inputf("EffectsSQL", "third column: %w", err)
			}
			if row.idem != nil {
				m += *row.idem
			}
			row.idem = &m
		}
		out[key] = row
	}
	if err := rows.Err(); err != nil {
		return nil, sqlError(err)
	}
	return out, nil
}

// sqlError: the query's own mistakes (syntax, unknown table, a write in a
// read-only transaction) are bad input; anything else is the server's.
func sqlError(err error) error {
	if connect.PGErrorKind(err) == connect.PGReadOnly {
		return problem.Inputf("EffectsSQL", "must be read-only: it counts the effects, it must not change them (%s)", pgMessage(err))
	}
	if k := connect.PGErrorKind(err); k == connect.PGBadQuery {
		var pe *pgconn.PgError
		errors.As(err, &pe)
		return problem.Inputf("EffectsSQL", "%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	return problem.System(fmt.Errorf("effects query: %w", err), "")
}

func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int64:
		return int(x), nil
	case int32:
		return int(x), nil
	case int16:
		return int(x), nil
	case int:
		return x, nil
	case float64:
		if x == math.Trunc(x) {
			return int(x), nil
		}
	case nil:
		return 0, nil
	case string:
		return strconv.Atoi(x)
	}
	if s := fmt.Sprint(v); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%v (%T) is not a count", v, v)
}

// verdict judges every key once the run settled; r.stopping is set, so
// nothing changes under it any more.
func (r *run) verdict(effects map[string]effectRow, unsettled string) *RunResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	rr := &RunResult{
		Seed: r.plan.Seed, ID: r.id, Plan: r.plan, Fault: r.fired, Unsettled: unsettled,
		ElapsedMs: time.Since(r.start).Milliseconds(),
	}
	seen := map[string]bool{}
	for _, k := range r.keys {
		e := effects[k]
		kv := KeyVerdict{Key: k, Effects: e.n, IdemKeys: e.idem, Outcome: OutcomeOK}
		switch {
		case e.n > 1:
			kv.Outcome = OutcomeDup
			kv.Cause, kv.Why, kv.Deciding = r.cause(k, e)
		case e.n == 0:
			kv.Outcome, kv.Cause, kv.Why = r.missing(k, unsettled)
		case r.logBlind(k):
			kv.Outcome, kv.Cause, kv.Why = OutcomeUndecided, RuleUncounted.Code, undecided(k, e.n)
		}
		if kv.Outcome != OutcomeOK {
			kv.Evidence = r.evidence(k)
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
	case r.fired == nil:
		rr.Missing = fmt.Sprintf("the %s point never came for %s", r.plan.Point, r.plan.Victim)
	case !seen[OutcomeDup] && !seen[OutcomeLoss]:
		// A duplicate or a loss is a verdict on its own; a run that
		// found neither has earned "ok" only if what its scenario is
		// about happened.
		if missing := r.unmet(); missing != "" {
			rr.Fault, rr.Missing, rr.conditionMissed = nil, missing, true
		}
	}
	for _, f := range r.foreign {
		rr.ForeignUnlocks = append(rr.ForeignUnlocks, fmt.Sprintf("t=%dms %s: DEL %s deleted the lock %s held",
			f.at.Sub(r.start).Milliseconds(), f.by, f.lock, f.of.slot.lane(f.of.inst)))
	}
	rr.LockLost = r.lockLostUnnoticed()
	r.spans(rr)
	rr.Events = slices.Clone(r.events)
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

func (r *run) deliveriesOf(key string) []*delivery {
	var out []*delivery
	for _, d := range r.delivs {
		if d.key == key {
			out = append(out, d)
		}
	}
	return out
}

func (r *run) leasesOf(key string) []*lease {
	var out []*lease
	for _, l := range r.leases {
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

func (r *run) at(t time.Time) string { return fmt.Sprintf("t=%dms", t.Sub(r.start).Milliseconds()) }

func (r *run) endText(d *delivery) string {
	switch d.end {
	case "returned":
		return "its connection closed: " + r.faultText(d)
	case "":
		return "still open"
	}
	return d.end
}

func (r *run) faultText(d *delivery) string {
	if d.faulted && r.fired != nil {
		return string(r.plan.Fault) + " at " + string(r.plan.Point)
	}
	return "the worker went away"
}

// logBlind reports whether the key's count from the log cannot be
// trusted: the effects come from log lines and the run's fault fell on
// this key right after its write committed, before any line about it.
func (r *run) logBlind(key string) bool {
	return r.effectsLog != nil && r.fired != nil && r.plan.Point == AfterWrite && r.plan.Victim == key
}

// missing judges a key with no effect.
func (r *run) missing(key, unsettled string) (outcome, code, why string) {
	ds := r.deliveriesOf(key)
	if len(ds) == 0 {
		return OutcomeUnsettled, "", key + " was never delivered to a worker"
	}
	for _, d := range ds {
		if d.end == "rejected" || r.repub[key] {
			return OutcomeDeadLet, "", key + " was rejected without requeue or published again by the worker " +
				"(a retry or dead-letter queue): no effect, but not lost"
		}
	}
	if unsettled != "" {
		return OutcomeUnsettled, "", key + " has no effect yet, and the run did not settle: " + unsettled
	}
	if r.logBlind(key) {
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
			case d.faulted && r.fired != nil && r.plan.Point == BeforeCommit:
				return OutcomeLoss, RuleLoss.Code, fmt.Sprintf("dupctl dropped %s's PostgreSQL connection before its COMMIT, so the server rolled "+
					"its writes back; %s %s anyway: the broker never sent it again and its effect never ran", lane, lane, how)
			case d.faulted && r.fired != nil:
				return OutcomeLoss, RuleLoss.Code, fmt.Sprintf("%s %s before any write, then died (%s at %s): "+
					"the broker never sent it again and its effect never ran", lane, how, r.plan.Fault, r.plan.Point)
			}
			return OutcomeLoss, RuleLoss.Code, fmt.Sprintf("%s %s without any committed write for it: the effect never ran", lane, how)
		}
	}
	why = key + " was delivered but no effect was counted and no delivery is left: lost"
	if r.unkeyed > 0 {
		why += fmt.Sprintf(" (unless it is among the %s that named no business key of the run: map the field that holds it to tell)",
			english.Count(r.unkeyed, "side-effect line", "side-effect lines"))
	}
	return OutcomeLoss, RuleLoss.Code, why
}

// evidence is the schedule of one key: its events and the run's fault. A
// stretch of deliveries that only found the lock busy and went back is
// shortened to its ends.
func (r *run) evidence(key string) []string {
	events := slices.Clone(r.events)
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
