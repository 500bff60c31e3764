package judge

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
)

// Discovery by shape: a key is a lock candidate by what it holds, how it
// expires and how it is named, weighed together - its name is one signal
// among several. Each signal adds its weight to the log-odds that the key
// is a lock; the sum, through the logistic function, is the key's
// confidence. A maker's exact layout (a Redisson hash, a ShedLock value, a
// BullMQ job lock, ...) decides on its own; a counter, a status word, a
// JSON document, a hash of named fields or a list decides against. Keys
// more likely locks than not (confidence 0.5 and up) are candidates;
// findings about a family keep their warn or error severity only when the
// family's confidence reaches Options.MinConfidence. The weights are in
// docs/inspect-lock.md.

// signal is one piece of evidence about whether a key is a lock.
type signal uint8

const (
	sigMaker       signal = iota // a maker's key layout and value together
	sigMakerMeta                 // bsm/redislock's token followed by metadata
	sigMakerToken                // a maker's token format on its own (redsync, redislock, BullMQ)
	sigToken                     // a random token of 64+ bits
	sigNameLock                  // a word of the name says lock, mutex, lease or semaphore
	sigLeaseTTL                  // a TTL of up to 2 minutes: a lease
	sigShortTTL                  // a TTL of up to an hour
	sigNoTTL                     // no TTL
	sigLongTTL                   // a TTL over a day
	sigNameOther                 // a word of the name says session, cache, status, counter, ...
	sigRandomName                // the name holds a random id or digest
	sigInteger                   // the value is a number other than 0 or 1: a counter
	sigStatus                    // the value is a status word (SUCCEEDED, FAILED, ...)
	sigStructured                // the value is JSON or another document
	sigText                      // the value is text: long, with spaces, an email or a URL
	sigHashFields                // a hash whose fields are names (name, email, ...)
	sigBigHash                   // a hash with more fields than a lock has
	sigHashOther                 // a hash of no lock layout dupctl knows
	sigNotLockType               // a list, set, sorted set or stream
	sigCompanion                 // a lock's companion: fencing counter, metadata, index
	numSignals
)

// priorLogit is the log-odds of a key with no evidence either way: most
// keys in a Redis are not locks.
const priorLogit = -1.5

// CandidateConfidence is the least confidence that makes a key a
// candidate: more likely a lock than not.
const CandidateConfidence = 0.5

// DefaultMinConfidence is the confidence a family needs for its findings
// to keep their warn or error severity.
const DefaultMinConfidence = 0.7

var signalInfo = [numSignals]struct {
	name   string
	weight float64
}{
	sigMaker:       {"maker layout", 6},
	sigMakerMeta:   {"redislock token with metadata", 3},
	sigMakerToken:  {"maker token format", 2},
	sigToken:       {"random token", 1.5},
	sigNameLock:    {"lock word in name", 4},
	sigLeaseTTL:    {"lease TTL (2m or less)", 1.5},
	sigShortTTL:    {"TTL of an hour or less", 0.5},
	sigNoTTL:       {"no TTL", -1},
	sigLongTTL:     {"TTL over a day", -1},
	sigNameOther:   {"data word in name", -2},
	sigRandomName:  {"random id in name", -1},
	sigInteger:     {"number value", -2.5},
	sigStatus:      {"status word value", -3},
	sigStructured:  {"document value", -2.5},
	sigText:        {"text value", -2},
	sigHashFields:  {"hash of named fields", -3},
	sigBigHash:     {"hash with many fields", -3},
	sigHashOther:   {"hash of no lock layout", -1},
	sigNotLockType: {"not a string or hash", math.Inf(-1)},
	sigCompanion:   {"lock companion, not a lock", math.Inf(-1)},
}

func (s signal) String() string { return signalInfo[s].name }

// Signals is a set of Signals.
type Signals uint32

func (s Signals) has(x signal) bool { return s&(1<<x) != 0 }

// Names lists the set's signal Names, strongest first.
func (s Signals) Names() []string {
	out := []string{}
	for _, x := range s.byStrength() {
		out = append(out, x.String())
	}
	return out
}

// byStrength orders the set by the size of its weight.
func (s Signals) byStrength() []signal {
	var out []signal
	for x := range numSignals {
		if s.has(x) {
			out = append(out, x)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && math.Abs(signalInfo[out[j]].weight) > math.Abs(signalInfo[out[j-1]].weight); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Verdict is what the evidence says of one key.
type Verdict struct {
	logit float64
	Set   Signals
}

func (v *Verdict) add(x signal) {
	if !v.Set.has(x) {
		v.Set |= 1 << x
		v.logit += signalInfo[x].weight
	}
}

// Confidence is the probability the evidence gives that the key is a lock.
func (v Verdict) Confidence() float64 { return 1 / (1 + math.Exp(-v.logit)) }

// Candidate reports whether the key is more likely a lock than not.
func (v Verdict) Candidate() bool { return v.Confidence() >= CandidateConfidence }

// saysLock reports evidence for a lock in the key's name or value: a
// lock word, a token, a maker's layout or format. A TTL alone says
// nothing either way - caches, presence and rate limits expire too - so
// a key with nothing else for it is no candidate, even at even odds.
func (v Verdict) saysLock() bool {
	return v.Set.has(sigNameLock) || v.Set.has(sigToken) || v.Set.has(sigMaker) || v.Set.has(sigMakerMeta) || v.Set.has(sigMakerToken)
}

// Against is the strongest evidence Against the key being a lock (for a
// skipped key's reason), or "no lock signal".
func (v Verdict) Against() string {
	for _, x := range v.Set.byStrength() {
		if signalInfo[x].weight < 0 {
			return x.String()
		}
	}
	return "no lock signal"
}

// weigh gathers the evidence of one read key: against are the value's
// signals against a lock (valueSignals), own its owner's class.
func weigh(o *keyspace.Key, r *makers.Recognised, own Owner, segs []keyshape.Segment, against []signal) Verdict {
	v := Verdict{logit: priorLogit}
	otherType := o.Type != "" && o.Type != "string" && o.Type != "hash" && o.Type != "none"
	switch {
	case otherType && r.Entry == nil: // a sorted set is a lock only in a library's layout (Symfony, redis-semaphore)
		v.add(sigNotLockType)
		return v
	case r.Role == makers.RoleFence || r.Role == makers.RoleMeta || r.Role == makers.RoleIndex || r.Role == makers.RoleQueue ||
		r.Role == makers.RoleData:
		v.add(sigCompanion)
		return v
	}
	if r.Confirmed {
		v.add(sigMaker)
	}
	v.weighName(o.Key, segs)
	v.weighTTL(o)
	switch {
	case !o.Read || otherType:
	case o.Type == "hash":
		v.weighHash(o, r, own)
	default:
		v.weighString(r, own, against)
	}
	return v
}

// weighName adds what the key's name says: its words, and a random id in
// it.
func (v *Verdict) weighName(key string, segs []keyshape.Segment) {
	lockWord, otherWord := keyshape.NameWords(key)
	if lockWord {
		v.add(sigNameLock)
	}
	if otherWord {
		v.add(sigNameOther)
	}
	for i := range segs {
		if randomKind(segs[i].Shape.Kind) {
			v.add(sigRandomName)
			break
		}
	}
}

// idleResolution is how far OBJECT IDLETIME, whole seconds of a clock
// that ticks apart from the key's write, can overstate the time since
// it: a lease of 2 minutes read 0.3 s after it was taken can show idle 1.
const idleResolution = 1000

// weighTTL adds what the TTL it was granted (PTTL plus idle time) says.
// The granted TTL is read as the least it can be: libraries grant round
// TTLs (2 minutes, an hour), and the idle clock's second must not move a
// key of one family across the edge its siblings sit on.
func (v *Verdict) weighTTL(o *keyspace.Key) {
	switch {
	case o.PTTL == -1:
		v.add(sigNoTTL)
	case o.PTTL >= 0:
		switch g := o.PTTL + max(o.Idle*1000-idleResolution, 0); {
		case g <= 2*60_000:
			v.add(sigLeaseTTL)
		case g <= 3_600_000:
			v.add(sigShortTTL)
		case g > 86_400_000:
			v.add(sigLongTTL)
		}
	}
}

// weighHash adds what a hash's fields say, unless a maker's layout
// decided already.
func (v *Verdict) weighHash(o *keyspace.Key, r *makers.Recognised, own Owner) {
	switch {
	case r.Confirmed:
	case o.MoreFields:
		v.add(sigBigHash)
	case len(o.Fields) > 2 && namedFields(o.Fields):
		// A record has several named fields; one named field alone is
		// as often a lock's holder or fencing index ({index: 7}).
		v.add(sigHashFields)
	case holderCounts(o.Fields) && (own.Class == OwnerUUID || own.Class == OwnerUUIDTime || own.Class == OwnerRandom):
		// A reentrant lock's holders: a token per holder, each with its
		// hold count (Redisson's layout, and its ports').
		v.add(sigToken)
	default:
		v.add(sigHashOther)
	}
}

// holderCounts reports a hash of one to four fields holding small counts.
func holderCounts(fields []string) bool {
	n := len(fields) / 2
	if n < 1 || n > 4 {
		return false
	}
	for i := 1; i < len(fields); i += 2 {
		if v := fields[i]; len(v) > 3 || !keyshape.AllDigits(v) {
			return false
		}
	}
	return true
}

// weighString adds what a string value says: a maker's token, the
// signals against a lock, or a random token.
func (v *Verdict) weighString(r *makers.Recognised, own Owner, against []signal) {
	switch {
	case r.Confirmed:
	case r.Maker == makers.Redislock && r.Metadata != "":
		v.add(sigMakerMeta)
	case r.Maker == makers.Redsync || r.Maker == makers.Redislock || r.Maker == makers.BullMQ:
		v.add(sigMakerToken)
	case len(against) > 0:
		for _, x := range against {
			v.add(x)
		}
	case own.Class == OwnerUUID || own.Class == OwnerUUIDTime || own.Class == OwnerRandom:
		v.add(sigToken)
	}
}

// randomKind reports key segments that are random ids or digests: a key
// named by one is more often a session, a token or a cache entry than a
// lock, which is named by what it protects.
func randomKind(k keyshape.Kind) bool {
	switch k {
	case keyshape.KindUUID, keyshape.KindBase64, keyshape.KindJID, keyshape.KindMD5, keyshape.KindSHA1, keyshape.KindSHA256,
		keyshape.KindHex, keyshape.KindULID:
		return true
	}
	return false
}

// valueSignals says what in a string value that no maker claimed speaks
// against a lock. A number is a counter unless it is an epoch near now:
// the old SETNX lock pattern stores its expiry time as the value.
func valueSignals(v string, now time.Time) []signal {
	t := strings.TrimSpace(v)
	switch {
	case isStatusWord(t):
		return []signal{sigStatus}
	case isNumber(t) && t != "0" && t != "1":
		if keyshape.AllDigits(t) && keyshape.ClassifyInt(t, now).Kind == keyshape.KindEpoch {
			return nil
		}
		return []signal{sigInteger}
	case len(t) > 0 && (t[0] == '{' || t[0] == '[' || t[0] == '<') || isSerialized(t):
		return []signal{sigStructured}
	case len(t) >= 256 || strings.Count(t, " ") >= 2 || isEmailOrURL(t):
		return []signal{sigText}
	}
	return nil
}

// isNumber reports an integer or decimal, signed or not.
func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" || len(s) > 24 {
		return false
	}
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && !dot && i > 0:
			dot = true
		case c < '0' || c > '9':
			return false
		}
	}
	return true
}

// statusWords are the final and failed states status caches hold (the
// seed's PROCESSING, SUCCEEDED, FAILED and their kin). PROCESSING, RUNNING
// and their kind are left out: lock values use them too.
var statusWords = wordSet(`succeeded success successful failed failure completed complete done error errored
cancelled canceled rejected expired paid refunded retryable aborted finished delivered sent approved declined`)

func isStatusWord(s string) bool {
	if len(s) < 4 || len(s) > 12 {
		return false
	}
	var b [12]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return statusWords[string(b[:len(s)])]
}

// isSerialized recognises PHP serialize (scalars too: b:1; is true,
// i:42; a number), Java serialization, pickle, Ruby Marshal and Rails'
// cache entries: cache entries, not owner tokens.
func isSerialized(s string) bool {
	if len(s) < 4 {
		return false
	}
	return phpSerialized(s) || serializedHead(s) || binaryDocument(s)
}

// phpSerialized: PHP's serialize() of an array, object or string, or of a
// scalar (b:1; i:42; d:0.5;).
func phpSerialized(s string) bool {
	switch {
	case (s[0] == 'a' || s[0] == 'O' || s[0] == 's') && s[1] == ':' && s[2] >= '0' && s[2] <= '9':
		return true
	case (s[0] == 'b' || s[0] == 'i' || s[0] == 'd') && s[1] == ':' && s[len(s)-1] == ';' && isNumber(s[2:len(s)-1]):
		return true
	}
	return false
}

// serializedHead recognises a binary serialisation by its first bytes.
func serializedHead(s string) bool {
	switch {
	case s[0] == 0xac && s[1] == 0xed: // java.io.ObjectOutputStream
		return true
	case s[0] == 0x80 && s[1] <= 5: // pickle protocol 2+
		return true
	case s[0] == '!' && s[1] == 0x80 && s[2] <= 5: // cachelib's RedisSerializer (Flask-Caching): "!" + pickle
		return true
	case s[0] == 4 && s[1] == 8: // Ruby's Marshal.dump (Rails' cache before its 7.1 format)
		return true
	case s[0] == 0 && s[1] == 0x11: // ActiveSupport::Cache::Coder's signature (Rails 7.1+)
		return true
	case s[0] > 0x80 && s[0] <= 0x8f && msgpackName(s[1:]): // a MessagePack map, its first key a name
		return true
	}
	return false
}

// msgpackName reports a MessagePack fixstr holding a field name.
func msgpackName(s string) bool {
	n := int(s[0]) - 0xa0
	if n < 1 || n > 31 || len(s) < 1+n {
		return false
	}
	return isFieldName(s[1 : 1+n])
}

// binaryDocument recognises bytes that are not text yet are no random
// token either: a gob, MessagePack, protobuf or compressed document (a
// go-redis/cache entry, a gorilla session) spells its field names and
// strings in the clear, and runs long. A random token is short, and five
// letters in a row turn up in 16 random bytes about once in 250.
func binaryDocument(s string) bool {
	if utf8.ValidString(s) {
		return false
	}
	if len(s) >= 64 {
		return true
	}
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			if run++; run >= 5 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// isEmailOrURL reports an address; pid@host (Java's RuntimeMXBean name,
// a common lock owner) is a process, not an e-mail address.
func isEmailOrURL(s string) bool {
	if i := strings.IndexByte(s, '@'); i > 0 && !keyshape.AllDigits(s[:i]) && strings.IndexByte(s[i:], '.') > 0 &&
		!strings.ContainsAny(s, " :") {
		return true
	}
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// hashFieldWords are the field names of records kept in hashes.
var hashFieldWords = wordSet(`name email id user username first last firstname lastname phone age plan created updated
status title type url address city country locale lang avatar role roles score count total price amount data value
version owner expires_at created_at updated_at`)

// namedFields reports a hash whose fields are mostly names (an
// identifier with at most two digits), not holder ids.
func namedFields(fields []string) bool {
	named, total := 0, 0
	for i := 0; i+1 < len(fields); i += 2 {
		total++
		if f := fields[i]; hashFieldWords[strings.ToLower(f)] || isFieldName(f) {
			named++
		}
	}
	return named > 0 && 2*named >= total
}

func isFieldName(f string) bool {
	if f == "" || len(f) > 40 || !(f[0] >= 'a' && f[0] <= 'z' || f[0] >= 'A' && f[0] <= 'Z') {
		return false
	}
	digits := 0
	for i := 0; i < len(f); i++ {
		switch c := f[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return digits <= 2
}
