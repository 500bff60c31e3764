// Package respproxy is a proxy that speaks just enough RESP to see a
// worker's Redis commands and their replies, and to answer a command
// itself (a cache write dupctl delays, to make the cache lag).
//
// The protocol is the Redis serialization protocol as specified in
// redis/redis-specifications:protocol/RESP3.md and on
// redis.io/docs/latest/develop/reference/protocol-spec: every value starts
// with a type byte and ends with CRLF; bulk strings ($), bulk errors (!)
// and verbatim strings (=) carry a length then that many bytes; arrays
// (*), sets (~) and pushes (>) a count of values; maps (%) and attributes
// (|) a count of pairs; -1 lengths are RESP2's nulls. Clients send
// commands as arrays of bulk strings, or inline (space-separated words).
// Replies come in request order, except RESP3 pushes (out of band) and
// RESP2 pub/sub messages; an attribute precedes the reply it annotates.
package respproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Limits that keep garbage on the wire from exhausting memory. Redis's own
// proto-max-bulk-len is 512 MB.
const (
	maxBulk  = 512 << 20
	maxElems = 1 << 20
	maxDepth = 32
)

// Value is one RESP value.
type Value struct {
	Type  byte
	Str   []byte
	Int   int64
	Null  bool
	Elems []Value
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
		return "error " + truncate(string(v.Str), 60)
	}
	return truncate(string(v.Str), 60)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ErrProtocol is input that is not RESP.
var ErrProtocol = errors.New("resp: protocol error")

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// reader reads values and keeps every byte it consumed, so the proxy can
// forward them unchanged.
type reader struct {
	br  *bufio.Reader
	raw []byte
}

func (r *reader) line() ([]byte, error) {
	l, err := r.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, protoErr("line longer than %d bytes", r.br.Size())
		}
		if err == io.EOF && len(l) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	r.raw = append(r.raw, l...)
	if len(l) < 2 || l[len(l)-2] != '\r' {
		return nil, protoErr("line does not end with CRLF")
	}
	return l[:len(l)-2], nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	start := len(r.raw)
	r.raw = append(r.raw, make([]byte, n+2)...)
	if _, err := io.ReadFull(r.br, r.raw[start:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if r.raw[len(r.raw)-2] != '\r' || r.raw[len(r.raw)-1] != '\n' {
		return nil, protoErr("bulk does not end with CRLF")
	}
	return r.raw[start : start+n], nil
}

func parseLen(b []byte, limit int) (int, error) {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < -1 || n > limit {
		return 0, protoErr("bad length %q", b)
	}
	return n, nil
}

func (r *reader) value(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, protoErr("nested deeper than %d", maxDepth)
	}
	l, err := r.line()
	if err != nil {
		return Value{}, err
	}
	if len(l) == 0 {
		return Value{}, protoErr("empty line")
	}
	v := Value{Type: l[0]}
	body := l[1:]
	switch v.Type {
	case '+', '-', ',', '(':
		v.Str = append([]byte(nil), body...)
	case ':':
		if v.Int, err = strconv.ParseInt(string(body), 10, 64); err != nil {
			return Value{}, protoErr("bad integer %q", body)
		}
	case '#':
		if len(body) != 1 || (body[0] != 't' && body[0] != 'f') {
			return Value{}, protoErr("bad boolean %q", body)
		}
		v.Str = append([]byte(nil), body...)
	case '_':
		if len(body) != 0 {
			return Value{}, protoErr("bad null")
		}
		v.Null = true
	case '$', '!', '=':
		n, err := parseLen(body, maxBulk)
		if err != nil {
			return Value{}, err
		}
		if n == -1 {
			v.Null = true
			break
		}
		b, err := r.bytes(n)
		if err != nil {
			return Value{}, err
		}
		v.Str = append([]byte(nil), b...)
	case '*', '~', '>', '%', '|':
		n, err := parseLen(body, maxElems)
		if err != nil {
			return Value{}, err
		}
		if n == -1 {
			v.Null = true
			break
		}
		if v.Type == '%' || v.Type == '|' {
			if n > maxElems/2 {
				return Value{}, protoErr("map of %d pairs", n)
			}
			n *= 2
		}
		v.Elems = make([]Value, 0, min(n, 64))
		for i := 0; i < n; i++ {
			e, err := r.value(depth + 1)
			if err != nil {
				return Value{}, err
			}
			v.Elems = append(v.Elems, e)
		}
	default:
		return Value{}, protoErr("unknown type byte %q", v.Type)
	}
	return v, nil
}

// ReadValue reads one value (a reply), appending the bytes it consumed to
// raw. An attribute (|) is returned as its own value: the reply it
// annotates follows.
func ReadValue(br *bufio.Reader, raw []byte) (Value, []byte, error) {
	r := &reader{br: br, raw: raw}
	v, err := r.value(0)
	return v, r.raw, err
}

// ReadCommand reads one command: an array of bulk strings, or an inline
// command (words separated by spaces, one line). It appends the bytes it
// consumed to raw.
func ReadCommand(br *bufio.Reader, raw []byte) ([][]byte, []byte, error) {
	first, err := br.Peek(1)
	if err != nil {
		return nil, raw, err
	}
	r := &reader{br: br, raw: raw}
	if first[0] != '*' {
		l, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, raw, protoErr("inline command longer than %d bytes", br.Size())
			}
			return nil, raw, err
		}
		r.raw = append(r.raw, l...)
		return bytes.Fields(bytes.TrimRight(l, "\r\n")), r.raw, nil
	}
	v, err := r.value(0)
	if err != nil {
		return nil, r.raw, err
	}
	if v.Null {
		return nil, r.raw, nil
	}
	args := make([][]byte, 0, len(v.Elems))
	for _, e := range v.Elems {
		if e.Type != '$' || e.Null {
			return nil, r.raw, protoErr("command element of type %q", e.Type)
		}
		args = append(args, e.Str)
	}
	return args, r.raw, nil
}

// AppendCommand writes a command as an array of bulk strings.
func AppendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}
