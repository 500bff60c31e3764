package keyspace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/resp"
)

// rawConn is the scan's hot path: a connection of its own to one node,
// opened with the node client's own dialer, credentials and database, that
// writes the per-key commands as RESP straight into a buffer and parses
// their replies straight into observed values. go-redis builds a command
// object per command; at a million keys that was half of dupctl's CPU,
// which on a busy machine is CPU taken from Redis itself. Everything else
// still goes through go-redis.
type rawConn struct {
	c    net.Conn
	r    *resp.Reader
	w    *bufio.Writer
	buf  []byte // bulk reply scratch
	stop func() bool
	// errReplies counts the error replies read: a read the key's type
	// refuses is one the server counts as a failed call (tests).
	errReplies int64
}

// dialRaw opens a raw connection like the node's client would.
func dialRaw(ctx context.Context, n *Node) (*rawConn, error) {
	// A *redis.Client, or a client built on one (connect.Failover, whose
	// Dialer asks the Sentinels where the master is).
	o := options(n.Conn)
	if o == nil || o.Dialer == nil || o.CredentialsProvider != nil || o.CredentialsProviderContext != nil ||
		o.StreamingCredentialsProvider != nil {
		return nil, errNoRaw
	}
	c, err := o.Dialer(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	rc := &rawConn{c: c, r: resp.NewReader(bufio.NewReaderSize(c, 64<<10)), w: bufio.NewWriterSize(c, 64<<10)}
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
	if n.NoTouch {
		setup = append(setup, []string{"CLIENT", "NO-TOUCH", "ON"})
	}
	for _, cmd := range setup {
		rc.write(cmd...)
	}
	if err := rc.w.Flush(); err != nil {
		rc.close()
		return nil, fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	for _, cmd := range setup {
		kind, text, err := rc.reply()
		if err == nil && kind == replyError {
			// AUTH errors never echo the password.
			err = fmt.Errorf("%s: %s", cmd[0], text)
		}
		if err != nil {
			rc.close()
			return nil, fmt.Errorf("connect to %s: %w", n.Name, err)
		}
	}
	return rc, nil
}

var errNoRaw = errors.New("no raw connection for this client")

func (rc *rawConn) close() {
	rc.stop()
	rc.c.Close()
}

// write appends one command in RESP.
func (rc *rawConn) write(args ...string) {
	rc.buf = resp.AppendCommand(rc.buf[:0], args...)
	rc.w.Write(rc.buf)
}

// The per-key commands in RESP around the key's bulk string: the hot
// path writes each key's length once and copies these.
var (
	respType     = "*2\r\n$4\r\nTYPE\r\n"
	respPTTL     = "*2\r\n$4\r\nPTTL\r\n"
	respIdle     = "*3\r\n$6\r\nOBJECT\r\n$8\r\nIDLETIME\r\n"
	respGetRange = "*4\r\n$8\r\nGETRANGE\r\n"
	respRange    = "$1\r\n0\r\n$" + strconv.Itoa(len(strconv.Itoa(maxValue-1))) + "\r\n" + strconv.Itoa(maxValue-1) + "\r\n"
	respHScan    = "*5\r\n$5\r\nHSCAN\r\n"
	respPage     = "$1\r\n0\r\n$5\r\nCOUNT\r\n$" + strconv.Itoa(len(strconv.Itoa(hashFields))) + "\r\n" + strconv.Itoa(hashFields) + "\r\n"
	respZRange   = "*5\r\n$6\r\nZRANGE\r\n"
	respMembers  = "$1\r\n0\r\n$1\r\n" + strconv.Itoa(zsetMembers-1) + "\r\n$10\r\nWITHSCORES\r\n"
)

// writeReads writes the reads of key (as a bulk string) that want names.
func (rc *rawConn) writeReads(bulk []byte, want uint8) {
	if want&readString != 0 {
		rc.w.WriteString(respGetRange)
		rc.w.Write(bulk)
		rc.w.WriteString(respRange)
	}
	if want&readHash != 0 {
		rc.w.WriteString(respHScan)
		rc.w.Write(bulk)
		rc.w.WriteString(respPage)
	}
	if want&readType != 0 {
		rc.w.WriteString(respType)
		rc.w.Write(bulk)
	}
	if want&readZset != 0 {
		rc.w.WriteString(respZRange)
		rc.w.Write(bulk)
		rc.w.WriteString(respMembers)
	}
}

// keyBulk is key as a RESP bulk string, in rc.buf.
func (rc *rawConn) keyBulk(key string) []byte {
	rc.buf = resp.AppendBulk(rc.buf[:0], key)
	return rc.buf
}

// replyKind is what a reply was.
type replyKind uint8

const (
	replyInt replyKind = iota
	replyBulk
	replyNil
	replyError
	replyStatus
	replyArray
)

// reply reads one reply that is not an array: an integer, a bulk string
// (returned as text), nil, an error (text) or a status.
func (rc *rawConn) reply() (replyKind, string, error) {
	kind, n, text, err := rc.next()
	switch {
	case err != nil:
	case kind == replyInt:
		text = strconv.FormatInt(n, 10)
	case kind == replyArray:
		return 0, "", fmt.Errorf("unexpected array of %d", n)
	}
	return kind, text, err
}

// next reads one reply; integers (and array lengths) come back in n
// without a string, which keeps the replies per key to few allocations.
// A bulk string is clipped to maxValue bytes. The protocol itself (types,
// lengths, their limits) is platform/resp's.
func (rc *rawConn) next() (kind replyKind, n int64, text string, err error) {
	h, err := rc.r.ReadHeader()
	if err != nil {
		return 0, 0, "", err
	}
	switch {
	case h.Null:
		return replyNil, 0, "", nil
	case h.Type == ':':
		return replyInt, h.N, "", nil
	case h.Type == '+':
		return replyStatus, 0, string(h.Line), nil
	case h.Type == '-':
		rc.errReplies++
		return replyError, 0, string(h.Line), nil
	case h.Type == '*':
		return replyArray, h.N, "", nil
	case h.Type == '$':
		rc.buf, err = rc.r.ReadBulk(h.N, maxValue, rc.buf)
		if err != nil {
			return 0, 0, "", err
		}
		return replyBulk, 0, string(rc.buf), nil
	}
	// RESP3 types never answer the RESP2 connection this opens.
	return 0, 0, "", fmt.Errorf("unexpected reply type %q", h.Type)
}

// hscanPage reads an HSCAN reply: the cursor and up to hashFields pairs
// of the page (more are read and dropped), or an error reply's text.
func (rc *rawConn) hscanPage() (fields []string, more bool, errText string, err error) {
	kind, n, text, err := rc.next()
	switch {
	case err != nil:
		return nil, false, "", err
	case kind == replyError:
		return nil, false, text, nil
	case kind != replyArray || n != 2:
		return nil, false, "", fmt.Errorf("HSCAN: unexpected reply")
	}
	kind, _, cursor, err := rc.next()
	if err != nil || kind != replyBulk {
		return nil, false, "", fmt.Errorf("HSCAN cursor: %v", err)
	}
	kind, n, _, err = rc.next()
	if err != nil || kind != replyArray {
		return nil, false, "", fmt.Errorf("HSCAN page: %v", err)
	}
	for i := int64(0); i < n; i++ {
		kind, _, text, err := rc.next()
		if err != nil || kind != replyBulk {
			return nil, false, "", fmt.Errorf("HSCAN element: %v", err)
		}
		if i < 2*hashFields {
			fields = append(fields, text)
		}
	}
	return fields, cursor != "0" || n > 2*hashFields, "", nil
}

// readBatch reads keys in one pipelined round trip: per key PTTL and
// OBJECT IDLETIME, then what want names - GETRANGE 0 maxValue-1 for a
// string, HSCAN 0 COUNT hashFields for a hash, TYPE where the type is not
// foretold (a key of a new or mixed template; nil want: TYPE and no value
// at all). A read that succeeds tells the type: only a string answers
// GETRANGE, only a hash HSCAN. The idle time is read before the value,
// because reading a value marks the key as just used. A key whose value
// the first round trip did not read (its type was asked, or the plan got
// it wrong: a hash in a template that had only had strings) gets it in
// another, small round trip.
func (rc *rawConn) readBatch(n *Node, keys []string, want []uint8, p *Page) error {
	values := want != nil
	if !values {
		want = make([]uint8, len(keys))
		for i := range want {
			want[i] = readType
		}
	}
	for i, k := range keys {
		bulk := rc.keyBulk(k)
		rc.w.WriteString(respPTTL)
		rc.w.Write(bulk)
		rc.w.WriteString(respIdle)
		rc.w.Write(bulk)
		rc.writeReads(bulk, want[i])
	}
	if err := rc.w.Flush(); err != nil {
		return fmt.Errorf("read keys on %s: %w", n.Name, err)
	}
	p.Keys = make([]Key, 0, len(keys))
	var retry []secondRead
	for i, k := range keys {
		o := Key{Key: k, Node: n.Name, Idle: -1, Idx: i}
		keep, missing, err := rc.readKey(n, &o, want[i], p)
		if err != nil {
			return err
		}
		if !keep {
			continue
		}
		if missing != 0 && values {
			retry = append(retry, secondRead{len(p.Keys), missing})
		}
		p.Keys = append(p.Keys, o)
	}
	defer p.ownIdles(n)
	if betweenRounds != nil {
		betweenRounds()
	}
	return rc.readAgain(n, retry, p)
}

// betweenRounds, set by tests, runs between the first round trip and the
// further ones (a key deleted there).
var betweenRounds func()

// secondRead is a key whose planned read did not fit its type: the reads
// it still needs (p.Keys[key]).
type secondRead struct {
	key  int
	read uint8
}

// readKey parses one key's replies (PTTL, OBJECT IDLETIME, then the reads
// in want) into o; false when the key is gone or the ACL user may not
// read it. missing are the reads still needed to know its value.
func (rc *rawConn) readKey(n *Node, o *Key, want uint8, p *Page) (keep bool, missing uint8, err error) {
	var pt, id reply
	if pt, err = rc.one(); err == nil {
		id, err = rc.one()
	}
	if err != nil {
		return false, 0, fmt.Errorf("read keys on %s: %w", n.Name, err)
	}
	var rs reads
	if err := rc.reads(want, &rs); err != nil {
		return false, 0, fmt.Errorf("read keys on %s: %w", n.Name, err)
	}
	switch pt.kind {
	case replyInt:
		o.PTTL = pt.n
	case replyError:
		return false, 0, n.refused("PTTL", pt.text, p) // a key this user may not read
	default:
		return false, 0, fmt.Errorf("PTTL on %s: unexpected reply", n.Name)
	}
	if o.PTTL == -2 {
		return false, 0, nil // gone since SCAN
	}
	if id.kind == replyInt {
		o.Idle = id.n
	} else if err := n.refused("OBJECT", id.text, p); err != nil {
		return false, 0, err
	}
	missing, err = n.apply(o, &rs, want, p)
	return err == nil, missing, err
}

// readAgain makes the further round trips for the keys whose value the
// first did not read: the read their type needs, or TYPE first where a
// planned read did not fit and the type is still unknown. A key whose type
// changes between round trips is given up after maxReadRounds (its value
// unread, as a key of a type dupctl does not read). Each round asks PTTL
// again: a key deleted since the first round answers GETRANGE with an
// empty string and HSCAN with no field, which would read as a lock whose
// token is "" (a lock released in between: LOCK_TOKEN_CONSTANT on locks
// that each had their own); such a key is dropped, as one gone since SCAN.
func (rc *rawConn) readAgain(n *Node, retry []secondRead, p *Page) error {
	if len(retry) == 0 {
		return nil
	}
	p.SecondReads += int64(len(retry))
	gone := map[int]bool{}
	defer func() { p.dropKeys(gone) }()
	for round := 0; len(retry) > 0 && round < maxReadRounds; round++ {
		for _, a := range retry {
			bulk := rc.keyBulk(p.Keys[a.key].Key)
			rc.w.WriteString(respPTTL)
			rc.w.Write(bulk)
			rc.writeReads(bulk, a.read)
		}
		if err := rc.w.Flush(); err != nil {
			return fmt.Errorf("read keys on %s: %w", n.Name, err)
		}
		next := retry[:0]
		for _, a := range retry {
			pt, err := rc.one()
			if err != nil {
				return fmt.Errorf("read keys on %s: %w", n.Name, err)
			}
			var rs reads
			if err := rc.reads(a.read, &rs); err != nil {
				return fmt.Errorf("read keys on %s: %w", n.Name, err)
			}
			if pt.kind == replyInt && pt.n == -2 {
				gone[a.key] = true
				continue
			}
			missing, err := n.apply(&p.Keys[a.key], &rs, a.read, p)
			if err != nil {
				return err
			}
			if missing != 0 {
				next = append(next, secondRead{a.key, missing})
			}
		}
		retry = next
	}
	return nil
}

// dropKeys removes the keys at the indexes gone (keys that vanished
// between round trips), keeping the others' order.
func (p *Page) dropKeys(gone map[int]bool) {
	if len(gone) == 0 {
		return
	}
	kept := p.Keys[:0]
	for i, k := range p.Keys {
		if !gone[i] {
			kept = append(kept, k)
		}
	}
	p.Keys = kept
}

// maxReadRounds bounds readAgain's round trips: TYPE, then the value.
const maxReadRounds = 2

// Which of TYPE and a value's reads a key gets.
const (
	readString uint8 = 1 << iota // GETRANGE
	readHash                     // HSCAN
	readType                     // TYPE
	readZset                     // ZRANGE 0 3 WITHSCORES
	readAll    = readString | readHash | readType
)

// reply is one reply that is not an array.
type reply struct {
	kind replyKind
	n    int64
	text string
}

func (rc *rawConn) one() (reply, error) {
	kind, n, text, err := rc.next()
	if err == nil && kind == replyArray {
		err = fmt.Errorf("unexpected array of %d", n)
	}
	return reply{kind, n, text}, err
}

// reads are the replies to a key's value reads.
type reads struct {
	getrange reply
	fields   []string
	more     bool
	hscanErr string
	typ      reply
	members  []string
	zsetErr  string
}

// reads parses the replies to the reads in want, in writeReads' order.
func (rc *rawConn) reads(want uint8, rs *reads) error {
	var err error
	if want&readString != 0 {
		if rs.getrange, err = rc.one(); err != nil {
			return err
		}
	}
	if want&readHash != 0 {
		if rs.fields, rs.more, rs.hscanErr, err = rc.hscanPage(); err != nil {
			return err
		}
	}
	if want&readType != 0 {
		if rs.typ, err = rc.one(); err != nil {
			return err
		}
	}
	if want&readZset != 0 {
		rs.members, rs.zsetErr, err = rc.bulks()
	}
	return err
}

// bulks reads an array of bulk strings (a ZRANGE reply), or an error
// reply's text.
func (rc *rawConn) bulks() (out []string, errText string, err error) {
	kind, n, text, err := rc.next()
	switch {
	case err != nil:
		return nil, "", err
	case kind == replyError:
		return nil, text, nil
	case kind != replyArray:
		return nil, "", fmt.Errorf("ZRANGE: unexpected reply")
	}
	for i := int64(0); i < n; i++ {
		kind, _, text, err := rc.next()
		if err != nil || kind != replyBulk {
			return nil, "", fmt.Errorf("ZRANGE element: %v", err)
		}
		out = append(out, text)
	}
	return out, "", nil
}

// apply sets a key's type and value from its reads (sent: which were
// sent) and returns the reads still missing to know them.
func (n *Node) apply(o *Key, rs *reads, sent uint8, p *Page) (missing uint8, err error) {
	if sent&readType != 0 {
		if rs.typ.kind == replyStatus {
			o.Type = rs.typ.text
		} else if err := n.refused("TYPE", rs.typ.text, p); err != nil {
			return 0, err
		}
	}
	switch {
	case sent&readString != 0 && rs.getrange.kind == replyBulk && (o.Type == "" || o.Type == "string"):
		o.Type, o.Value, o.Read = "string", rs.getrange.text, true
		return 0, nil
	case sent&readHash != 0 && rs.hscanErr == "" && (o.Type == "" || o.Type == "hash"):
		o.Type, o.Fields, o.MoreFields, o.Read = "hash", rs.fields, rs.more, true
		return 0, nil
	case sent&readZset != 0 && rs.zsetErr == "" && (o.Type == "" || o.Type == "zset"):
		o.Type, o.Fields, o.Read = "zset", rs.members, true
		return 0, nil
	}
	if sent&readString != 0 && rs.getrange.kind == replyError {
		if err := n.refused("GETRANGE", rs.getrange.text, p); err != nil {
			return 0, err
		}
	}
	if sent&readHash != 0 {
		if err := n.refused("HSCAN", rs.hscanErr, p); err != nil {
			return 0, err
		}
	}
	if sent&readZset != 0 {
		if err := n.refused("ZRANGE", rs.zsetErr, p); err != nil {
			return 0, err
		}
	}
	switch {
	case o.Type == "string":
		missing = readString
	case o.Type == "hash":
		missing = readHash
	case o.Type == "zset":
		missing = readZset
	case o.Type == "" && sent&readType == 0:
		missing = readAll // the planned read did not fit: ask what it is
	}
	return missing &^ sent, nil
}

// refused sorts a per-key error reply: WRONGTYPE and LFU's "idle time not
// tracked" are expected and mean nothing was read; a NOPERM on one key is
// counted as denied; a NOPERM for a whole command is recorded for the
// report (its checks did not run) - fatal only for PTTL, without which
// nothing can be judged. Any other error fails the read.
func (n *Node) refused(cmd, text string, p *Page) error {
	if text == "" || strings.HasPrefix(text, "WRONGTYPE") {
		return nil
	}
	if cmd == "OBJECT" && strings.Contains(text, "LFU") {
		return nil
	}
	command, denied := connect.NoPermission(text)
	switch {
	case !denied:
		return &keyReplyError{cmd, n.Name, text}
	case command == "":
		if cmd == "PTTL" {
			p.Denied++
		}
		return nil
	case cmd == "PTTL":
		return permissionError(n, cmd, text)
	}
	n.Deny(command)
	return nil
}

// ownIdles unsets the idle time of the page's strings whose idle time is
// not their own (sharedInteger), unless n shares no integers.
func (p *Page) ownIdles(n *Node) {
	if n.PrivateIntegers {
		return
	}
	for i := range p.Keys {
		if o := &p.Keys[i]; o.Read && o.Type == "string" && sharedInteger(o.Value) {
			o.Idle = -1
		}
	}
}

// sharedInteger tells whether Redis may store value as one of its shared
// integer objects (the decimals 0 to 9999, OBJ_SHARED_INTEGERS). Every key
// holding that number points at the same object, so OBJECT IDLETIME
// reports when any of them (or the server at start) last touched it, not
// this key: a 4-digit lock token set a second ago read as idle since the
// server started. Such a key's idle time is unknown, unless its node
// shares no integers (Node.SetMemory).
func sharedInteger(value string) bool {
	if value == "" || len(value) > 4 || (value[0] == '0' && len(value) > 1) {
		return false
	}
	for i := 0; i < len(value); i++ {
		if value[i] < '0' || value[i] > '9' {
			return false
		}
	}
	return true
}

// SetMemory records a node's maxmemory and maxmemory-policy (INFO memory).
// With a limit and an LRU or LFU policy Redis shares no integer objects,
// as each needs an LRU field of its own (redis/redis object.c
// tryObjectEncoding and createStringObjectFromLongLongWithOptions,
// MAXMEMORY_FLAG_NO_SHARED_INTEGERS): a small integer value's idle time
// is then its key's. A key written before such a policy was set may still
// hold a shared object; nothing a read-only client can see tells it.
func (n *Node) SetMemory(maxmemory int64, policy string) {
	n.PrivateIntegers = maxmemory != 0 && (strings.Contains(policy, "lru") || strings.Contains(policy, "lfu"))
}

// relearnMemory reads the memory settings of the server n reads now (a
// walk that followed a failover); INFO refused, they are unknown and
// integers taken as shared.
func (n *Node) relearnMemory(ctx context.Context) {
	n.PrivateIntegers = false
	raw, err := n.Conn.Info(ctx, "memory").Result()
	if err != nil {
		return
	}
	var maxmemory int64
	var policy string
	for _, line := range strings.Split(raw, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch k {
		case "maxmemory":
			maxmemory, _ = strconv.ParseInt(v, 10, 64)
		case "maxmemory_policy":
			policy = v
		}
	}
	n.SetMemory(maxmemory, policy)
}
