package logs

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// The second pass re-reads whole chunks for a few keys: on a log whose
// duplicates are spread through it, that is nearly every chunk again
// (4,253 of 4,587 on 1.2 GB with 3,241 duplicated keys), and the JSON
// scan of every line to find its key was half of the audit's time. The
// prefilter lets it pass over a line with a byte test instead: the first
// pass, which reads every line anyway, checks where each line's key
// stands in the line's bytes, and the second pass looks for the chosen
// keys only there.
//
// It is exact, never a guess. A chunk is passed over line by line only
// when every line the first pass read in it was one JSON object whose
// key (business or idempotency) is the verbatim string value of a member
// - `"orderId":"ord-1"`, the value's bytes the key's own, so no escape
// can spell it differently - under a member name from a short list. The
// second pass then parses a line of such a chunk when, at one of those
// names, the value is a chosen key; a line without one cannot be a chosen
// key's (its key is one of those values) nor one the second pass keeps
// for another reason (a line with only a job or message id, a lock line
// with no key: either makes its chunk one that is read whole). Any other
// chunk - text layouts, a key found inside a message or decoded from
// escapes, lines without a key - is read whole, as before.
type prefilter struct {
	// names are the member names found before keys, as the bytes from the
	// name's opening quote to the value's (`"orderId":"`); at most
	// maxNames, after which a key under another name is not verbatim.
	mu    sync.Mutex
	names atomic.Pointer[[][]byte]
	// whole marks the chunks the second pass must read whole (written by
	// the first pass's callback, in order; read by the second pass's
	// parsing goroutines, which start after it).
	whole []bool
	// needles are the names as the second pass looks for them.
	needles []needle
	// passed counts the lines the second pass passed over.
	passed atomic.Int64
}

const maxNames = 4

// verbatimTag is the bit of Event.Tag the first pass sets on a line whose
// key stands verbatim under a known name (hashKey leaves it clear).
const verbatimTag = 2

// verbatim reports whether key - a string the event borrows from line -
// is a member's whole string value, raw, and learns its member name.
func (pf *prefilter) verbatim(line []byte, key string) bool {
	name, ok := logread.MemberValue(line, key)
	return ok && pf.known(name)
}

// known reports whether name is (or has now become) one of the names.
func (pf *prefilter) known(name []byte) bool {
	if p := pf.names.Load(); p != nil {
		for _, n := range *p {
			if bytes.Equal(n, name) {
				return true
			}
		}
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	var cur [][]byte
	if p := pf.names.Load(); p != nil {
		cur = *p
	}
	for _, n := range cur {
		if bytes.Equal(n, name) {
			return true
		}
	}
	if len(cur) >= maxNames {
		return false
	}
	next := append(append([][]byte(nil), cur...), bytes.Clone(name))
	pf.names.Store(&next)
	return true
}

// saw notes the first pass's event: its chunk is read whole unless its
// key stood verbatim.
func (pf *prefilter) saw(e *logread.Event) {
	if e.Tag&verbatimTag != 0 {
		return
	}
	for len(pf.whole) <= e.Chunk {
		pf.whole = append(pf.whole, false)
	}
	pf.whole[e.Chunk] = true
}

// needle is a name and the index of its rarest byte.
type needle struct {
	name  []byte
	pivot int
}

// rarity ranks a byte by how seldom it is in JSON lines: capitals, then
// punctuation inside names, then digits, then the rarer letters; quotes,
// colons and the common letters last.
func rarity(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return 0
	case c == '_' || c == '-' || c == '.' || c == '@' || c == '$':
		return 1
	case c >= '0' && c <= '9':
		return 2
	case strings.IndexByte("jqxzkvwybpg", c) >= 0:
		return 3
	case c >= 'a' && c <= 'z':
		return 4
	case c == '"' || c == ':' || c == ' ':
		return 6
	}
	return 5
}

// usable says whether any chunk may be passed over line by line, and
// makes the needles.
func (pf *prefilter) usable(chunks int) bool {
	names := pf.names.Load()
	if names == nil {
		return false
	}
	pf.needles = pf.needles[:0]
	for _, name := range *names {
		n := needle{name: name}
		for i, c := range name {
			if rarity(c) < rarity(name[n.pivot]) {
				n.pivot = i
			}
		}
		pf.needles = append(pf.needles, n)
	}
	n := 0
	for _, w := range pf.whole {
		if w {
			n++
		}
	}
	return n < chunks
}

// candidate says whether the second pass must parse line of chunk: true
// unless its chunk is line-filtered and no value under a known name is a
// chosen key (chosen asks for both kinds a verbatim key may be).
func (pf *prefilter) candidate(chunk int, line []byte, chosen func(key string) bool) bool {
	if chunk < len(pf.whole) && pf.whole[chunk] {
		return true
	}
	for _, n := range pf.needles {
		for off := 0; ; {
			// Found by its rarest byte (a quote is every tenth byte of
			// a JSON line: a search that stops at each costs more than
			// the JSON scan it saves), then compared whole.
			i := bytes.IndexByte(line[off:], n.name[n.pivot])
			if i < 0 {
				break
			}
			at := off + i - n.pivot // where the name would start
			off += i + 1
			if at < 0 || at+len(n.name) > len(line) || !bytes.Equal(line[at:at+len(n.name)], n.name) {
				continue
			}
			v := at + len(n.name) // the value's first byte
			end := bytes.IndexByte(line[v:], '"')
			if end < 0 {
				break
			}
			if chosen(unsafe.String(unsafe.SliceData(line[v:]), end)) {
				return true
			}
		}
	}
	pf.passed.Add(1)
	return false
}
