// Package keyshape gives a Redis key's segments their shapes: a key is
// split into segments at ':' '/' '|' '{' '}' '.' and each segment gets a
// Kind (a word, an int, an epoch, a UUID and its version, a ULID, a digest,
// a date, ...). Literal words stay in the family template; anything that
// varies becomes a placeholder, so lock:payment:order:8d0c...e1 and
// lock:payment:order:3f2a...9b share the family lock:payment:order:{uuid}.
// Owner values are judged with the same shapes.
package keyshape

import (
	"encoding/binary"
	"strconv"
	"strings"
	"time"
)

// Kind is the shape of one key segment (or one part of an owner value).
type Kind uint8

const (
	KindWord      Kind = iota // a literal label: lock, payment, order
	KindEmpty                 // nothing between two separators
	KindInt                   // an integer: an entity id or a counter
	KindEpoch                 // 10 or 13 digits near now: a timestamp
	KindSnowflake             // 17-19 digits whose Twitter-epoch time is plausible
	KindUUID                  // RFC 9562 UUID (Version says which)
	KindULID                  // 26 Crockford base32 chars, ms time first
	KindObjectID              // 24 hex whose first 4 bytes are a plausible time
	KindJID                   // 24 hex otherwise: Sidekiq's SecureRandom.hex(12)
	KindMD5                   // 32 hex: a digest (sidekiq-unique-jobs legacy, asynq)
	KindSHA1                  // 40 hex
	KindSHA256                // 64 hex (sidekiq-unique-jobs modern)
	KindHex                   // other hex with digits and letters
	KindBase64                // a random token: base64 or base64url, 16+ chars
	KindDate                  // 2026-12-01, 2026-12, 20261201: a period bucket
	KindID                    // letters and digits: ORD-1234, user42
	KindName                  // a word that varies among many siblings
	NumKinds
)

var kindNames = [NumKinds]string{"word", "empty", "int", "epoch", "snowflake", "uuid", "ulid", "objectid", "jid",
	"md5", "sha1", "sha256", "hex", "base64", "date", "id", "name"}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Placeholder is the family template's name for a varying segment.
func (k Kind) Placeholder() string { return placeholders[k] }

var placeholders = func() (p [NumKinds]string) {
	for k := range p {
		p[k] = Kind(k).placeholderName()
	}
	return
}()

func (k Kind) placeholderName() string {
	switch k {
	case KindInt, KindEpoch, KindSnowflake:
		return "{int}"
	case KindObjectID, KindJID:
		return "{hex24}"
	case KindMD5:
		return "{hex32}"
	case KindSHA1:
		return "{hex40}"
	case KindSHA256:
		return "{hex64}"
	}
	return "{" + k.String() + "}"
}

// Shape is one classified segment.
type Shape struct {
	Kind    Kind
	Version int       // UUID version
	Time    time.Time // embedded creation time, when the shape has one
}

// isSep reports key separators.
func isSep(c byte) bool {
	switch c {
	case ':', '/', '|', '{', '}', '.':
		return true
	}
	return false
}

// Segment is one piece of a key between separators.
type Segment struct {
	Text  string
	Shape Shape
	Sep   string // the separator run that follows it
}

// Split cuts a key into segments. At most maxSegments are classified;
// the rest of a longer key stays one literal tail. now bounds the times
// an id may carry.
func Split(key string, now time.Time) []Segment { return AppendSegments(nil, key, now) }

// splitKeyInto is splitKey reusing dst's memory.
func splitKeyInto(dst []Segment, key string, now time.Time) []Segment {
	return AppendSegments(dst[:0], key, now)
}

// AppendSegments appends key's segments to dst (the scan's hot path keeps
// a page's segments in one slice).
func AppendSegments(dst []Segment, key string, now time.Time) []Segment {
	out, start := dst, len(dst)
	i := 0
	for i <= len(key) {
		j := i
		for j < len(key) && !isSep(key[j]) {
			j++
		}
		k := j
		for k < len(key) && isSep(key[k]) {
			k++
		}
		if len(out)-start == maxSegments-1 {
			out = append(out, Segment{Text: key[i:], Shape: Shape{Kind: KindWord}})
			break
		}
		seg := key[i:j]
		sh := Classify(seg, now)
		if n := idTail(seg, sh.Kind); n > 0 && len(out)-start < maxSegments-2 {
			// A name ending in an id (celery-task-meta-<uuid>,
			// import_feed-lock-<md5>) varies only in the id.
			head := seg[:len(seg)-n-1]
			out = append(out, Segment{Text: head, Shape: Classify(head, now), Sep: seg[len(head) : len(head)+1]})
			seg, sh = seg[len(seg)-n:], Classify(seg[len(seg)-n:], now)
		}
		out = append(out, Segment{Text: seg, Shape: sh, Sep: key[j:k]})
		if k >= len(key) {
			break
		}
		i = k
	}
	return out
}

const maxSegments = 12

// idTail is the length of the UUID or hex digest (32, 40 or 64 digits)
// a word or code segment ends in after a '-' or '_', or 0.
func idTail(seg string, k Kind) int {
	if k != KindID && k != KindWord || len(seg) < 34 {
		return 0
	}
	for _, n := range [...]int{64, 40, 36, 32} {
		if len(seg) < n+2 || seg[len(seg)-n-1] != '-' && seg[len(seg)-n-1] != '_' {
			continue
		}
		tail := seg[len(seg)-n:]
		if _, ok := ParseUUID(tail); ok || n != 36 && IsHex(tail) && HasDigit(tail) && HasLetter(tail) {
			return n
		}
	}
	return 0
}

// Classify gives one segment (or owner-value part) its shape; ids
// carrying a time count only when it falls between 2009 and a day after
// now.
func Classify(s string, now time.Time) Shape {
	n := len(s)
	if n == 0 {
		return Shape{Kind: KindEmpty}
	}
	if AllDigits(s) {
		return ClassifyInt(s, now)
	}
	if n == 36 {
		if u, ok := ParseUUID(s); ok {
			return u
		}
	}
	if IsHex(s) && HasDigit(s) && HasLetter(s) {
		switch n {
		case 24:
			if t, ok := objectIDTime(s, now); ok {
				return Shape{Kind: KindObjectID, Time: t}
			}
			return Shape{Kind: KindJID}
		case 32: // also a dashless UUID: the same placeholder either way
			return Shape{Kind: KindMD5}
		case 40:
			return Shape{Kind: KindSHA1}
		case 64:
			return Shape{Kind: KindSHA256}
		}
		if n >= 8 {
			return Shape{Kind: KindHex}
		}
	}
	if n == 26 {
		if t, ok := ulidTime(s, now); ok {
			return Shape{Kind: KindULID, Time: t}
		}
	}
	if IsDate(s) {
		return Shape{Kind: KindDate}
	}
	if looksRandom(s) {
		return Shape{Kind: KindBase64}
	}
	if HasDigit(s) && n > 3 {
		return Shape{Kind: KindID}
	}
	return Shape{Kind: KindWord}
}

func ClassifyInt(s string, now time.Time) Shape {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || (len(s) > 1 && s[0] == '0') {
		return Shape{Kind: KindID} // zero-padded or huge: a code, not a number
	}
	switch len(s) {
	case 10:
		if t := time.Unix(int64(v), 0); plausible(t, now) {
			return Shape{Kind: KindEpoch, Time: t}
		}
	case 13:
		if t := time.UnixMilli(int64(v)); plausible(t, now) {
			return Shape{Kind: KindEpoch, Time: t}
		}
	case 17, 18, 19:
		// Twitter snowflake: 41 bits of ms since 2010-11-04T01:42:54.657Z.
		if t := time.UnixMilli(int64(v>>22) + 1288834974657); plausible(t, now) {
			return Shape{Kind: KindSnowflake, Time: t}
		}
	}
	return Shape{Kind: KindInt}
}

// plausible reports a creation time between 2009 and a day after now:
// what an id minted by a running system can carry.
func plausible(t, now time.Time) bool {
	return t.After(time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC)) && t.Before(now.Add(24*time.Hour))
}

// ParseUUID reads the 8-4-4-4-12 form and decodes v1, v6 and v7 times.
func ParseUUID(s string) (Shape, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return Shape{}, false
	}
	var b [16]byte
	for i, j := 0, 0; i < 36; i += 2 {
		if s[i] == '-' {
			i--
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return Shape{}, false
		}
		b[j] = hi<<4 | lo
		j++
	}
	ver := int(b[6] >> 4)
	sh := Shape{Kind: KindUUID, Version: ver}
	if b[8]&0xC0 != 0x80 { // not the RFC variant: a 36-char hex id of another kind
		sh.Version = 0
		return sh, true
	}
	switch ver {
	case 1:
		ts := int64(binary.BigEndian.Uint16(b[6:8])&0x0fff)<<48 | int64(binary.BigEndian.Uint16(b[4:6]))<<32 |
			int64(binary.BigEndian.Uint32(b[0:4]))
		sh.Time = gregorian(ts)
	case 6:
		ts := int64(binary.BigEndian.Uint32(b[0:4]))<<28 | int64(binary.BigEndian.Uint16(b[4:6]))<<12 |
			int64(binary.BigEndian.Uint16(b[6:8])&0x0fff)
		sh.Time = gregorian(ts)
	case 7:
		ms := int64(b[0])<<40 | int64(b[1])<<32 | int64(b[2])<<24 | int64(b[3])<<16 | int64(b[4])<<8 | int64(b[5])
		sh.Time = time.UnixMilli(ms)
	}
	return sh, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// gregorian converts 100 ns intervals since 1582-10-15 to a time.
func gregorian(ts int64) time.Time {
	const offset = 122192928000000000 // 100 ns intervals from 1582-10-15 to 1970-01-01
	return time.Unix(0, (ts-offset)*100)
}

// objectIDTime decodes a MongoDB ObjectId's seconds, when plausible.
func objectIDTime(s string, now time.Time) (time.Time, bool) {
	v, err := strconv.ParseUint(s[:8], 16, 32)
	if err != nil {
		return time.Time{}, false
	}
	t := time.Unix(int64(v), 0)
	return t, plausible(t, now)
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ulidTime decodes a ULID's 48-bit ms time from its first 10 chars.
func ulidTime(s string, now time.Time) (time.Time, bool) {
	var ms int64
	hasLetter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		d := strings.IndexByte(crockford, c)
		if d < 0 {
			return time.Time{}, false
		}
		if d >= 10 {
			hasLetter = true
		}
		if i < 10 {
			ms = ms<<5 | int64(d)
		}
	}
	t := time.UnixMilli(ms)
	return t, hasLetter && plausible(t, now)
}

func IsDate(s string) bool {
	switch len(s) {
	case 7: // 2026-12
		return AllDigits(s[:4]) && s[4] == '-' && AllDigits(s[5:]) && validMonth(s[5:7])
	case 8: // 20261201
		return AllDigits(s) && (s[:2] == "19" || s[:2] == "20") && validMonth(s[4:6])
	case 10: // 2026-12-01
		return AllDigits(s[:4]) && s[4] == '-' && AllDigits(s[5:7]) && s[7] == '-' && AllDigits(s[8:]) && validMonth(s[5:7])
	}
	return false
}

func validMonth(m string) bool { return m >= "01" && m <= "12" }

func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func IsHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

func HasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func HasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// looksRandom reports a machine-made token of 16+ chars in a base64,
// base64url or alphanumeric alphabet: it mixes digits with letters of both
// cases (or, lowercase only, has at least a fifth digits and no
// punctuation), which words, hostnames and names do not.
func looksRandom(s string) bool {
	if len(s) < 16 {
		return false
	}
	c, ok := countAlphabet(s)
	if !ok {
		return false
	}
	if c.upper > 0 && c.lower > 0 && c.digits > 0 {
		return true
	}
	// base64 of random bytes, or random letters, may lack digits: take
	// padding, punctuation or runs of capitals (which CamelCase words lack)
	// as the sign.
	if c.upper > 0 && c.lower > 0 && len(s) >= 20 && (c.punct > 0 || strings.HasSuffix(s, "=") || capitalPairs(s) >= 2) {
		return true
	}
	// Random letters of both cases (go-zero's stringx.Randn draws 16 from
	// letters and digits, and has no digit 6% of the time) switch case
	// about every other letter and pair capitals; CamelCase words and
	// acronyms (HTTPServerConfig) switch case once per word.
	if c.upper >= 3 && c.lower >= 3 && c.punct == 0 && capitalPairs(s) >= 2 && 3*caseSwitches(s) >= len(s) {
		return true
	}
	if c.upper == 0 && c.punct == 0 && c.digits == 0 && len(s) >= 20 {
		return consonantRun(s) >= 5 // random lower-case letters; words have vowels
	}
	return c.upper == 0 && c.punct == 0 && c.digits*5 >= len(s) && c.lower > 0
}

// consonantRun is the longest run of consonants in s.
func consonantRun(s string) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("aeiouy", s[i]) >= 0 {
			run = 0
			continue
		}
		run++
		best = max(best, run)
	}
	return best
}

// alphabet counts a token's characters by class.
type alphabet struct{ digits, upper, lower, punct int }

// countAlphabet counts s's characters; false when one is outside base64,
// base64url and their padding (at the end).
func countAlphabet(s string) (alphabet, bool) {
	var a alphabet
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			a.digits++
		case c >= 'A' && c <= 'Z':
			a.upper++
		case c >= 'a' && c <= 'z':
			a.lower++
		case c == '+' || c == '/' || c == '-' || c == '_':
			a.punct++
		case c == '=' && i >= len(s)-2:
		default:
			return a, false
		}
	}
	return a, true
}

// caseSwitches counts neighbouring letters of different case.
func caseSwitches(s string) int {
	n := 0
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		if (a >= 'A' && a <= 'Z' && b >= 'a' && b <= 'z') || (a >= 'a' && a <= 'z' && b >= 'A' && b <= 'Z') {
			n++
		}
	}
	return n
}

func capitalPairs(s string) int {
	n := 0
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'A' && s[i-1] <= 'Z' {
			n++
		}
	}
	return n
}

// Template builds a key's family Template from its segments.
func Template(segs []Segment) string { return string(AppendTemplate(nil, segs)) }

// AppendTemplate appends the template to b (allocation-free lookups).
func AppendTemplate(b []byte, segs []Segment) []byte {
	for _, s := range segs {
		if s.Shape.Kind == KindWord || s.Shape.Kind == KindEmpty {
			b = append(b, s.Text...)
		} else {
			b = append(b, s.Shape.Kind.Placeholder()...)
		}
		b = append(b, s.Sep...)
	}
	return b
}
