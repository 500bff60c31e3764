package judge

import (
	"strings"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
)

// Severity follows certainty. A key is a confirmed lock when a catalogue
// entry's layout matches it (or the user named its pattern), a likely lock
// when its name holds a lock word and it holds a token-shaped value under
// a TTL, a possible lock when only its shape says so. Warn and error
// findings are for confirmed and likely locks; a family of possible locks
// is one info line; data shapes that are not locks are skipped, with why.

// Certainty is how sure dupctl is that a key (or a family) is a lock.
type Certainty uint8

const (
	NotLock   Certainty = iota // skipped: evidence or a data shape says it is not a lock
	Possible                   // shape only: reported as one info line per family
	Likely                     // a lock word, a token-shaped value and a TTL
	Confirmed                  // a catalogue layout, or a --lock-pattern
)

var certaintyNames = [...]string{"not a lock", "possible", "likely", "confirmed"}

func (c Certainty) String() string { return certaintyNames[c] }

// Config is what judging keys goes by besides the keys: the library
// catalogue and the patterns the user named as locks.
type Config struct {
	Catalogue    *makers.Catalogue
	LockPatterns keyspace.Globs
	// Learned is what --learn saw written, per raw key template
	// (learn.go).
	Learned map[string]*Learned
}

// defaultConfig judges with the built-in catalogue and no lock patterns.
var defaultConfig = &Config{Catalogue: makers.Default}

// certainty decides a judged key's certainty from what was recognised
// and weighed.
func (c *Config) certainty(j *Judged, against []signal) Certainty {
	o, r := &j.Observed, &j.Recognised
	lockish := r.Role == makers.RoleLock || r.Role == makers.RoleDedup
	if cert, ok := c.named(j, lockish); ok {
		return cert
	}
	switch {
	case (r.Role == makers.RoleQueue || r.Role == makers.RoleData) && r.Entry != nil:
		j.DataShape = "data of " + r.Entry.Library + ": " + r.Entry.Object
		return NotLock
	case !lockish:
		return NotLock
	case r.Confirmed:
		return Confirmed
	}
	if l := c.learned(j); l != nil && l.Data() {
		j.DataShape = "data: " + l.Why()
		return NotLock
	}
	lockWord := j.Verdict.Set.has(sigNameLock)
	if why := dataShape(o, j.Segs, lockWord); why != "" && !(why == cacheShape && leaseToken(j)) {
		j.DataShape = why
		return NotLock
	}
	if lockWord && o.PTTL >= 0 && (tokenShaped(o, against) || holderHash(o, j.Verdict)) {
		return Likely
	}
	if j.Verdict.Candidate() && j.Verdict.saysLock() {
		return Possible
	}
	return NotLock
}

// holderHash reports a hash a lock could keep its holder in: one to four
// fields (a holder and its count, a fencing index, an owner and its
// expiry), not a record's many named fields. Under a lock word and a
// TTL it is a lock whatever wrote it (Redisson's layout and its ports,
// ioredfour's {index: n}).
func holderHash(o *keyspace.Key, v Verdict) bool {
	n := len(o.Fields) / 2
	return o.Type == "hash" && o.Read && !o.MoreFields && n >= 1 && n <= 4 && !v.Set.has(sigHashFields) && !v.Set.has(sigBigHash)
}

// named decides the keys the user named as locks (--lock-pattern) and
// those --learn saw written or released as locks: confirmed, whatever
// their shape.
func (c *Config) named(j *Judged, lockish bool) (Certainty, bool) {
	o, r := &j.Observed, &j.Recognised
	switch {
	case c.LockPatterns != nil && c.LockPatterns.Match(o.Key) && (o.Type == "string" || o.Type == "hash" || o.Type == "zset"):
	case o.Type == "string" || o.Type == "hash":
		l := c.learned(j)
		if l == nil || !l.Lock() {
			return 0, false
		}
		j.Learned = l.Why()
	default:
		return 0, false
	}
	if !lockish {
		r.Role = makers.RoleLock
	}
	return Confirmed, true
}

// tokenShaped reports a value a lock could hold as its owner: a string
// that is a token, a host, a time, a number or a sentinel - not a
// document, text or a status word (or no value read at all).
func tokenShaped(o *keyspace.Key, against []signal) bool {
	if !o.Read {
		return true
	}
	if o.Type != "string" || len(o.Value) > 200 {
		return false
	}
	for _, s := range against {
		if s != sigInteger {
			return false
		}
	}
	return true
}

const (
	counterShape = "a counter"
	cacheShape   = "a cache"
)

// leaseToken reports a raw random token under a lease (10 minutes or
// less): a framework's Cache::lock among its cache entries, which hold
// serialized values - not a cache entry, whatever the prefix says.
func leaseToken(j *Judged) bool {
	o := &j.Observed
	c := j.Owner.Class
	return o.Type == "string" && o.PTTL > 0 && o.PTTL+max(o.Idle, 0)*1000 <= 600_000 &&
		(c == OwnerUUID || c == OwnerUUIDTime || c == OwnerRandom)
}

// dataWords name what a key of application data holds, with the data
// shape it is (the reason a skipped family gives).
var dataWords = map[string]string{
	"session": "a session", "sessions": "a session", "sess": "a session",
	"presence": "presence (who is online)", "online": "presence (who is online)", "socket": "presence (who is online)",
	"sockets": "presence (who is online)", "typing": "presence (who is online)",
	"cart": "a cart", "carts": "a cart", "basket": "a cart", "baskets": "a cart", "wishlist": "a cart",
	"rate": "a rate limit", "ratelimit": "a rate limit", "ratelimiter": "a rate limit", "throttle": "a rate limit", "quota": "a rate limit",
	"limit": "a rate limit", "limiter": "a rate limit",
	"offer": "an offer or assignment cache", "offers": "an offer or assignment cache", "assignment": "an offer or assignment cache",
	"assigned": "an offer or assignment cache",
	"cache":    cacheShape, "cached": cacheShape, "caches": cacheShape,
	"count": counterShape, "counter": counterShape, "counters": counterShape, "views": counterShape, "hits": counterShape,
	"stats": counterShape, "stat": counterShape, "metrics": counterShape, "total": counterShape,
	"queue": "a queue", "queues": "a queue", "jobs": "a queue",
	"csrf": "a token cache", "xsrf": "a token cache", "otp": "a token cache", "jwt": "a token cache", "refresh": "a token cache",
	"idempotency": "an idempotency record", "idem": "an idempotency record",
}

// entityWords end a key that caches an entity's id: user:42:org holds
// the org of user 42.
var entityWords = wordSet(`org orgs organization organisation team tenant account company courier driver rider customer
merchant store shop owner_id parent manager workspace region plan`)

// dataShape recognises a key of application data that shares its shape
// with locks (an id or a token under a TTL), and says what it is; "" when
// it is none of them. A lock word in the name wins: lock:cart:42 is a
// lock on a cart.
func dataShape(o *keyspace.Key, segs []keyshape.Segment, lockWord bool) string {
	if o.Type == "hash" && o.PTTL == -1 && quantities(o.Fields) {
		return "a cart: a hash of item ids to quantities"
	}
	if lockWord {
		return ""
	}
	for _, s := range segs {
		if s.Shape.Kind != keyshape.KindWord {
			continue
		}
		// A counter's name over a string that is no number (views/...:
		// Rails' fragment cache) is not a counter: its value says what
		// it is.
		if why, ok := dataWords[strings.ToLower(s.Text)]; ok && !(why == counterShape && o.Type == "string" && o.Read &&
			!isNumber(strings.TrimSpace(o.Value))) {
			return why
		}
	}
	if n := len(segs); n >= 2 && o.Type == "string" && segs[n-1].Shape.Kind == keyshape.KindWord &&
		entityWords[strings.ToLower(segs[n-1].Text)] && segs[n-2].Shape.Kind != keyshape.KindWord {
		return "an id cache: <entity>:<id>:" + strings.ToLower(segs[n-1].Text) + " holds that " + strings.ToLower(segs[n-1].Text) + "'s id"
	}
	return ""
}

// quantities reports a hash whose fields are ids (<uuid>:<variant>,
// numbers) holding small counts: a cart, not lock holders.
func quantities(fields []string) bool {
	if len(fields) < 2 {
		return false
	}
	for i := 0; i+1 < len(fields); i += 2 {
		v := fields[i+1]
		if !keyshape.AllDigits(v) || len(v) > 6 || isFieldName(fields[i]) {
			return false
		}
	}
	return true
}
