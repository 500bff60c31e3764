package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Reader reads RESP values from a buffered stream. Reading header by
// header (ReadHeader, then ReadBulk or the aggregate's elements) costs no
// allocation beyond what the caller keeps; ReadValue builds whole values.
// Recording (ReadValue, ReadCommand) keeps every byte consumed too, so a
// proxy can forward exactly what it read.
type Reader struct {
	br     *bufio.Reader
	raw    []byte
	record bool
}

// NewReader reads from br. A line (a header, an inline command) longer
// than br's buffer is a protocol error.
func NewReader(br *bufio.Reader) *Reader { return &Reader{br: br} }

// Header is a value's first line.
type Header struct {
	Type byte
	// N is the integer of an integer (:), and the length or count a bulk
	// or aggregate type announces (pairs, for a map or an attribute).
	N int64
	// Null is set for RESP3's _ and RESP2's -1 lengths.
	Null bool
	// Line is the rest of the line after the type byte, valid until the
	// next read.
	Line []byte
}

// Aggregate reports whether the header announces N values (2N for a map
// or an attribute) that follow it.
func (h Header) Aggregate() bool {
	switch h.Type {
	case '*', '~', '>', '%', '|':
		return !h.Null
	}
	return false
}

// Bulk reports whether the header announces N bytes that follow it.
func (h Header) Bulk() bool {
	switch h.Type {
	case '$', '!', '=':
		return !h.Null
	}
	return false
}

// line reads one CRLF-terminated line, without its CRLF.
func (r *Reader) line() ([]byte, error) {
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
	if r.record {
		r.raw = append(r.raw, l...)
	}
	if len(l) < 2 || l[len(l)-2] != '\r' {
		return nil, protoErr("line does not end with CRLF")
	}
	return l[:len(l)-2], nil
}

// ReadHeader reads a value's first line and checks it: a known type byte,
// a valid integer, length or count within the limits.
func (r *Reader) ReadHeader() (Header, error) {
	l, err := r.line()
	if err != nil {
		return Header{}, err
	}
	if len(l) == 0 {
		return Header{}, protoErr("empty line")
	}
	h := Header{Type: l[0], Line: l[1:]}
	body := h.Line
	switch h.Type {
	case '+', '-', ',', '(':
	case ':':
		var ok bool
		if h.N, ok = ParseInt(body); !ok {
			return Header{}, protoErr("bad integer %q", body)
		}
	case '#':
		if len(body) != 1 || (body[0] != 't' && body[0] != 'f') {
			return Header{}, protoErr("bad boolean %q", body)
		}
	case '_':
		if len(body) != 0 {
			return Header{}, protoErr("bad null")
		}
		h.Null = true
	case '$', '!', '=':
		err = h.length(MaxBulk)
	case '*', '~', '>', '%', '|':
		err = h.length(MaxElems)
		if err == nil && (h.Type == '%' || h.Type == '|') && h.N > MaxElems/2 {
			err = protoErr("map of %d pairs", h.N)
		}
	default:
		return Header{}, protoErr("unknown type byte %q", h.Type)
	}
	if err != nil {
		return Header{}, err
	}
	return h, nil
}

// length reads the header's length or count: -1 (a null) up to limit.
func (h *Header) length(limit int64) error {
	n, ok := ParseInt(h.Line)
	if !ok || n < -1 || n > limit {
		return protoErr("bad length %q", h.Line)
	}
	h.N, h.Null = n, n == -1
	return nil
}

// ReadBulk reads the n bytes (and CRLF) of a bulk value whose header
// announced n, and returns the first keep of them, in dst's memory when
// it is large enough (recorded bytes are returned from the record). The
// rest is read and dropped.
func (r *Reader) ReadBulk(n int64, keep int, dst []byte) ([]byte, error) {
	if r.record {
		start := len(r.raw)
		r.raw = append(r.raw, make([]byte, n+2)...)
		if _, err := io.ReadFull(r.br, r.raw[start:]); err != nil {
			return nil, unexpected(err)
		}
		if !bytes.HasSuffix(r.raw, crlf) {
			return nil, protoErr("bulk does not end with CRLF")
		}
		return r.raw[start : start+int(min(n, int64(keep)))], nil
	}
	k := int(min(n, int64(keep)))
	if cap(dst) < k {
		dst = make([]byte, k)
	}
	dst = dst[:k]
	if _, err := io.ReadFull(r.br, dst); err != nil {
		return nil, unexpected(err)
	}
	if _, err := r.br.Discard(int(n) - k); err != nil {
		return nil, unexpected(err)
	}
	end, err := r.br.Peek(2)
	if err != nil {
		return nil, unexpected(err)
	}
	if !bytes.Equal(end, crlf) {
		return nil, protoErr("bulk does not end with CRLF")
	}
	_, _ = r.br.Discard(2)
	return dst, nil
}

var crlf = []byte("\r\n")

// unexpected is err, with a stream that ended inside a value said so.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ReadValue reads one whole value (a reply). An attribute (|) is returned
// as its own value: the reply it annotates follows.
func (r *Reader) ReadValue() (Value, error) { return r.value(0) }

func (r *Reader) value(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, protoErr("nested deeper than %d", maxDepth)
	}
	h, err := r.ReadHeader()
	if err != nil {
		return Value{}, err
	}
	v := Value{Type: h.Type, Null: h.Null}
	switch {
	case h.Type == ':':
		v.Int = h.N
	case h.Bulk():
		b, err := r.ReadBulk(h.N, int(h.N), nil)
		if err != nil {
			return Value{}, err
		}
		v.Str = append([]byte(nil), b...)
	case h.Aggregate():
		n := int(h.N)
		if h.Type == '%' || h.Type == '|' {
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
	case h.Type != '_' && !h.Null:
		v.Str = append([]byte(nil), h.Line...)
	}
	return v, nil
}

// ReadCommand reads one command: an array of bulk strings, or an inline
// command (words separated by spaces, one line). A null array is a
// command of no words, as an empty inline line is.
func (r *Reader) ReadCommand() ([][]byte, error) {
	first, err := r.br.Peek(1)
	if err != nil {
		return nil, err
	}
	if first[0] != '*' {
		l, err := r.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, protoErr("inline command longer than %d bytes", r.br.Size())
			}
			return nil, err
		}
		if r.record {
			r.raw = append(r.raw, l...)
		}
		return bytes.Fields(bytes.TrimRight(l, "\r\n")), nil
	}
	v, err := r.value(0)
	if err != nil || v.Null {
		return nil, err
	}
	args := make([][]byte, 0, len(v.Elems))
	for _, e := range v.Elems {
		if e.Type != '$' || e.Null {
			return nil, protoErr("command element of type %q", e.Type)
		}
		args = append(args, e.Str)
	}
	return args, nil
}

// ReadValue reads one value from br, appending the bytes it consumed to
// raw: a proxy's read, which forwards raw unchanged.
func ReadValue(br *bufio.Reader, raw []byte) (Value, []byte, error) {
	r := Reader{br: br, raw: raw, record: true}
	v, err := r.ReadValue()
	return v, r.raw, err
}

// ReadCommand reads one command from br, appending the bytes it consumed
// to raw.
func ReadCommand(br *bufio.Reader, raw []byte) ([][]byte, []byte, error) {
	r := Reader{br: br, raw: raw, record: true}
	args, err := r.ReadCommand()
	return args, r.raw, err
}
