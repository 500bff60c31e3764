package judge

import (
	"encoding/binary"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"strconv"
	"strings"
)

// Clients of other ecosystems serialize what they store: Spring's
// RedisTemplate writes a lock's token with JDK serialization unless told
// otherwise, Django's cache pickles it, Rails' cache wraps it in an
// entry, cachelib prefixes "!" to the pickle. Such a value is a document
// to the evidence (a cache entry, mostly), but under a lock word it is a
// lock's token in its client's wrapping: judged by the string inside.

// wrappedString returns the string a serializer wrapped in v: Java's
// TC_STRING, a pickled str (cachelib's "!" before it too), a Rails 7.1
// cache entry of a string, PHP's serialize() of a string.
func wrappedString(v string) (string, bool) {
	switch {
	case len(v) >= 7 && v[:5] == "\xac\xed\x00\x05\x74": // ObjectOutputStream: TC_STRING, 2-byte length
		return v[7:], len(v)-7 == int(binary.BigEndian.Uint16([]byte(v[5:7])))
	case len(v) >= 2 && v[0] == '!' && v[1] == 0x80:
		return pickledString(v[1:])
	case len(v) >= 2 && v[0] == 0x80:
		return pickledString(v)
	case len(v) >= 15 && v[0] == 0 && v[1] == 0x11 && v[2] >= 2 && v[2] <= 4: // Coder: a UTF-8, binary or ASCII string
		n := int32(binary.LittleEndian.Uint32([]byte(v[11:15]))) // the version's length, -1 for none
		if at := 15 + int(max(n, 0)); at <= len(v) {
			return v[at:], true
		}
	case len(v) <= 512 && strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}"):
		return jsonOwner(v)
	case strings.HasPrefix(v, "s:") && strings.HasSuffix(v, `";`):
		head, s, ok := strings.Cut(v[2:len(v)-2], `:"`)
		n, err := strconv.Atoi(head)
		return s, ok && err == nil && n == len(s)
	}
	return "", false
}

// pickledString reads pickle.dumps(str) at protocol 2 to 5: PROTO, a
// FRAME from protocol 4, SHORT_BINUNICODE or BINUNICODE, a memo (MEMOIZE
// or BINPUT), STOP.
func pickledString(v string) (string, bool) {
	if len(v) < 4 || v[1] < 2 || v[1] > 5 {
		return "", false
	}
	i := 2
	if v[i] == 0x95 { // FRAME and its 8-byte length
		i += 9
	}
	var s string
	switch {
	case i+2 <= len(v) && v[i] == 0x8c:
		n := int(v[i+1])
		if i+2+n > len(v) {
			return "", false
		}
		s, i = v[i+2:i+2+n], i+2+n
	case i+5 <= len(v) && v[i] == 'X':
		n := int(binary.LittleEndian.Uint32([]byte(v[i+1 : i+5])))
		if i+5+n > len(v) {
			return "", false
		}
		s, i = v[i+5:i+5+n], i+5+n
	default:
		return "", false
	}
	switch {
	case i < len(v) && v[i] == 0x94:
		i++
	case i+1 < len(v) && v[i] == 'q':
		i += 2
	}
	return s, i+1 == len(v) && v[i] == '.'
}

// jsonOwner reads a small JSON object of scalar fields as the owner it
// records (redis-promise-lock's {"lockedSince": <ISO time>}, an
// {"owner": ..., "at": ...}): its values, in the order of their names.
// A record with more fields, or nested ones, stays a document.
func jsonOwner(v string) (string, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(v), &m) != nil || len(m) == 0 || len(m) > 4 {
		return "", false
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		x, ok := m[k].(string)
		if !ok || !ownerish(x) {
			return "", false // a setting, a flag, a count: a record
		}
		parts = append(parts, x)
	}
	return strings.Join(parts, "|"), true
}

// ownerish reports what an owner records: an ISO time, a host, or a
// token (a UUID, random characters, a hex id).
func ownerish(s string) bool {
	if len(s) >= 10 && keyshape.IsDate(s[:10]) || isHostname(s) && strings.Contains(s, ".") {
		return true
	}
	switch keyshape.Classify(s, time.Now()).Kind {
	case keyshape.KindUUID, keyshape.KindULID, keyshape.KindBase64, keyshape.KindJID, keyshape.KindMD5, keyshape.KindSHA1,
		keyshape.KindSHA256, keyshape.KindObjectID:
		return true
	case keyshape.KindHex:
		return len(s) >= 16 // an etag's or a hash's first digits are no token
	}
	return false
}
