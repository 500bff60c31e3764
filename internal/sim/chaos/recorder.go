package chaos

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/resp"
	"github.com/dupctl/dupctl/internal/sim/chaos/amqpproxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/pgproxy"
)

// recorder keeps a run's trace as the proxies see it - the events, each
// delivery and its end, each lock taken, renewed, released or deleted by
// another, the stale reads - with what it needs to tell them apart while
// the run goes: the open deliveries by channel and tag, the latest lease
// of each lock key, the cache writes held back. It owns the run's lock:
// a proxy's observation is recorded, and the fault it is due to fire,
// under mu at once, so the run's own live state (its workers, its
// timers, its faults) is under mu too.
type recorder struct {
	mu sync.Mutex
	trace
	keyRe   *regexp.Regexp
	open    map[tagKey]*delivery
	noAck   map[chanKey]bool
	current map[string]*lease // lock key -> its latest lease
	held    map[string]int    // cache key -> writes dupctl holds back
	// activity is the last event's time, for the run to settle on a
	// quiet spell; awaiting the copy whose reaction to a dropped
	// connection is awaited (react.go).
	activity time.Time
	awaiting *awaited
	// consumed are the queues the workers consume; queues and exchanges
	// those declared with the run's id in their name (cleanup deletes
	// them).
	consumed  map[string]bool
	queues    map[string]bool
	exchanges map[string]bool
}

// begin starts the trace of the run id with its business keys.
func (rec *recorder) begin(id string, keys int) {
	rec.trace = trace{id: id, repub: map[string]bool{}}
	rec.open, rec.noAck, rec.current, rec.held = map[tagKey]*delivery{}, map[chanKey]bool{}, map[string]*lease{}, map[string]int{}
	rec.consumed, rec.queues, rec.exchanges = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := 1; i <= keys; i++ {
		rec.keys = append(rec.keys, fmt.Sprintf("%s-%d", id, i))
	}
	rec.keyRe = regexp.MustCompile(regexp.QuoteMeta(id) + `-([0-9]+)`)
}

// add records an event now; the caller holds rec.mu.
func (rec *recorder) add(lane, kind, key, text string) *Event {
	return rec.addAt(time.Now(), lane, kind, key, text)
}

// addAt records an event that happened at t (an observation that took a
// round trip to confirm); the caller holds rec.mu.
func (rec *recorder) addAt(t time.Time, lane, kind, key, text string) *Event {
	rec.events = append(rec.events, Event{T: t.Sub(rec.start).Milliseconds(), Lane: lane, Kind: kind, Key: key, Text: text,
		Seq: len(rec.events) + 1})
	rec.activity = time.Now()
	rec.noted(lane, kind)
	return &rec.events[len(rec.events)-1]
}

// fire records the run's one fault; the caller holds rec.mu.
func (rec *recorder) fire(lane, key, text string) {
	now := time.Now()
	ev := rec.addAt(now, lane, "fault", key, text)
	ev.Fault = true
	c := *ev
	rec.fired, rec.firedAt = &c, now
}

// keysIn finds the run's business keys in bytes.
func (rec *recorder) keysIn(b []byte) []string {
	var out []string
	for _, m := range rec.keyRe.FindAllSubmatch(b, -1) {
		n, err := strconv.Atoi(string(m[1]))
		if err != nil || n < 1 || n > len(rec.keys) {
			continue
		}
		if k := rec.keys[n-1]; !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// openOf is the slot instance's open delivery of a key.
func (rec *recorder) openOf(s *slot, inst int, key string) *delivery {
	for i := len(rec.delivs) - 1; i >= 0; i-- {
		d := rec.delivs[i]
		if d.slot == s && d.inst == inst && d.key == key && d.end == "" {
			return d
		}
	}
	return nil
}

// onlyOpen is the key of the slot instance's one open delivery, for
// traffic that names no business key (a lock keyed by the message id).
func (rec *recorder) onlyOpen(s *slot, inst int) []string {
	var keys []string
	for _, d := range rec.delivs {
		if d.slot == s && d.inst == inst && d.end == "" && !slices.Contains(keys, d.key) {
			keys = append(keys, d.key)
		}
	}
	if len(keys) == 1 {
		return keys
	}
	return nil
}

// settled resolves an ack, nack or reject to the deliveries it settles
// (multiple covers every tag up to it); take ends them.
func (rec *recorder) settled(c *amqpproxy.Conn, ev *amqpproxy.Event, take bool) []*delivery {
	var out []*delivery
	for k, d := range rec.open {
		if k.conn != c || k.ch != ev.Channel || (k.tag != ev.Tag && !(ev.Multiple && k.tag <= ev.Tag)) {
			continue
		}
		out = append(out, d)
		if !take {
			continue
		}
		delete(rec.open, k)
		d.to = ev.At
		switch {
		case ev.Kind == amqpproxy.KindAck:
			d.end = "ack"
		case ev.Requeue:
			d.end = "requeued"
		default:
			d.end = "rejected"
		}
	}
	return out
}

func deliveryKeys(ds []*delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.key)
	}
	return out
}

// cacheRead records a read of a Redis key that names a business key of
// the run (a status cache, whether or not --cache-keys names it; a lock
// key is not one): an "already done?" check of the delivery that makes
// it, stale while dupctl holds the key's write back. The caller holds
// rec.mu.
func (rec *recorder) cacheRead(s *slot, inst int, name, key string, v *resp.Value) {
	bk := rec.firstKey(key)
	if bk == "" || rec.current[key] != nil {
		return
	}
	lane := s.lane(inst)
	text := fmt.Sprintf("%s %s -> %s", name, key, v.String())
	var seq int
	if rec.held[key] > 0 {
		seq = rec.add(lane, "stale-read", bk, text+": stale, its write is still held back").Seq
		rec.stale = append(rec.stale, staleRead{key: bk, slot: s, inst: inst, at: time.Now(), seq: seq})
	} else {
		seq = rec.add(lane, "read", bk, text).Seq
	}
	if d := rec.openOf(s, inst, bk); d != nil {
		d.read(text, seq)
	}
}

// cacheHeld reports whether a status cache write of the business key is
// held back now. The caller holds rec.mu.
func (rec *recorder) cacheHeld(bk string) bool {
	for k, n := range rec.held {
		if n > 0 && rec.firstKey(k) == bk {
			return true
		}
	}
	return false
}

// lockKeyOf is the business key a lock key is about: named in the key, or
// the slot's one open delivery (a lock keyed by the message id).
func (rec *recorder) lockKeyOf(s *slot, inst int, lock string) string {
	if k := rec.firstKey(lock); k != "" {
		return k
	}
	if ks := rec.onlyOpen(s, inst); len(ks) == 1 {
		return ks[0]
	}
	return ""
}

func (rec *recorder) firstKey(s string) string {
	if ks := rec.keysIn([]byte(s)); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

func (rec *recorder) renewed(l *lease, expires time.Time) {
	if expires.After(l.expires) {
		l.expires = expires
	}
}

// deleted handles a plain DEL of a lock key that deleted something.
func (rec *recorder) deleted(s *slot, inst int, lock string) {
	l := rec.current[lock]
	if l == nil || !l.released.IsZero() || !l.deleted.IsZero() {
		return
	}
	now := time.Now()
	lane := s.lane(inst)
	if l.slot == s && l.inst == inst {
		l.released = now
		rec.add(lane, "unlock", l.key, "DEL "+lock+" (its own lock, without checking the token)")
		return
	}
	l.deleted, l.deletedBy = now, lane
	holder := l.slot.lane(l.inst)
	ev := rec.add(lane, "unlock-foreign", l.key, fmt.Sprintf("DEL %s deletes the lock %s holds: a plain DEL, no token check", lock, holder))
	rec.foreign = append(rec.foreign, foreignUnlock{lock: lock, key: l.key, by: lane, of: l, at: now, seq: ev.Seq})
}

// leaseOf is the slot instance's live lease on a business key.
func (rec *recorder) leaseOf(s *slot, inst int, key string) *lease {
	for i := len(rec.leases) - 1; i >= 0; i-- {
		l := rec.leases[i]
		if l.slot == s && l.inst == inst && l.key == key && l.released.IsZero() {
			return l
		}
	}
	return nil
}

// markVictim marks the slot instance's open delivery of the plan's victim
// as the one the fault falls on.
func (rec *recorder) markVictim(s *slot, inst int) {
	if d := rec.openOf(s, inst, rec.plan.Victim); d != nil {
		d.faulted = true
	}
}

// writeKeys are the run's business keys in a transaction's writes.
func (rec *recorder) writeKeys(writes []*pgproxy.Statement) []string {
	var keys []string
	for _, w := range writes {
		for _, k := range rec.keysIn(w.Raw) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// committedKey reports whether a write of the key committed on the
// primary. The caller holds rec.mu.
func (rec *recorder) committedKey(key string) bool {
	for _, e := range rec.events {
		if e.Kind == "commit" && e.Key == key {
			return true
		}
	}
	return false
}
