package logs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
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
	// prefilter and prepareLine are Options.Prefilter and PrepareLine.
	prefilter   func(chunk int, line []byte) bool
	prepareLine func(e *Event, line []byte)
	// gelf strips the _ of GELF's additional fields (_order_id).
	gelf bool
	// tz is the zone of times written without one (nil: UTC).
	tz *time.Location
	// fromTemplate: the message is a Serilog message template (@mt), to be
	// rendered with the line's properties.
	fromTemplate bool
	// prefix is the current line's shipper prefix (decoder.prefixed); clock
	// completes a time that leaves out its year or date (nil: none).
	prefix infer.Prefix
	clock  *clockFill
	// rec, when set, sees every path and value the line holds, mapped or
	// not (Learn's sample).
	rec func(path, v []byte)
	// file is the base name of the source being read, offered as the
	// "@file" field to a learned mapping (the file names the worker when
	// each file is one instance).
	file []byte
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
	x.begin()
	if err := x.jsonObject(b); err != nil {
		return err
	}
	if x.file != nil && x.m.learned != nil {
		x.emit(fileField, x.file)
	}
	x.finish(ev)
	return nil
}

// fileField is the pseudo-field naming a line's file.
var fileField = []byte(infer.File)

// jsonObject reads the fields of the JSON object b into the current line.
func (x *extractor) jsonObject(b []byte) error {
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
	return nil
}

// begin starts a line: no field found yet.
func (x *extractor) begin() {
	for i := range x.rank {
		x.rank[i] = noRank
	}
	if x.paths != nil {
		*x.paths = [NumFields]string{}
	}
	x.path = x.path[:0]
	x.fromTemplate = false
}

// emit offers the value found at a dotted path (a logfmt key, an OTLP
// attribute, a key=value in a sentence): kept when the mapping wants it.
// v must stay valid while the event is in use.
func (x *extractor) emit(path, v []byte) {
	if x.rec != nil {
		x.rec(path, v)
	}
	x.cur = path
	if s, ok := x.want(); ok {
		x.set(s, v)
	}
}

// fallback sets f from a wrapper (a container runtime's time, a journal's
// host) when the line itself did not carry it.
func (x *extractor) fallback(f Field, v []byte, u unit) {
	if len(v) == 0 || x.rank[f] != noRank || (x.only != 0 && x.only&(1<<f) == 0) {
		return
	}
	x.rank[f], x.unit[f], x.val[f] = noRank-1, u, v
}

// has reports whether the current line carries f.
func (x *extractor) has(f Field) bool { return x.rank[f] != noRank }

// finish copies the fields found into ev and normalizes them.
func (x *extractor) finish(ev *Event) {
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
	if x.m.learned != nil {
		x.m.learned.apply(ev)
	}
	x.normalize(ev)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// object scans the object at b[i] == '{' and returns the index after it.
// Every JSON line's fields go through it, so it stays one loop, over the
// size limits on purpose: BenchmarkLine and BenchmarkMessageLine measure it.
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
			if x.gelf && len(key) > 1 && key[0] == '_' {
				key = key[1:]
			}
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
			if s, ok := x.wantValue(b[i+1 : end]); ok {
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
				if s, ok := x.wantValue(b[i:j]); ok {
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

// wantValue is want for a value the line holds (shown to Options.rec
// first).
func (x *extractor) wantValue(v []byte) (slot, bool) {
	if x.rec != nil {
		x.rec(x.cur, v)
	}
	return x.want()
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
	if s.field == Message {
		x.fromTemplate = string(x.cur) == "@mt"
	}
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
