package keys

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
)

// Class is what a varying part of an idempotency key is.
type Class string

// The classes of varying segments, most specific first.
const (
	ClassAttempt   Class = "attempt"      // an attempt or retry counter
	ClassUUID4     Class = "uuid-v4"      // random UUID per attempt
	ClassTimeID    Class = "time-id"      // UUID v1/v6/v7, ULID, ObjectId: an id made from the time
	ClassUnixTime  Class = "unix-time"    // epoch seconds/ms/µs/ns
	ClassTimestamp Class = "timestamp"    // a formatted date-time
	ClassDelivery  Class = "delivery-id"  // delivery tag, message id of a redelivery
	ClassInstance  Class = "instance-id"  // consumer instance, host, pod
	ClassHash      Class = "hash"         // digest of something that changes
	ClassRandom    Class = "random-token" // high-entropy nonce
	ClassOther     Class = "other"
)

// placeholder is the class's name in a key template.
func (c Class) placeholder() string {
	switch c {
	case ClassAttempt:
		return "{attempt}"
	case ClassUUID4:
		return "{uuid4}"
	case ClassTimeID:
		return "{time-id}"
	case ClassUnixTime:
		return "{unix-time}"
	case ClassTimestamp:
		return "{timestamp}"
	case ClassDelivery:
		return "{delivery-id}"
	case ClassInstance:
		return "{instance}"
	case ClassHash:
		return "{hash}"
	case ClassRandom:
		return "{random}"
	}
	return "{?}"
}

// attemptCtx is what is known about the attempt that used a key.
type attemptCtx struct {
	attempt  int
	time     time.Time
	consumer string
	delivery string // delivery tag, or message id
	message  string
}

// verdict on one varying segment, from all its values.
type verdict struct {
	class  Class
	detail string
}

// classifySegment decides what the values of one varying segment are,
// using the attempt each value came with.
func classifySegment(vals []string, ctx []attemptCtx) verdict {
	if v, ok := attemptCounter(vals, ctx); ok {
		return v
	}
	if allMatch(vals, func(i int, s string) bool { return ctx[i].delivery != "" && s == ctx[i].delivery }) {
		return verdict{ClassDelivery, "equals the delivery tag / message id of each delivery"}
	}
	if allMatch(vals, func(i int, s string) bool { return ctx[i].consumer != "" && strings.EqualFold(s, ctx[i].consumer) }) {
		return verdict{ClassInstance, "equals the consumer instance that processed the attempt"}
	}
	if allMatch(vals, func(_ int, s string) bool { v, ok := uuidVersion(s); return ok && v == 4 }) {
		return verdict{ClassUUID4, "a random UUID v4, new on every attempt"}
	}
	if t, ok := decodeAll(vals, ctx, decodeTimeID); ok {
		return verdict{ClassTimeID, t}
	}
	if t, ok := decodeAll(vals, ctx, decodeUnix); ok {
		return verdict{ClassUnixTime, t}
	}
	if t, ok := decodeAll(vals, ctx, decodeFormatted); ok {
		return verdict{ClassTimestamp, t}
	}
	if allMatch(vals, func(_ int, s string) bool { return isDigest(s) }) {
		return verdict{ClassHash, "a digest (" + digestName(vals[0]) + ") of something that changes between attempts: a timestamp, " +
			"request id or header in the hashed payload"}
	}
	if allMatch(vals, func(_ int, s string) bool { return len(s) >= 16 && entropy(s) >= 3.5 }) {
		return verdict{ClassRandom, "a high-entropy token (nonce, ephemeral credential), new on every attempt"}
	}
	return verdict{ClassOther, "changes between attempts"}
}

func allMatch(vals []string, f func(int, string) bool) bool {
	for i, v := range vals {
		if !f(i, v) {
			return false
		}
	}
	return len(vals) > 0
}

// attemptCounter: small integers equal to the attempt (or attempt-1), or
// rising by one.
func attemptCounter(vals []string, ctx []attemptCtx) (verdict, bool) {
	nums := make([]int, len(vals))
	for i, v := range vals {
		if len(v) > 4 {
			return verdict{}, false
		}
		n, err := strconv.Atoi(strings.TrimLeft(strings.ToLower(v), "aemprty#")) // the letters of retry, try, attempt
		if err != nil || n < 0 || n > 1000 {
			return verdict{}, false
		}
		nums[i] = n
	}
	for _, off := range []int{0, 1} {
		if allMatch(vals, func(i int, _ string) bool { return ctx[i].attempt > 0 && nums[i] == ctx[i].attempt-off }) {
			return verdict{ClassAttempt, "equals the attempt number of each delivery"}, true
		}
	}
	rising := len(nums) > 1
	for i := 1; i < len(nums); i++ {
		if nums[i] != nums[i-1]+1 {
			rising = false
		}
	}
	if rising && nums[0] <= 2 {
		return verdict{ClassAttempt, "a counter rising by one per attempt"}, true
	}
	return verdict{}, false
}

// decodeAll decodes every value to a time and checks it lies near the
// attempt's own time (within an hour) when that is known.
func decodeAll(vals []string, ctx []attemptCtx, dec func(string) (time.Time, string, bool)) (string, bool) {
	var kind string
	var worst time.Duration
	for i, v := range vals {
		t, k, ok := dec(v)
		if !ok || t.Year() < 2000 || t.Year() > 2100 {
			return "", false
		}
		kind = k
		if at := ctx[i].time; !at.IsZero() {
			d := t.Sub(at)
			if d < 0 {
				d = -d
			}
			if d > time.Hour {
				return "", false
			}
			worst = max(worst, d)
		}
	}
	msg := kind + " decoded to the attempt's own time"
	if worst > 0 {
		msg += " (within " + worst.Round(time.Millisecond).String() + ")"
	}
	return msg, true
}

// uuidVersion reads a canonical or undashed UUID's version nibble.
func uuidVersion(s string) (int, bool) {
	h := s
	if len(s) == 36 {
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return 0, false
		}
		h = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	}
	if len(h) != 32 || !isHex(h) {
		return 0, false
	}
	v := int(unhex(h[12]))
	variant := unhex(h[16])
	if variant < 8 || variant > 0xb {
		return 0, false
	}
	return v, true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if unhex(s[i]) > 15 {
			return false
		}
	}
	return true
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// decodeTimeID reads the time inside a UUID v1/v6/v7, a ULID or a MongoDB
// ObjectId.
func decodeTimeID(s string) (time.Time, string, bool) {
	if v, ok := uuidVersion(s); ok {
		h := strings.ReplaceAll(s, "-", "")
		b, _ := hex.DecodeString(h)
		switch v {
		case 7:
			ms := int64(b[0])<<40 | int64(b[1])<<32 | int64(b[2])<<24 | int64(b[3])<<16 | int64(b[4])<<8 | int64(b[5])
			return time.UnixMilli(ms).UTC(), "UUID v7", true
		case 1, 6:
			var ts uint64
			if v == 1 {
				ts = uint64(b[6]&0x0f)<<56 | uint64(b[7])<<48 | uint64(b[4])<<40 | uint64(b[5])<<32 |
					uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
			} else {
				ts = uint64(b[0])<<52 | uint64(b[1])<<44 | uint64(b[2])<<36 | uint64(b[3])<<28 |
					uint64(b[4])<<20 | uint64(b[5])<<12 | uint64(b[6]&0x0f)<<8 | uint64(b[7])
			}
			// 100 ns intervals since 1582-10-15.
			const gregorianToUnix = 122192928000000000
			if ts < gregorianToUnix {
				return time.Time{}, "", false
			}
			return time.Unix(0, int64(ts-gregorianToUnix)*100).UTC(), "UUID v" + strconv.Itoa(v), true
		}
		return time.Time{}, "", false
	}
	if len(s) == 26 && s[0] >= '0' && s[0] <= '7' {
		var ms uint64
		for i := 0; i < 10; i++ {
			d := crockford(s[i])
			if d < 0 {
				return time.Time{}, "", false
			}
			ms = ms<<5 | uint64(d)
		}
		for i := 10; i < 26; i++ {
			if crockford(s[i]) < 0 {
				return time.Time{}, "", false
			}
		}
		return time.UnixMilli(int64(ms)).UTC(), "ULID", true
	}
	if len(s) == 24 && isHex(s) {
		b, _ := hex.DecodeString(s)
		sec := int64(b[0])<<24 | int64(b[1])<<16 | int64(b[2])<<8 | int64(b[3])
		return time.Unix(sec, 0).UTC(), "ObjectId", true
	}
	return time.Time{}, "", false
}

func crockford(c byte) int {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	return strings.IndexByte(alphabet, c)
}

// decodeUnix reads 10/13/16/19-digit epoch values.
func decodeUnix(s string) (time.Time, string, bool) {
	if !allDigits(s) {
		return time.Time{}, "", false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	switch len(s) {
	case 10:
		return time.Unix(n, 0).UTC(), "unix seconds", true
	case 13:
		return time.UnixMilli(n).UTC(), "unix milliseconds", true
	case 16:
		return time.UnixMicro(n).UTC(), "unix microseconds", true
	case 19:
		return time.Unix(0, n).UTC(), "unix nanoseconds", true
	}
	return time.Time{}, "", false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var formattedLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05", "20060102T150405.000", "20060102T150405Z", "20060102T150405",
	"20060102150405", "2006-01-02 15:04:05", "2006-01-02T15:04", "200601021504", "2006-01-02",
}

func decodeFormatted(s string) (time.Time, string, bool) {
	for _, l := range formattedLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, "a formatted timestamp", true
		}
	}
	return time.Time{}, "", false
}

func isDigest(s string) bool {
	switch len(s) {
	case 32, 40, 64, 128:
		return isHex(s)
	case 44:
		return strings.HasSuffix(s, "=") // base64 sha256
	case 43:
		return entropy(s) > 4 // base64url sha256
	}
	return false
}

func digestName(s string) string {
	switch len(s) {
	case 32:
		return "MD5-sized"
	case 40:
		return "SHA-1-sized"
	case 64, 43, 44:
		return "SHA-256-sized"
	}
	return "SHA-512-sized"
}

// entropy is Shannon entropy in bits per character.
func entropy(s string) float64 {
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	h := 0.0
	for _, c := range freq {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}
