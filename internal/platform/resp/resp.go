// Package resp reads and writes the Redis serialization protocol, once for
// every part of dupctl that speaks it without a client library: the chaos
// proxy that watches a worker's commands (forwarding every byte it read)
// and the lock scan's pipelined hot path (keeping allocations per reply to
// a minimum).
//
// The protocol is as specified in redis/redis-specifications:
// protocol/RESP3.md and on redis.io/docs/latest/develop/reference/protocol-spec:
// every value starts with a type byte and ends with CRLF; bulk strings ($),
// bulk errors (!) and verbatim strings (=) carry a length then that many
// bytes; arrays (*), sets (~) and pushes (>) a count of values; maps (%)
// and attributes (|) a count of pairs; -1 lengths are RESP2's nulls.
// Clients send commands as arrays of bulk strings, or inline
// (space-separated words). Replies come in request order, except RESP3
// pushes (out of band) and RESP2 pub/sub messages; an attribute precedes
// the reply it annotates.
package resp

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dupctl/dupctl/internal/platform/text"
)

// Limits that keep garbage on the wire from exhausting memory. Redis's own
// proto-max-bulk-len is 512 MB.
const (
	MaxBulk  = 512 << 20 // the longest bulk string a header may announce
	MaxElems = 1 << 20   // the most values an aggregate may announce
	maxDepth = 32
)

// Value is one RESP value.
type Value struct {
	Type  byte
	Str   []byte
	Int   int64
	Null  bool
	Elems []Value // of an aggregate; a map's or attribute's keys and values alternate
}

// IsOK reports a +OK status reply.
func (v *Value) IsOK() bool { return v.Type == '+' && string(v.Str) == "OK" }

// IsNull reports a null (RESP2 $-1 or *-1, RESP3 _).
func (v *Value) IsNull() bool { return v.Null }

// IsError reports an error reply.
func (v *Value) IsError() bool { return v.Type == '-' || v.Type == '!' }

// String is a short form for timelines.
func (v *Value) String() string {
	switch {
	case v.Null:
		return "nil"
	case v.Type == ':':
		return strconv.FormatInt(v.Int, 10)
	case v.Type == '*' || v.Type == '~' || v.Type == '>' || v.Type == '%':
		return fmt.Sprintf("[%d values]", len(v.Elems))
	case v.Type == '-' || v.Type == '!':
		return "error " + text.Clip(string(v.Str), 60+len("…"), "…")
	}
	return text.Clip(string(v.Str), 60+len("…"), "…")
}

// ErrProtocol is input that is not RESP.
var ErrProtocol = errors.New("resp: protocol error")

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// ParseInt reads a RESP integer (an optional sign, then decimal digits)
// without allocating; ok is false for anything else or an overflow.
func ParseInt(b []byte) (n int64, ok bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -1<<63 wraps onto itself
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}
