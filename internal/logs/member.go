package logs

import (
	"bytes"
	"strings"
	"unsafe"
)

// MemberValue reports whether value - a string an event borrows from
// line, a JSON line (Options.PrepareLine) - is the whole string value of
// a member, standing raw in the line's bytes: `"orderId":"ord-1"`. It
// returns the bytes from the member name's opening quote to the value's
// (`"orderId":"`). A value decoded from escapes, found inside another
// value (a key inside a lock key or a message) or made up is not: its
// bytes are not where a byte search for it would look.
func MemberValue(line []byte, value string) ([]byte, bool) {
	if value == "" || len(line) == 0 || strings.IndexByte(value, '"') >= 0 || strings.IndexByte(value, '\\') >= 0 {
		return nil, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(line)))
	at := uintptr(unsafe.Pointer(unsafe.StringData(value)))
	if at <= base || at+uintptr(len(value)) >= base+uintptr(len(line)) {
		return nil, false // decoded or made up: not the line's own bytes
	}
	off := int(at - base)
	end := off + len(value)
	if line[off-1] != '"' || line[end] != '"' {
		return nil, false // a part of a value
	}
	i := blanksBack(line, off-2)
	if i < 0 || line[i] != ':' {
		return nil, false // not a member's value (an array element)
	}
	i = blanksBack(line, i-1)
	if i < 0 || line[i] != '"' {
		return nil, false
	}
	j := bytes.LastIndexByte(line[:i], '"')
	if j < 0 {
		return nil, false
	}
	return line[j:off], true
}

func blanksBack(b []byte, i int) int {
	for i >= 0 && (b[i] == ' ' || b[i] == '\t') {
		i--
	}
	return i
}
