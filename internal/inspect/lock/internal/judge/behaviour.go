package judge

import (
	"fmt"
	"math"

	"github.com/dupctl/dupctl/internal/platform/english"
)

// Behaviour, not names (issue 42): most locks in a user's Redis are
// written by libraries no catalogue has read, under names without a lock
// word. A family is judged by what its keys do as a whole, whatever wrote
// them: a lock holds a token drawn at random per acquisition (or one per
// process), is written once with the TTL its library grants and left
// alone until it is deleted or runs out. So a family whose values are
// random tokens of enough bits - estimated from the alphabet the whole
// family draws from, not from one value - and whose keys nearly all
// carry one granted TTL (PTTL + idle time) of a lease is a likely lock
// family, and its evidence says which of these decided it. Timestamps,
// hosts and counters are owner values too, but last-seen times,
// heartbeats and counters hold them as often: alone, without a lock word,
// they decide nothing.

// tokenStats are the family's values drawn from a token alphabet (letters,
// digits, + / - _ =), a single run of 8 to 128 of them: which character
// classes the family uses, the shortest, and how many of them one key's
// own characters made look weak (a letters-only draw from letters and
// digits).
type tokenStats struct {
	n, weak int64
	mask    uint8 // tokDigit | tokLower | ...
	minLen  int
}

const (
	tokDigit uint8 = 1 << iota
	tokLower
	tokUpper
	tokHexLower // only a-f among the lower-case letters
	tokPunct    // + / - _
)

// alphabetOf returns a token's character classes; false when it is no
// token (a character outside the base64 alphabets, or a length out of
// range).
func alphabetOf(v string) (uint8, bool) {
	if len(v) < 8 || len(v) > 128 {
		return 0, false
	}
	var m uint8
	hexOnly := true
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			m |= tokDigit
		case c >= 'a' && c <= 'z':
			m |= tokLower
			hexOnly = hexOnly && c <= 'f'
		case c >= 'A' && c <= 'Z':
			m |= tokUpper
		case c == '+' || c == '/' || c == '-' || c == '_':
			m |= tokPunct
		case c == '=' && i >= len(v)-2:
		default:
			return 0, false
		}
	}
	if hexOnly && m&tokLower != 0 {
		m |= tokHexLower
	}
	return m, true
}

func (t *tokenStats) add(v string, own Owner) {
	m, ok := alphabetOf(v)
	if !ok {
		return
	}
	t.n++
	t.mask |= m
	if t.minLen == 0 || len(v) < t.minLen {
		t.minLen = len(v)
	}
	if own.Class == OwnerLowEntropy || own.Class == OwnerCounter || own.Class == OwnerConstant && len(v) >= 16 {
		t.weak++
	}
}

func (t *tokenStats) merge(o *tokenStats) {
	t.n += o.n
	t.weak += o.weak
	t.mask |= o.mask
	if o.minLen > 0 && (t.minLen == 0 || o.minLen < t.minLen) {
		t.minLen = o.minLen
	}
}

// size is the number of characters the family's alphabet holds.
func (t *tokenStats) size() int {
	n := 0
	if t.mask&tokDigit != 0 {
		n += 10
	}
	switch {
	case t.mask&tokHexLower != 0 && t.mask&tokUpper == 0:
		n += 6 // hex
	case t.mask&tokLower != 0:
		n += 26
	}
	if t.mask&tokUpper != 0 {
		n += 26
	}
	if t.mask&tokPunct != 0 {
		n += 2
	}
	return n
}

// Bits estimates the random bits of the family's shortest token from its
// length and the family's alphabet: 16 characters of letters and digits
// are 16 x log2(62) = 95 bits whether or not one of them drew a digit.
func (t *tokenStats) Bits() int {
	if t.n == 0 || t.size() < 2 {
		return 0
	}
	return int(float64(t.minLen) * math.Log2(float64(t.size())))
}

// familyTokens reports whether the family's weak-looking tokens are
// draws from the family's alphabet with enough bits: the owner values of
// a family whose tokens agree in alphabet and length.
func (f *Tally) familyTokens() bool {
	t := &f.tokens
	return t.weak > 0 && t.n >= 3 && 2*t.weak < t.n && t.Bits() >= MinTokenBits
}

// TokenBits is the random bits an owner value v of the family holds by
// the family's alphabet and shortest token, when most of the family's
// values are tokens of enough bits and v is one of them (0 otherwise).
func (f *Tally) TokenBits(v string) int {
	t := &f.tokens
	if _, ok := alphabetOf(v); !ok || t.n < minBehaving || 2*t.weak >= t.n {
		return 0
	}
	return t.Bits()
}

// reclassified moves the family's weak-looking tokens to random when the
// family's alphabet says they are (familyTokens).
func (f *Tally) reclassified() map[OwnerClass]int64 {
	if !f.familyTokens() {
		return f.owners
	}
	out := map[OwnerClass]int64{}
	for c, n := range f.owners {
		out[c] = n
	}
	moved := min(f.tokens.weak, out[OwnerLowEntropy]+out[OwnerCounter])
	for _, c := range []OwnerClass{OwnerLowEntropy, OwnerCounter} {
		d := min(moved, out[c])
		out[c] -= d
		moved -= d
		out[OwnerRandom] += d
		if out[c] == 0 {
			delete(out, c)
		}
	}
	return out
}

// Behaviour is what a family's keys did as a whole: the evidence that
// makes a family of no lock word a likely lock family.
type Behaviour struct {
	Likely bool
	Why    []string
}

// minBehaving is the least number of keys whose behaviour can tell
// anything: one key agrees with itself.
const minBehaving = 3

// behaviour judges the family's values and TTLs together.
func (f *Tally) behaviour() Behaviour {
	var b Behaviour
	owners := f.reclassified()
	var read, tokens int64
	for c, n := range owners {
		read += n
		if c == OwnerUUID || c == OwnerUUIDTime || c == OwnerRandom {
			tokens += n
		}
	}
	if f.lockish < minBehaving || read < minBehaving {
		return b
	}
	withTTL := f.granted.count
	agree := f.granted.within(f.granted.quantile(0.5), 2)
	med := max(min(max(f.granted.quantile(0.5), f.grMin), f.grMax), 0)
	tokenOK := 10*tokens >= 8*read
	ttlOK := 10*withTTL >= 8*f.lockish && 10*agree >= 7*withTTL
	leaseOK := withTTL > 0 && med <= 3_600_000
	if tokenOK {
		what := "random tokens"
		if bits := f.tokens.Bits(); bits > 0 && f.tokens.n >= tokens/2 {
			what = fmt.Sprintf("random tokens (%d bits over the family's alphabet)", bits)
		}
		b.Why = append(b.Why, fmt.Sprintf("owner values: %s on %s of %s keys read", what, english.Number(tokens), english.Number(read)))
	}
	if ttlOK {
		b.Why = append(b.Why, fmt.Sprintf("one granted TTL: %s of %s keys with a TTL within 2x of %s "+
			"(PTTL + idle time: written once, left alone)", english.Number(agree), english.Number(withTTL), FormatMs(med)))
	}
	if leaseOK {
		b.Why = append(b.Why, "a lease: median granted TTL "+FormatMs(med))
	}
	b.Likely = tokenOK && ttlOK && leaseOK
	return b
}

// within counts the values within a factor of v (both ways), to the
// histogram's quarter-octave bins.
func (h *logHist) within(v int64, factor float64) int64 {
	if h.count == 0 {
		return 0
	}
	c := binOf(v)
	span := int(math.Ceil(math.Log2(factor) * 4))
	var n int64
	for b := max(c-span, 0); b <= min(c+span, len(h.bins)-1); b++ {
		n += h.bins[b]
	}
	return n
}

// multiKey reports a family whose repeated owner values each sit on the
// same small number of keys: one lock taken on a fixed group of keys (a
// majority of N keys, a lock over several resources), one token per lock
// by design - not a process-wide id, which sits on however many locks
// the process holds.
func (r *repeats) multiKey() (int64, bool) {
	if len(r.items) >= r.cap {
		return 0, false // not every value counted exactly
	}
	var k, groups int64
	for _, it := range r.items {
		switch {
		case it.count == 1:
			return 0, false // a value on one key beside the groups
		case k == 0:
			k = it.count
		case it.count != k:
			return 0, false
		}
		groups++
	}
	return k, groups >= 2 && k <= 8
}
