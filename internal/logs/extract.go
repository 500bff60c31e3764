package logs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth bounds how deep nested objects are searched for fields.
const maxDepth = 6

const noRank = math.MaxUint16

// extractor turns one JSON line into an Event. One per worker goroutine.
//
// It is a single-pass scanner written for this job rather than a general
// parser (fastjson measured 100 MB/s per core here, building values for
// every field): it walks the object once, looks each scalar's dotted path
// up in the mapping and keeps the raw bytes of the fields it wants, with
// no allocation. It checks the JSON structure (braces, strings, commas,
// literals) but is lenient inside strings and numbers: a control
// character in a string or a leading zero does not make a line malformed.
type extractor struct {
	m     *Mapping
	path  []byte
	rank  [NumFields]uint16
	unit  [NumFields]unit
	val   [NumFields][]byte
	kinds map[string]Kind // exact event names seen, and their kinds
	cls   classifier
	scrat []byte
	seen  [seenSize]seenKey  // recent paths and their slots
	only  FieldSet           // fields to extract (0: all)
	cur   []byte             // the path being looked up: x.path, or a top-level key in the line
	paths *[NumFields]string // with Options.RecordPaths: the path each field came from
	// keep and pre are Options.Keep and the extractor of its first read.
	keep func(*Event) bool
	pre  *extractor
}

const seenSize = 128

type seenKey struct {
	path []byte
	s    slot
	ok   bool
	set  bool
}

var errNotObject = errors.New("not a JSON object")

type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.off+1, e.msg)
}

// line parses b and fills ev. Field strings point into b, which the
// caller keeps alive while the event is in use (unescaped values are
// copies).
func (x *extractor) line(b []byte, ev *Event) error {
	for i := range x.rank {
		x.rank[i] = noRank
	}
	if x.paths != nil {
		*x.paths = [NumFields]string{}
	}
	x.path = x.path[:0]
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i, err := x.object(b, i, 0)
	if err != nil {
		return err
	}
	if i = skipWS(b, i); i != len(b) {
		return &syntaxError{i, "data after the object"}
	}
	if x.paths != nil {
		p := *x.paths
		ev.Paths = &p
	}
	for f := Field(0); f < NumFields; f++ {
		if x.rank[f] == noRank {
			ev.Fields[f] = ""
			continue
		}
		v := x.val[f]
		ev.Fields[f] = unsafe.String(unsafe.SliceData(v), len(v))
	}
	x.normalize(ev)
	return nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// object scans the object at b[i] == '{' and returns the index after it.
func (x *extractor) object(b []byte, i, depth int) (int, error) {
	base := len(x.path)
	defer func() { x.path = x.path[:base] }()
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, &syntaxError{i, "want a key"}
		}
		end, esc := strEnd(b, i+1)
		if end < 0 {
			return 0, &syntaxError{i, "unterminated key"}
		}
		key := b[i+1 : end]
		// The path to look up: a top-level key as it stands in the line
		// (no copy: most keys), else parent path + "." + key.
		x.path = x.path[:base]
		if base == 0 && !esc {
			x.cur = key
		} else {
			if base > 0 {
				x.path = append(x.path, '.')
			}
			if esc {
				x.scrat = unescape(x.scrat[:0], key)
				x.path = append(x.path, x.scrat...)
			} else {
				x.path = append(x.path, key...)
			}
			x.cur = x.path
		}
		// Compact JSON has no blanks: test the next byte before skipping.
		if i = end + 1; i < len(b) && b[i] != ':' {
			i = skipWS(b, i)
		}
		if i >= len(b) || b[i] != ':' {
			return 0, &syntaxError{i, "want ':'"}
		}
		if i++; i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		if i >= len(b) {
			return 0, &syntaxError{i, "want a value"}
		}
		var err error
		switch c := b[i]; {
		case c == '{':
			if depth < maxDepth {
				if base == 0 && !esc {
					x.path = append(x.path[:0], key...)
				}
				i, err = x.object(b, i, depth+1)
			} else {
				i, err = skipValue(b, i)
			}
		case c == '[':
			i, err = skipValue(b, i)
		case c == '"':
			end, esc := strEnd(b, i+1)
			if end < 0 {
				return 0, &syntaxError{i, "unterminated string"}
			}
			if s, ok := x.want(); ok {
				v := b[i+1 : end]
				if esc {
					// Escapes are rare in log values: unescape into a
					// fresh slice rather than keep an arena per chunk.
					v = unescape(make([]byte, 0, len(v)), v)
				}
				x.set(s, v)
			}
			i = end + 1
		default:
			j, err2 := scalarEnd(b, i)
			if err2 != nil {
				return 0, err2
			}
			if b[i] != 'n' { // null carries nothing
				if s, ok := x.want(); ok {
					x.set(s, b[i:j])
				}
			}
			i = j
		}
		if err != nil {
			return 0, err
		}
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		if i >= len(b) {
			return 0, &syntaxError{i, "unterminated object"}
		}
		switch b[i] {
		case ',':
			if i++; i < len(b) && b[i] <= ' ' {
				i = skipWS(b, i)
			}
		case '}':
			return i + 1, nil
		default:
			return 0, &syntaxError{i, "want ',' or '}'"}
		}
	}
}

// want looks the current path up: is it a field, better than the one
// already found?
func (x *extractor) want() (slot, bool) {
	// A log has few distinct key paths, repeated on every line: answer
	// from a small direct-mapped cache (indexed by a cheap hash of the
	// path) and ask the mapping only on a miss.
	p := x.cur
	h := uint(len(p)) * 31
	if len(p) > 0 {
		h += uint(p[0])*7 + uint(p[len(p)-1])*13 + uint(p[len(p)/2])*3
	}
	h &= seenSize - 1
	c := &x.seen[h]
	var s slot
	var ok bool
	if c.set && string(c.path) == string(p) {
		s, ok = c.s, c.ok
	} else {
		s, ok = x.m.lookup(p)
		c.path = append(c.path[:0], p...)
		c.s, c.ok, c.set = s, ok, true
	}
	if !ok || s.rank >= x.rank[s.field] || (x.only != 0 && x.only&(1<<s.field) == 0) {
		return slot{}, false
	}
	return s, true
}

func (x *extractor) set(s slot, v []byte) {
	x.rank[s.field] = s.rank
	x.unit[s.field] = s.unit
	x.val[s.field] = v
	if x.paths != nil {
		x.paths[s.field] = string(x.cur)
	}
}

// strEnd returns the index of the quote closing the string whose content
// starts at i, and whether the content has escapes; -1 if unterminated.
// It looks at eight bytes at a time for a quote or a backslash (SWAR):
// strings are most of a log line's bytes.
func strEnd(b []byte, i int) (int, bool) {
	esc := false
	for {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			m := hasZero(w^(lo8*'"')) | hasZero(w^(lo8*'\\'))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
			break
		}
		for ; i < len(b) && b[i] != '"' && b[i] != '\\'; i++ {
		}
		if i >= len(b) {
			return -1, false
		}
		if b[i] == '"' {
			return i, esc
		}
		esc = true
		i += 2 // the backslash and the byte it escapes
	}
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// hasZero has the high bit set in each byte of w that is zero (exact for
// the lowest such byte, which is the one strEnd uses).
func hasZero(w uint64) uint64 { return (w - lo8) & ^w & hi8 }

// scalarEnd returns the end of a number or literal at b[i].
func scalarEnd(b []byte, i int) (int, error) {
	switch b[i] {
	case 't':
		if bytes.HasPrefix(b[i:], trueBytes) {
			return i + 4, nil
		}
	case 'f':
		if bytes.HasPrefix(b[i:], falseBytes) {
			return i + 5, nil
		}
	case 'n':
		if bytes.HasPrefix(b[i:], nullBytes) {
			return i + 4, nil
		}
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				j++
				continue
			}
			break
		}
		if j > i && (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) {
			return j, nil
		}
	}
	return 0, &syntaxError{i, "want a value"}
}

// skipValue skips any value at b[i], checking its structure.
func skipValue(b []byte, i int) (int, error) {
	switch b[i] {
	case '"':
		end, _ := strEnd(b, i+1)
		if end < 0 {
			return 0, &syntaxError{i, "unterminated string"}
		}
		return end + 1, nil
	case '{', '[':
		var stack []byte
		stack = append(stack, b[i])
		i = skipWS(b, i+1)
		expectValue := true
		for len(stack) > 0 {
			if i >= len(b) {
				return 0, &syntaxError{i, "unterminated " + map[byte]string{'{': "object", '[': "array"}[stack[len(stack)-1]]}
			}
			c := b[i]
			switch {
			case c == '}' || c == ']':
				open := byte('{')
				if c == ']' {
					open = '['
				}
				if stack[len(stack)-1] != open {
					return 0, &syntaxError{i, "mismatched " + string(c)}
				}
				stack = stack[:len(stack)-1]
				i++
				expectValue = false
			case c == ',' || c == ':':
				i++
				expectValue = true
			case c == '{' || c == '[':
				stack = append(stack, c)
				i++
			case c == '"':
				end, _ := strEnd(b, i+1)
				if end < 0 {
					return 0, &syntaxError{i, "unterminated string"}
				}
				i = end + 1
				expectValue = false
			default:
				j, err := scalarEnd(b, i)
				if err != nil {
					return 0, err
				}
				i = j
				expectValue = false
			}
			_ = expectValue
			i = skipWS(b, i)
		}
		return i, nil
	}
	return scalarEnd(b, i)
}

// unescape appends the JSON string content s, unescaped, to dst.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			if i+4 >= len(s) {
				dst = append(dst, '?')
				i = len(s)
				continue
			}
			r := hex4(s[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2 := hex4(s[i+3 : i+7]); r2 >= 0 {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					}
				}
			}
			if r < 0 || utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // \" \\ \/ and anything else, leniently
			dst = append(dst, s[i])
		}
	}
	return dst
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

var (
	trueBytes  = []byte("true")
	falseBytes = []byte("false")
	nullBytes  = []byte("null")
)

// normalize fills the typed fields and the kind from the raw fields.
func (x *extractor) normalize(ev *Event) {
	f := &ev.Fields
	ev.Time = time.Time{}
	if s := f[Timestamp]; s != "" {
		ev.Time, _ = parseTime(s, x.unit[Timestamp])
	}
	ev.Attempt, ev.HasAttempt = 0, false
	if s := f[Attempt]; s != "" {
		ev.Attempt, ev.HasAttempt = atoiLoose(s), true
	} else if s := f[RetryCount]; s != "" {
		ev.Attempt, ev.HasAttempt = atoiLoose(s)+1, true
	}
	ev.LockTTL, ev.Duration = 0, 0
	if s := f[LockTTL]; s != "" {
		ev.LockTTL = parseDuration(s, x.unit[LockTTL], true)
	}
	if s := f[Duration]; s != "" {
		ev.Duration = parseDuration(s, x.unit[Duration], false)
	}
	ev.Redelivered = parseTri(f[Redelivered])
	ev.Hit = parseHit(f[Result])
	ev.FromCache = Unknown
	if src := f[CheckSource]; src != "" {
		ev.FromCache = sourceIsCache(src)
	}
	if ch := parseTri(f[CacheHit]); ch != Unknown && ev.FromCache == Unknown {
		// cache.hit=true: the answer came from the cache.
		ev.FromCache = ch
	}
	name := f[EventName]
	ev.Name = name
	if name == "" {
		ev.Name = f[Message]
	}
	x.kindOf(ev, name, f[Message])
	if ev.Kind == KindDuplicate && ev.Hit == Unknown {
		ev.Hit = True
	}
}

func atoiLoose(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 1e9 {
			return 0
		}
		return int(f)
	}
	if n < 0 {
		return 0
	}
	return n
}

func parseTri(s string) Tri {
	switch s { // the usual spellings without folding
	case "":
		return Unknown
	case "true":
		return True
	case "false":
		return False
	}
	switch strings.ToLower(s) {
	case "":
		return Unknown
	case "true", "1", "yes", "y", "t":
		return True
	case "false", "0", "no", "n", "f":
		return False
	}
	return Unknown
}

// parseHit reads a check's answer: did it find the operation already done?
func parseHit(s string) Tri {
	if s == "" {
		return Unknown
	}
	switch normName(s) {
	case "":
		return Unknown
	case "hit", "found", "true", "duplicate", "alreadyprocessed", "exists", "done", "succeeded", "success", "completed", "yes", "skip", "skipped":
		return True
	case "miss", "notfound", "false", "new", "absent", "none", "no", "proceed", "processing", "pending", "unknown", "failed", "retryable":
		return False
	}
	return Unknown
}

func sourceIsCache(s string) Tri {
	n := normName(s)
	switch {
	case strings.Contains(n, "cache"), strings.Contains(n, "redis"), strings.Contains(n, "memcache"), n == "local", n == "memory":
		return True
	case strings.Contains(n, "db"), strings.Contains(n, "database"), strings.Contains(n, "postgres"), strings.Contains(n, "sql"), strings.Contains(n, "table"), n == "store":
		return False
	}
	return Unknown
}

// parseDuration reads "1.5s", "250ms", ISO-8601 "PT1.5S", or a bare
// number in the field's unit. A bare number of a field whose name gives
// no unit: a fraction is seconds (zap), an integer of at least 1e6 is
// nanoseconds (slog's time.Duration); smaller integers are milliseconds,
// or seconds for a lock TTL below 1000 (lockTtl: 30).
func parseDuration(s string, u unit, ttl bool) time.Duration {
	if s == "" {
		return 0
	}
	if c := s[len(s)-1]; (c < '0' || c > '9') && c != '.' {
		if strings.HasPrefix(s, "PT") || strings.HasPrefix(s, "pt") {
			return parseISODuration(s[2:])
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0
		}
		return d
	}
	var f float64
	if n, ok := atoiFast(s); ok {
		f = float64(n)
	} else {
		var err error
		f, err = strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 1e19 {
			return 0
		}
	}
	switch u {
	case unitNs:
		return time.Duration(f)
	case unitUs:
		return time.Duration(f * 1e3)
	case unitMs:
		return time.Duration(f * 1e6)
	case unitS:
		return time.Duration(f * 1e9)
	}
	switch {
	case strings.Contains(s, "."):
		return time.Duration(f * 1e9)
	case f >= 1e6:
		return time.Duration(f)
	case ttl && f < 1000:
		return time.Duration(f * 1e9)
	}
	return time.Duration(f * 1e6)
}

// parseISODuration reads the time part of an ISO-8601 duration after
// "PT" (Java's Duration.toString): 1H2M3.5S.
func parseISODuration(s string) time.Duration {
	var d time.Duration
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 || i == len(s) {
			return 0
		}
		f, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0
		}
		switch s[i] {
		case 'H', 'h':
			d += time.Duration(f * float64(time.Hour))
		case 'M', 'm':
			d += time.Duration(f * float64(time.Minute))
		case 'S', 's':
			d += time.Duration(f * float64(time.Second))
		default:
			return 0
		}
		s = s[i+1:]
	}
	return d
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02 15:04:05,999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	time.RFC1123Z,
	time.RFC1123,
}

// parseTime reads RFC 3339 (fast path), common log layouts, or an epoch
// number whose unit comes from the field name or its magnitude.
func parseTime(s string, u unit) (time.Time, bool) {
	if t, ok := parseRFC3339(s); ok {
		return t, true
	}
	if len(s) > 0 && (s[0] >= '0' && s[0] <= '9') && !strings.ContainsAny(s, "-:/ ") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 {
			return time.Time{}, false
		}
		if u == unitAuto {
			switch {
			case f < 1e11:
				u = unitS
			case f < 1e14:
				u = unitMs
			case f < 1e17:
				u = unitUs
			default:
				u = unitNs
			}
		}
		switch u {
		case unitS:
			// Decimal digits, not float arithmetic: zap's 1793696400.123
			// must stay .123.
			ip, fp, _ := strings.Cut(s, ".")
			sec, err := strconv.ParseInt(ip, 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			ns := int64(0)
			for i := 0; i < 9; i++ {
				ns *= 10
				if i < len(fp) && fp[i] >= '0' && fp[i] <= '9' {
					ns += int64(fp[i] - '0')
				}
			}
			return time.Unix(sec, ns).UTC(), true
		case unitMs:
			ms := int64(f)
			return time.Unix(ms/1e3, (ms%1e3)*1e6).UTC(), true
		case unitUs:
			us := int64(f)
			return time.Unix(us/1e6, (us%1e6)*1e3).UTC(), true
		default:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				n = int64(f)
			}
			return time.Unix(0, n).UTC(), true
		}
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseRFC3339 is a fast path for YYYY-MM-DD[T ]hh:mm:ss[.frac][Z|±hh:mm];
// a time without zone is UTC.
func parseRFC3339(s string) (time.Time, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 {
		return time.Time{}, false
	}
	i := 19
	ns := 0
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
		digits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if digits < 9 {
				ns = ns*10 + int(s[i]-'0')
				digits++
			}
			i++
		}
		if digits == 0 {
			return time.Time{}, false
		}
		for ; digits < 9; digits++ {
			ns *= 10
		}
	}
	off := 0
	switch {
	case i == len(s):
	case s[i] == 'Z' || s[i] == 'z':
		if i+1 != len(s) {
			return time.Time{}, false
		}
	case s[i] == '+' || s[i] == '-':
		rest := s[i+1:]
		var oh, om int
		var ok bool
		switch len(rest) {
		case 5:
			if rest[2] != ':' {
				return time.Time{}, false
			}
			rest = rest[:2] + rest[3:]
			fallthrough
		case 4:
			oh, ok = atoi2(rest[:2])
			if !ok {
				return time.Time{}, false
			}
			om, ok = atoi2(rest[2:])
		case 2:
			oh, ok = atoi2(rest)
		default:
			return time.Time{}, false
		}
		if !ok || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		off = oh*3600 + om*60
		if s[i] == '-' {
			off = -off
		}
	default:
		return time.Time{}, false
	}
	if d > daysIn(mo, y) {
		return time.Time{}, false
	}
	unix := daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+sec) - int64(off)
	return time.Unix(unix, int64(ns)).UTC(), true
}

func atoi2(s string) (int, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// kindOf decides a line's kind from its event name and message and
// records what decided it: a user's phrase first (in the name, then the
// message), then an event name the mapping knows (also a short message
// that is one, as slog and zap users log logger.Info("lock_acquired")),
// then the vocabulary on the name (structlog's "event" is a sentence) and
// on the message.
func (x *extractor) kindOf(ev *Event, name, msg string) {
	ev.Kind, ev.Match = KindOther, Match{}
	if x.cls.v == nil {
		x.cls.v = x.m.vocab
	}
	if x.m.vocab.hasUser() {
		for _, t := range [...]struct {
			in   Field
			text string
		}{{EventName, name}, {Message, msg}} {
			if v := x.text(t.text); v.phrase >= 0 && x.m.vocab.phrases[v.phrase].user {
				x.apply(ev, v, t.in, msg)
				return
			}
		}
	}
	if name != "" {
		if k, ok := x.exactName(name); ok {
			ev.Kind, ev.Match = k, Match{In: EventName}
			x.qualify(ev, msg)
			return
		}
	} else if msg != "" && len(msg) <= 40 {
		if k, ok := x.exactName(msg); ok {
			ev.Kind, ev.Match = k, Match{In: Message}
			return
		}
	}
	for _, t := range [...]struct {
		in   Field
		text string
	}{{EventName, name}, {Message, msg}} {
		if v := x.text(t.text); v.phrase >= 0 {
			x.apply(ev, v, t.in, msg)
			return
		}
	}
}

// text classifies a name or message ("" has no verdict).
func (x *extractor) text(s string) verdict {
	if s == "" {
		return noVerdict
	}
	return x.cls.classify(s)
}

// apply sets the kind a phrase decided, with a check's answer and source
// where the fields did not say them.
func (x *extractor) apply(ev *Event, v verdict, in Field, msg string) {
	ev.Kind, ev.Match = v.kind, Match{In: in, Phrase: v.phrase + 1}
	if ev.Hit == Unknown {
		ev.Hit = v.hit
	}
	if ev.FromCache == Unknown {
		ev.FromCache = v.cache
	}
	if in == EventName {
		x.qualify(ev, msg)
	}
}

// qualify reads a check's answer and source from the message when the
// kind came from elsewhere and the fields did not say them.
func (x *extractor) qualify(ev *Event, msg string) {
	if msg == "" || (ev.Kind != KindCheck && ev.Kind != KindDuplicate) || (ev.Hit != Unknown && ev.FromCache != Unknown) {
		return
	}
	hit, cache := x.cls.qualifiers(msg)
	if ev.Hit == Unknown {
		ev.Hit = hit
	}
	if ev.FromCache == Unknown {
		ev.FromCache = cache
	}
}

// exactName looks an event name up (normalized: side_effect, sideEffect
// and SIDE-EFFECT are one), caching the names seen: the same few repeat
// on millions of lines.
func (x *extractor) exactName(name string) (Kind, bool) {
	if k, ok := x.kinds[name]; ok {
		return k, k != KindOther
	}
	if len(name) > 256 {
		return KindOther, false // no known name is that long; do not keep it
	}
	x.scrat = normNameInto(x.scrat, name)
	k, ok := x.m.names[string(x.scrat)]
	if x.kinds == nil || len(x.kinds) > 4096 {
		x.kinds = map[string]Kind{}
	}
	if !ok {
		k = KindOther
	}
	x.kinds[strings.Clone(name)] = k
	return k, ok
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm): cheaper than
// time.Date on the hot path.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// atoiFast reads a plain non-negative decimal integer.
func atoiFast(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
