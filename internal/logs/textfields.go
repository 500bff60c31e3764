package logs

import (
	"bytes"
	"strings"
)

// textKeys are the short keys people write in sentences and logfmt lines
// that name a field the JSON aliases spell out (order=ORD-1 for orderId,
// key=... for the idempotency key): read only in text, where a key is a
// word, never in JSON, where "key" may be anything.
var textKeys = newAliases(map[string]string{
	"order": "orderId", "key": "idempotencyKey", "idem": "idempotencyKey", "idempotency": "idempotencyKey",
	"job": "jobId", "msg_id": "messageId", "message_id": "messageId", "mid": "messageId",
	"token": "lockToken", "class": "jobType", "delivery_tag": "deliveryTag", "try": "attempt",
})

// emitText offers a key found in text: as written, then as the field its
// short form names.
func (x *extractor) emitText(k, v []byte) {
	if len(v) == 0 {
		return
	}
	x.emit(k, v)
	if alias, ok := lookupLower(textKeys, k); ok && !x.m.explicit[string(k)] {
		x.emit([]byte(alias), v) // unless the mapping names this key itself (--field, or learned)
	}
}

// idNouns are the words a sentence names an id after, as Java and
// Python services log them with a placeholder: "Received message {} for
// order {}" becomes "Received message msg-1 for order ORD-1".
var idNouns = newAliases(map[string]string{
	"order": "orderId", "message": "messageId", "msg": "messageId", "job": "jobId", "task": "taskId",
	"payment": "paymentId", "key": "idempotencyKey", "lock": "lockKey", "attempt": "attempt", "delivery": "deliveryTag",
	"token": "lockToken",
})

// sentenceFields reads the ids a sentence carries: key=value (quoted or
// not, also inside [..], (..) and {..}: Java's toString, Spring's map),
// key: value where the value looks like an id (has a digit, '-' or ':'),
// "order ORD-1" where a noun that names an id is followed by one (a word
// with a digit), and a JSON object inside the text.
func (x *extractor) sentenceFields(msg []byte) {
	x.nounIDs(msg)
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '=':
			k := keyBefore(msg, i)
			if len(k) == 0 {
				continue
			}
			v, end := valueAt(msg, i+1)
			x.emitText(k, v)
			i = end - 1
		case ':':
			if i+1 >= len(msg) || msg[i+1] != ' ' {
				continue
			}
			k := keyBefore(msg, i)
			if len(k) == 0 {
				continue
			}
			v, end := valueAt(msg, i+2)
			if looksLikeID(v) {
				x.emitText(k, v)
				i = end - 1
			}
		case '{':
			if end := objectEnd(msg, i); end > 0 {
				obj := msg[i:end]
				if bytes.IndexByte(obj, '"') >= 0 {
					// A JSON fragment: its fields, where the line did not
					// carry them already.
					_, _ = x.object(obj, 0, 1)
				}
			}
		}
	}
}

// nounIDs offers "noun id" pairs: "for order ORD-1", "message msg-1",
// "attempt 2". Only an id with a digit counts ("order received" is not an
// order id); the values are weaker than key=value ones, which come after
// and win at the same rank only when offered first - so these go first
// only where key=value did not name the field.
func (x *extractor) nounIDs(msg []byte) {
	for i := 0; i < len(msg); {
		for i < len(msg) && !isWordStart(msg[i]) {
			i++
		}
		j := i
		for j < len(msg) && isKeyByte(msg[j]) && msg[j] != '.' {
			j++
		}
		word := msg[i:j]
		if j >= len(msg) || msg[j] != ' ' || len(word) < 3 || len(word) > 8 {
			i = max(j, i+1)
			continue
		}
		alias, ok := lookupLower(idNouns, word)
		if !ok {
			i = j
			continue
		}
		v, end := valueAt(msg, j+1)
		v = bytes.Trim(v, "'\"#")
		if len(v) > 0 && bytes.IndexFunc(v, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0 && bytes.IndexByte(v, '=') < 0 {
			f := fieldAt(x, []byte(alias))
			if f < NumFields && !x.has(f) {
				x.emit([]byte(alias), v)
			}
		}
		i = max(end, j+1)
	}
}

func isWordStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// keyBefore is the word ending at msg[i] (letters, digits, _ . -), or nil.
func keyBefore(msg []byte, i int) []byte {
	j := i
	for j > 0 && isKeyByte(msg[j-1]) {
		j--
	}
	if j == i || !(msg[j] >= 'a' && msg[j] <= 'z' || msg[j] >= 'A' && msg[j] <= 'Z' || msg[j] == '_' || msg[j] == '@') {
		return nil
	}
	return msg[j:i]
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '@'
}

// valueAt reads a value at msg[i]: "quoted" (backslash escapes kept as
// they are), 'quoted', or up to a blank or , ; ) ] }.
func valueAt(msg []byte, i int) ([]byte, int) {
	if i >= len(msg) {
		return nil, i
	}
	if q := msg[i]; q == '"' || q == '\'' {
		for j := i + 1; j < len(msg); j++ {
			if msg[j] == '\\' {
				j++
				continue
			}
			if msg[j] == q {
				return msg[i+1 : j], j + 1
			}
		}
		return msg[i+1:], len(msg)
	}
	j := i
	for j < len(msg) {
		c := msg[j]
		if c == ' ' || c == '\t' || c == ',' || c == ';' || c == ')' || c == ']' || c == '}' {
			break
		}
		j++
	}
	v := msg[i:j]
	// A sentence's full stop is not part of the value.
	for len(v) > 0 && (v[len(v)-1] == '.' || v[len(v)-1] == ':') {
		v = v[:len(v)-1]
	}
	return v, j
}

func looksLikeID(v []byte) bool {
	return len(v) > 0 && bytes.IndexFunc(v, func(r rune) bool { return r >= '0' && r <= '9' || r == '-' || r == ':' }) >= 0
}

// objectEnd is the index after the '}' closing the object at s[i], or -1.
func objectEnd(s []byte, i int) int {
	depth := 0
	inStr := false
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case inStr && c == '\\':
			j++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// isLogfmtLine: most of the first tokens are key=value and the first is.
func isLogfmtLine(l []byte) bool {
	pairs, words := 0, 0
	first := true
	forEachLogfmt(l, func(k, v []byte) bool {
		words++
		if k != nil {
			pairs++
		} else if first {
			return false
		}
		first = false
		return words < 16
	})
	return pairs >= 2 && pairs*3 >= words*2
}

// forEachLogfmt walks logfmt pairs: key=value, key="quoted \" value",
// key= (empty), and bare words (k nil). fn returns false to stop.
func forEachLogfmt(l []byte, fn func(k, v []byte) bool) {
	i := 0
	for i < len(l) {
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		if i >= len(l) {
			return
		}
		j := i
		for j < len(l) && l[j] != '=' && l[j] != ' ' && l[j] != '\t' && l[j] != '"' {
			j++
		}
		if j >= len(l) || l[j] != '=' || j == i {
			for j < len(l) && l[j] != ' ' && l[j] != '\t' {
				j++
			}
			if !fn(nil, l[i:j]) {
				return
			}
			i = j
			continue
		}
		k := l[i:j]
		v, end := logfmtValue(l, j+1)
		if !fn(k, v) {
			return
		}
		i = end
	}
}

// logfmtValue reads a value at l[i]; a quoted one is unescaped into a copy
// when it holds escapes.
func logfmtValue(l []byte, i int) ([]byte, int) {
	if i >= len(l) || l[i] == ' ' {
		return nil, i
	}
	if l[i] != '"' {
		j := i
		for j < len(l) && l[j] != ' ' && l[j] != '\t' {
			j++
		}
		return l[i:j], j
	}
	end, esc := strEnd(l, i+1)
	if end < 0 {
		return l[i+1:], len(l)
	}
	v := l[i+1 : end]
	if esc {
		v = unescape(make([]byte, 0, len(v)), v)
	}
	return v, end + 1
}

// aliases is a small table of short lower-case names: every key and
// word of every text line is looked up in one, and most are not there, so
// a name's length and first byte turn most away before the map.
type aliases struct {
	m       map[string]string
	lengths uint32 // bit n: some name has n bytes
	first   [256]bool
}

func newAliases(m map[string]string) *aliases {
	a := &aliases{m: m}
	for k := range m {
		if k == "" || len(k) > maxAlias || strings.ToLower(k) != k {
			panic("logs: alias " + k + " is not a short lower-case name")
		}
		a.lengths |= 1 << len(k)
		a.first[k[0]] = true
	}
	return a
}

const maxAlias = 16

// lookupLower looks k up by its ASCII lower case, lowered on the stack
// (bytes.ToLower allocated for every word).
func lookupLower(a *aliases, k []byte) (string, bool) {
	if len(k) == 0 || len(k) > maxAlias || a.lengths&(1<<len(k)) == 0 || !a.first[lowerASCII(k[0])] {
		return "", false
	}
	var low [maxAlias]byte
	for i, c := range k {
		low[i] = lowerASCII(c)
	}
	v, ok := a.m[string(low[:len(k)])]
	return v, ok
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
