package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// rawConn is the scan's hot path: a connection of its own to one node,
// opened with the node client's own dialer, credentials and database, that
// writes the per-key commands as RESP straight into a buffer and parses the
// three replies per key straight into observed values. go-redis builds a
// command object per command; at a million keys that was half of dupctl's
// CPU, which on a busy machine is CPU taken from Redis itself. Everything
// that is not the per-key triple still goes through go-redis.
type rawConn struct {
	c    net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	buf  []byte // bulk reply scratch
	stop func() bool
}

// dialRaw opens a raw connection like the node's client would.
func dialRaw(ctx context.Context, n node) (*rawConn, error) {
	cl, ok := n.conn.(*redis.Client)
	if !ok {
		return nil, errNoRaw
	}
	o := cl.Options()
	if o.Dialer == nil || o.CredentialsProvider != nil || o.CredentialsProviderContext != nil || o.StreamingCredentialsProvider != nil {
		return nil, errNoRaw
	}
	c, err := o.Dialer(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", n.name, err)
	}
	rc := &rawConn{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10)}
	rc.stop = context.AfterFunc(ctx, func() { c.Close() })
	var setup [][]string
	if o.Password != "" {
		if o.Username != "" {
			setup = append(setup, []string{"AUTH", o.Username, o.Password})
		} else {
			setup = append(setup, []string{"AUTH", o.Password})
		}
	}
	if o.DB != 0 {
		setup = append(setup, []string{"SELECT", strconv.Itoa(o.DB)})
	}
	if n.noTouch {
		setup = append(setup, []string{"CLIENT", "NO-TOUCH", "ON"})
	}
	for _, cmd := range setup {
		rc.write(cmd...)
	}
	if err := rc.w.Flush(); err != nil {
		rc.close()
		return nil, fmt.Errorf("connect to %s: %w", n.name, err)
	}
	for _, cmd := range setup {
		kind, text, err := rc.reply()
		if err == nil && kind == replyError {
			// AUTH errors never echo the password.
			err = fmt.Errorf("%s: %s", cmd[0], text)
		}
		if err != nil {
			rc.close()
			return nil, fmt.Errorf("connect to %s: %w", n.name, err)
		}
	}
	return rc, nil
}

var errNoRaw = errors.New("no raw connection for this client")

var rawCommands = [3]string{"PTTL", "OBJECT IDLETIME", "GETRANGE"}

// maxBulk bounds a bulk reply: the raw path only reads GETRANGE slices of
// maxValue bytes and short setup replies, so anything longer is a broken
// stream, not a value to allocate.
const maxBulk = 1 << 20

func (rc *rawConn) close() {
	rc.stop()
	rc.c.Close()
}

// write appends one command in RESP.
func (rc *rawConn) write(args ...string) {
	var num [20]byte
	rc.w.WriteByte('*')
	rc.w.Write(strconv.AppendInt(num[:0], int64(len(args)), 10))
	rc.w.WriteString("\r\n")
	for _, a := range args {
		rc.w.WriteByte('$')
		rc.w.Write(strconv.AppendInt(num[:0], int64(len(a)), 10))
		rc.w.WriteString("\r\n")
		rc.w.WriteString(a)
		rc.w.WriteString("\r\n")
	}
}

// replyKind is what a reply was.
type replyKind uint8

const (
	replyInt replyKind = iota
	replyBulk
	replyNil
	replyError
	replyStatus
)

// reply reads one reply that is not an array: an integer, a bulk string
// (returned as text), nil, an error (text) or a status.
func (rc *rawConn) reply() (replyKind, string, error) {
	kind, n, text, err := rc.next()
	if kind == replyInt {
		text = strconv.FormatInt(n, 10)
	}
	return kind, text, err
}

// next reads one reply; integers come back in n without a string, which
// keeps the three replies per key to at most one allocation.
func (rc *rawConn) next() (kind replyKind, n int64, text string, err error) {
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return 0, 0, "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, 0, "", fmt.Errorf("bad reply line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case ':':
		v, ok := parseInt(body)
		if !ok {
			return 0, 0, "", fmt.Errorf("bad integer %q", body)
		}
		return replyInt, v, "", nil
	case '+':
		return replyStatus, 0, string(body), nil
	case '-':
		return replyError, 0, string(body), nil
	case '_':
		return replyNil, 0, "", nil
	case '$':
		size, ok := parseInt(body)
		if !ok || size > maxBulk {
			return 0, 0, "", fmt.Errorf("bad bulk length %q", body)
		}
		if size < 0 {
			return replyNil, 0, "", nil
		}
		if cap(rc.buf) < int(size)+2 {
			rc.buf = make([]byte, int(size)+2)
		}
		buf := rc.buf[:size+2]
		if _, err := io.ReadFull(rc.r, buf); err != nil {
			return 0, 0, "", err
		}
		return replyBulk, 0, string(buf[:size]), nil
	}
	return 0, 0, "", fmt.Errorf("unexpected reply type %q", line[0])
}

// parseInt reads a RESP integer without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// readBatch reads PTTL, OBJECT IDLETIME and GETRANGE (or TYPE without
// values) for keys in one round trip, as readKeys does, and returns the
// indexes of the keys that were not strings.
func (rc *rawConn) readBatch(n node, keys []string, values bool) ([]observed, []int, error) {
	maxEnd := strconv.Itoa(maxValue - 1)
	for _, k := range keys {
		rc.write("PTTL", k)
		rc.write("OBJECT", "IDLETIME", k)
		if values {
			rc.write("GETRANGE", k, "0", maxEnd)
		} else {
			rc.write("TYPE", k)
		}
	}
	if err := rc.w.Flush(); err != nil {
		return nil, nil, fmt.Errorf("read keys on %s: %w", n.name, err)
	}
	obs := make([]observed, 0, len(keys))
	var others []int
	for _, k := range keys {
		var kinds [3]replyKind
		var ints [3]int64
		var texts [3]string
		for i := range kinds {
			kind, v, text, err := rc.next()
			if err != nil {
				return nil, nil, fmt.Errorf("read keys on %s: %w", n.name, err)
			}
			if kind == replyError && strings.HasPrefix(text, "NOPERM") {
				return nil, nil, cmdError(errors.New(text), rawCommands[i], n)
			}
			kinds[i], ints[i], texts[i] = kind, v, text
		}
		if kinds[0] != replyInt {
			return nil, nil, fmt.Errorf("PTTL on %s: %s", n.name, texts[0])
		}
		if ints[0] == -2 {
			continue // gone since SCAN
		}
		o := observed{key: k, node: n.name, pttl: ints[0], idle: -1}
		if kinds[1] == replyInt {
			o.idle = ints[1]
		}
		switch {
		case !values:
			o.typ = texts[2]
		case kinds[2] == replyBulk:
			o.typ, o.value, o.read = "string", texts[2], true
		case kinds[2] == replyError && strings.HasPrefix(texts[2], "WRONGTYPE"):
			others = append(others, len(obs))
		default:
			return nil, nil, fmt.Errorf("GETRANGE on %s: %s", n.name, texts[2])
		}
		obs = append(obs, o)
	}
	return obs, others, nil
}
