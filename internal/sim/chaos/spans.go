package chaos

import "time"

// What a run's picture is drawn from, beside its events: each delivery
// and each lock as spans of the run's time, and the side effects where
// the effects log placed them. Every time here is one dupctl saw on the
// wire or read in a log, except a lease's expiry, which is its TTL
// counted from the last take or renewal dupctl saw: Redis expires a key
// without a word on any connection.

// Delivery is one delivery of a business key to a worker copy, as the
// AMQP proxy saw it.
type Delivery struct {
	Lane        string `json:"lane"`
	Key         string `json:"key"`
	Redelivered bool   `json:"redelivered,omitempty"`
	From        int64  `json:"from_ms"`
	// To is when it ended, or the run's end when it was still open.
	To int64 `json:"to_ms"`
	// End is how it ended: ack, requeued, rejected, returned (its
	// connection closed unacked), auto-ack; "" still open at the end.
	End string `json:"end"`
	// Faulted: the run's fault fell on this delivery.
	Faulted bool `json:"faulted,omitempty"`
	// Seq and EndSeq are its delivery's and its end's events.
	Seq    int `json:"seq"`
	EndSeq int `json:"end_seq,omitempty"`
}

// Lease is one lock a worker copy took, as the Redis proxy saw it.
type Lease struct {
	Lane string `json:"lane"`
	Lock string `json:"lock"`
	Key  string `json:"key,omitempty"` // the business key it is about; "" unknown
	From int64  `json:"from_ms"`
	TTL  int64  `json:"ttl_ms"` // 0: taken without a TTL
	// Expires is when its TTL ran out after the last renewal dupctl saw:
	// computed, since Redis's expiry is never on the wire (0 without a
	// TTL).
	Expires int64 `json:"expires_ms,omitempty"`
	// Released is its holder's own DEL or unlock script; Deleted another
	// copy's plain DEL (DeletedBy).
	Released  *int64 `json:"released_ms,omitempty"`
	Deleted   *int64 `json:"deleted_ms,omitempty"`
	DeletedBy string `json:"deleted_by,omitempty"`
	Seq       int    `json:"seq"` // its taking's event
}

// Where an effect line's time comes from.
const (
	// WhenOutput: the line reached dupctl on the worker copy's output.
	WhenOutput = "output"
	// WhenTimestamp: the line's own timestamp (the worker's clock).
	WhenTimestamp = "timestamp"
)

// EffectLine is one side effect of a business key of the run, as the
// effects log showed it.
type EffectLine struct {
	Key string `json:"key"`
	// Lane is the worker copy that wrote it; "" when the line does not
	// say.
	Lane string `json:"lane,omitempty"`
	// T is its time; nil when the line has none dupctl can place (When
	// says where it comes from).
	T    *int64 `json:"t_ms,omitempty"`
	When string `json:"when,omitempty"`
	Line int64  `json:"line"` // in what the run read of the log
}

// Where a run's side effects were counted.
const (
	EffectsSQL    = "sql"    // the effects query, after the run: no times
	EffectsOutput = "output" // the workers' own output
	EffectsFile   = "file"   // the file the workers log to
)

// spans fills the run's deliveries, leases and effects.
func (t *trace) spans(rr *RunResult) {
	ms := func(at time.Time) int64 { return at.Sub(t.start).Milliseconds() }
	end := ms(t.end)
	rr.Start = t.start
	rr.Deliveries = make([]Delivery, 0, len(t.delivs))
	for _, d := range t.delivs {
		to := end
		if d.end != "" {
			to = ms(d.to)
		}
		rr.Deliveries = append(rr.Deliveries, Delivery{
			Lane: d.slot.lane(d.inst), Key: d.key, Redelivered: d.redelivered, From: ms(d.from), To: to,
			End: d.end, Faulted: d.faulted, Seq: d.seq, EndSeq: d.endSeq,
		})
	}
	rr.Leases = make([]Lease, 0, len(t.leases))
	for _, l := range t.leases {
		ls := Lease{
			Lane: l.slot.lane(l.inst), Lock: l.lock, Key: l.key, From: ms(l.from),
			TTL: l.ttl.Milliseconds(), DeletedBy: l.deletedBy, Seq: l.seq,
		}
		if l.ttl > 0 {
			ls.Expires = ms(l.expires)
		}
		if !l.released.IsZero() {
			at := ms(l.released)
			ls.Released = &at
		}
		if !l.deleted.IsZero() {
			at := ms(l.deleted)
			ls.Deleted = &at
		}
		rr.Leases = append(rr.Leases, ls)
	}
	rr.EffectsFrom = t.effectsFrom
	if rr.EffectsFrom == "" {
		rr.EffectsFrom = EffectsSQL
	}
	rr.Effects = t.effectLines
}
