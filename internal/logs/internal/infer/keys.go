package infer

import (
	"fmt"
	"sort"
	"strings"
)

// The business key is what ties a job's lines together: the one value that
// the received line, the lock, the check, the side effect and the commit
// all carry. A logger config names it however it likes (orderId, order,
// an MDC bracket, the first word of every message), so it is found by what
// it does: among the values the sample's lines hold, the ones that recur
// across the most different templates. Their common shape (the letters
// around their digits, "ord-" in "ord-41495") finds the key where a line
// holds it inside another value ("lock:order:ord-41495") or unnamed.

// KeyShape is how a business key looks: literal text, then digits.
type KeyShape struct {
	Prefix string // "ord-"
	// Digits is the fewest digits seen after the prefix.
	Digits int
}

func (s KeyShape) String() string {
	if s.Prefix == "" {
		return ""
	}
	return s.Prefix + strings.Repeat("9", max(s.Digits, 1))
}

// Valid reports whether the shape can find keys.
func (s KeyShape) Valid() bool { return len(s.Prefix) >= 2 && s.Digits >= 1 }

// Find returns the first key of this shape in text: the prefix, at the
// start of a word (not after a letter or a digit), then at least Digits
// digits, then the rest of the word's letters and digits.
func (s KeyShape) Find(text string) (string, bool) {
	if !s.Valid() {
		return "", false
	}
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], s.Prefix)
		if i < 0 {
			return "", false
		}
		i += from
		from = i + 1
		if i > 0 && isAlnum(text[i-1]) {
			continue
		}
		j := i + len(s.Prefix)
		d := 0
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
			d++
		}
		if d < s.Digits {
			continue
		}
		for j < len(text) && isAlnum(text[j]) {
			j++
		}
		return text[i:j], true
	}
	return "", false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// shapeOf is the shape of a value that is one key: letters and punctuation,
// then digits, then nothing or letters and digits ("ord-41495", "ORD-1042",
// "order_7"); ok is false for anything else (a uuid, a number, a path).
func shapeOf(v string) (KeyShape, bool) {
	i := 0
	for i < len(v) && !(v[i] >= '0' && v[i] <= '9') {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.' || c == ':' || c == '#' || c == '/') {
			return KeyShape{}, false
		}
		i++
	}
	if i < 2 || i > 24 {
		return KeyShape{}, false
	}
	j := i
	for j < len(v) && v[j] >= '0' && v[j] <= '9' {
		j++
	}
	if j-i < 2 {
		return KeyShape{}, false
	}
	for k := j; k < len(v); k++ {
		if !isAlnum(v[k]) {
			return KeyShape{}, false
		}
	}
	p := v[:i]
	if k := strings.LastIndexAny(p[:len(p)-1], ":/"); k >= 0 {
		return KeyShape{}, false // a prefix of its own ("lock:order:ord-1"): not one key
	}
	return KeyShape{Prefix: p, Digits: j - i}, true
}

// KeyFinding is what the sample says of the business key.
type KeyFinding struct {
	// Field is the field whose values are the keys ("" when the keys stand
	// unnamed in the messages); Shape finds them anywhere.
	Field string
	Shape KeyShape
	// Mapped: the reader's own mapping found the keys already.
	Mapped bool
	Reason string
}

// valueUse is where one value was seen.
type valueUse struct {
	lines     int
	templates map[int]bool
	fields    map[string]int // field key -> lines ("" for the message)
}

// FindKey finds the business key: recs with the template of each (tmpl[i]).
func FindKey(recs []Record, tmpl []int) KeyFinding {
	mapped, shapes := 0, map[KeyShape]int{}
	for i := range recs {
		if k := recs[i].Key; k != "" {
			mapped++
			if s, ok := shapeOf(k); ok {
				shapes[s]++
			}
		}
	}
	if mapped*4 >= len(recs) && mapped > 0 {
		// A key the mapping names stands, whatever its shape (one hot key,
		// "ord-hot", has none a shape can be learned from).
		if len(shapes) == 0 {
			return KeyFinding{Mapped: true, Reason: fmt.Sprintf("the mapping names a business key on %d of %d sample lines", mapped, len(recs))}
		}
		s := bestShape(shapes)
		return KeyFinding{Shape: s, Mapped: true,
			Reason: fmt.Sprintf("the mapping names a business key on %d of %d sample lines (shaped like %s)", mapped, len(recs), s)}
	}
	// Values that tie several templates together, a few lines each.
	var cands []keyCand
	for v, u := range valueUses(recs, tmpl) {
		if len(u.templates) >= 3 && u.lines >= 3 && u.lines*20 <= len(recs)+60 {
			cands = append(cands, keyCand{v, u})
		}
	}
	shapes = map[KeyShape]int{}
	for _, c := range cands {
		if s, ok := shapeOf(c.v); ok {
			shapes[s] += len(c.u.templates)
		}
	}
	if len(shapes) == 0 {
		return KeyFinding{Reason: "no value ties three or more message templates together: no business key found"}
	}
	s := bestShape(shapes)
	field, keys := keyField(cands, s)
	k := KeyFinding{Field: field, Shape: s}
	if field != "" {
		k.Reason = fmt.Sprintf("%q holds the business key: %d values shaped like %s, each tying 3 or more message templates together",
			field, keys, s)
	} else {
		k.Reason = fmt.Sprintf("the business key stands in the messages: %d values shaped like %s, each tying 3 or more message "+
			"templates together", keys, s)
	}
	return k
}

type keyCand struct {
	v string
	u *valueUse
}

// valueUses is where each value of the sample stands: its fields' (but
// the layout's own slots) and its messages' variables.
func valueUses(recs []Record, tmpl []int) map[string]*valueUse {
	uses := map[string]*valueUse{}
	see := func(v, field string, t int) {
		u := uses[v]
		if u == nil {
			u = &valueUse{templates: map[int]bool{}, fields: map[string]int{}}
			uses[v] = u
		}
		u.lines++
		u.templates[t] = true
		u.fields[field]++
	}
	for i := range recs {
		for _, kv := range recs[i].Fields {
			if !layoutSlot(kv.Key) {
				see(kv.Value, kv.Key, tmpl[i])
			}
		}
		_, vals := Tokenize(recs[i].Message)
		for _, v := range vals {
			see(v, "", tmpl[i])
		}
	}
	return uses
}

// layoutSlot: a layout's own field (time, level, prefix, file), never a
// key; a bracket may be an MDC that holds one.
func layoutSlot(k string) bool {
	return strings.HasPrefix(k, "@") && !strings.HasPrefix(k, "@bracket")
}

// keyField is the field that holds exactly the keys of shape s, where one
// does, and how many such keys there are.
func keyField(cands []keyCand, s KeyShape) (string, int) {
	fields := map[string]int{}
	keys := 0
	for _, c := range cands {
		if sh, ok := shapeOf(c.v); !ok || sh.Prefix != s.Prefix {
			continue
		}
		keys++
		for f, n := range c.u.fields {
			fields[f] += n
		}
	}
	field, best := "", 0
	for f, n := range fields {
		if f != "" && (n > best || n == best && f < field) {
			field, best = f, n
		}
	}
	return field, keys
}

func bestShape(shapes map[KeyShape]int) KeyShape {
	list := make([]KeyShape, 0, len(shapes))
	for s := range shapes {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool {
		if shapes[list[i]] != shapes[list[j]] {
			return shapes[list[i]] > shapes[list[j]]
		}
		return list[i].Prefix < list[j].Prefix
	})
	best := list[0]
	for _, s := range list { // the same prefix with fewer digits widens the shape
		if s.Prefix == best.Prefix && s.Digits < best.Digits {
			best.Digits = s.Digits
		}
	}
	return best
}

// KeyOf is a record's business key: the reader's, the key field's, or the
// first value of the key's shape in its fields and message.
func (k KeyFinding) KeyOf(r *Record) string {
	if r.Key != "" {
		return r.Key
	}
	if k.Field != "" {
		if v, ok := r.Get(k.Field); ok && v != "" {
			return v
		}
	}
	if !k.Shape.Valid() {
		return ""
	}
	for _, kv := range r.Fields {
		if layoutSlot(kv.Key) {
			continue
		}
		if v, ok := k.Shape.Find(kv.Value); ok {
			return v
		}
	}
	v, _ := k.Shape.Find(r.Message)
	return v
}

// IDShape is how the message ids of a log look: UUIDs, or literal text
// then digits (KeyShape). A line that names no message but holds one
// inside another value (a lock key "lock:job:<message id>") is found by it.
type IDShape struct {
	UUID bool
	Key  KeyShape
}

// Valid reports whether the shape can find ids.
func (s IDShape) Valid() bool { return s.UUID || s.Key.Valid() }

func (s IDShape) String() string {
	if s.UUID {
		return "uuid"
	}
	return s.Key.String()
}

// LearnIDShape is the shape most of the given ids have (at least four in
// five of them; the zero shape otherwise).
func LearnIDShape(ids []string) IDShape {
	if len(ids) < 5 {
		return IDShape{}
	}
	uuids := 0
	shapes := map[KeyShape]int{}
	for _, v := range ids {
		if len(v) == 36 && uuidAt(v, 0) {
			uuids++
		} else if s, ok := shapeOf(v); ok {
			shapes[s]++
		}
	}
	if uuids*5 >= len(ids)*4 {
		return IDShape{UUID: true}
	}
	if len(shapes) > 0 {
		s := bestShape(shapes)
		if shapes[s]*5 >= len(ids)*4 {
			return IDShape{Key: s}
		}
	}
	return IDShape{}
}

// Find returns the first id of this shape in text.
func (s IDShape) Find(text string) (string, bool) {
	if !s.UUID {
		return s.Key.Find(text)
	}
	for i := 0; i+36 <= len(text); i++ {
		if (i == 0 || !isHex(text[i-1])) && uuidAt(text, i) && (i+36 == len(text) || !isHex(text[i+36])) {
			return text[i : i+36], true
		}
	}
	return "", false
}

// uuidAt: 8-4-4-4-12 hex digits at s[i:].
func uuidAt(s string, i int) bool {
	if i+36 > len(s) {
		return false
	}
	for k := 0; k < 36; k++ {
		c := s[i+k]
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
