package logs

import (
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// What a learning (Learn) changes on every line it is applied to. The
// inference runs once, on a sample; this is the per-line part, kept to a
// few field reads: which fields name the worker is in the mapping's paths
// (a learned mapping maps a layout's slots, "@bracket.0", "@prefix.pid",
// "@file", like any field), the rest is here.
type readHints struct {
	// keyShape finds the business key in a line that names none in a
	// field ("lock:order:ord-41495", "ord-41495: charging").
	keyShape infer.KeyShape
	// msgShape finds the message id a line names inside another value
	// (a lock key "lock:job:<message id>") when it names no key, job or
	// message: such a line joins its message's key.
	msgShape infer.IDShape
	// fills completes the times of a source that leave out their year or
	// date, by source name.
	fills map[string]*clockFill
	// keyed are the prefixes that find the lock's key and the idempotency
	// key where a sentence names them by position alone (infer.KeyedPrefixes).
	keyed []keyedPrefix
	// worker: the learning decided which fields name who wrote a line;
	// false leaves that to the built-in reading (a console line's thread,
	// the file), as when nothing is learned.
	worker bool
}

// apply fills what the learning knows into a line's fields: the business
// key from its shape, and the worker as "instance/process" where both are
// known.
func (h *readHints) apply(ev *Event) {
	f := &ev.Fields
	if f[BusinessKey] == "" && h.keyShape.Valid() {
		for _, in := range [...]Field{Message, EventName, IdempotencyKey} {
			if k, ok := h.keyShape.Find(f[in]); ok {
				f[BusinessKey] = k
				break
			}
		}
	}
	if f[BusinessKey] == "" && f[MessageID] == "" && f[JobID] == "" && h.msgShape.Valid() {
		for _, in := range [...]Field{LockKey, Message} {
			if id, ok := h.msgShape.Find(f[in]); ok {
				f[MessageID] = id
				break
			}
		}
	}
	if p := f[Process]; p != "" {
		if f[Consumer] == "" {
			f[Consumer] = p
		} else {
			f[Consumer] = f[Consumer] + "/" + p
		}
	}
}

// clockFill is what completes a source's times that leave out their year
// (RFC 3164) or their date (a time of day, Kitchen).
type clockFill struct {
	year int       // 0: unknown
	date time.Time // zero: unknown
	// ref, when year is unknown, gives each line the year that puts its
	// month and day on or before it (the file's modification time).
	ref time.Time
	// from says where year and date came from, for the report.
	from string
}

// parse reads a time that leaves out its year or date, completed; false
// when what it leaves out is unknown.
func (f *clockFill) parse(s string, tz *time.Location) (time.Time, bool) {
	c, ok := infer.ParseClock([]byte(s))
	if !ok {
		return time.Time{}, false
	}
	year := f.year
	if year == 0 && c.HasDate() && !f.ref.IsZero() {
		year = infer.YearBefore(c.Month, c.Day, f.ref)
	}
	return c.Complete(year, f.date, tz)
}

// prefixFields offers the current line's prefix: its instance, a syslog
// tag's program and pid as "@prefix.*" fields (which a learned mapping
// maps), its time, RFC 5424's structured data as fields. Without a learned
// mapping the prefix's instance (with its pid) is the worker.
func (x *extractor) prefixFields() {
	p := &x.prefix
	if p.Kind == infer.PrefixNone {
		return
	}
	for _, f := range [...]struct {
		path string
		v    []byte
	}{{"@prefix.instance", p.Instance}, {"@prefix.pid", p.PID}, {"@prefix.app", p.App}} {
		if len(f.v) > 0 {
			x.emit([]byte(f.path), f.v)
		}
	}
	x.fallback(Timestamp, p.Time, unitAuto)
	if len(p.SD) > 0 {
		infer.SDParams(p.SD, func(_, k, v []byte) {
			if !x.has(fieldAt(x, k)) {
				x.emitText(k, v)
			}
		})
	}
	if x.m.learned == nil && len(p.Instance) > 0 {
		w := p.Instance
		if len(p.PID) > 0 {
			w = append(append(append([]byte(nil), p.Instance...), '/'), p.PID...)
		}
		x.fallback(Consumer, w, unitAuto)
	}
}

// keyedPrefix: a field's values in sentences begin with prefix.
type keyedPrefix struct {
	field  Field
	prefix string
}

// fillKeyed reads the lock's key and the idempotency key by their learned
// prefixes, on the lines of the steps they were learned on (the line's kind
// decided): a value with the prefix elsewhere in a sentence was not seen
// to be either.
func (h *readHints) fillKeyed(ev *Event) {
	for _, kp := range h.keyed {
		f := &ev.Fields
		if f[kp.field] != "" || !kp.on(ev.Kind) {
			continue
		}
		f[kp.field] = valueWithPrefix(f[Message], kp.prefix)
	}
}

// on reports whether a line of kind k is one of the steps the field was
// learned on, or their siblings (a busy lock, a release; a duplicate caught).
func (kp keyedPrefix) on(k Kind) bool {
	if kp.field == LockKey {
		return k == KindLockAcquired || k == KindLockFailed || k == KindLockReleased || k == KindLockLost
	}
	return k == KindCheck || k == KindDuplicate || k == KindClaimed || k == KindCommitted
}

// valueWithPrefix is the first value in msg that begins with prefix at the
// start of a word ("lock:" finds "lock:order:ord-1" in "locked
// lock:order:ord-1 token ..."), "" when none does.
func valueWithPrefix(msg, prefix string) string {
	for off := 0; ; {
		i := strings.Index(msg[off:], prefix)
		if i < 0 {
			return ""
		}
		i += off
		if i == 0 || !isKeyByte(msg[i-1]) {
			v, _ := valueAt([]byte(msg), i)
			if len(v) > len(prefix) {
				return msg[i : i+len(v)]
			}
		}
		off = i + len(prefix)
	}
}
