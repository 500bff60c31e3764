package pgproxy

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
)

// Statement is one SQL statement a worker asked to run.
type Statement struct {
	Kind Kind
	SQL  string
	// Raw is the message that runs it: a Query's text, or a Bind's
	// parameter values (where a business key usually is).
	Raw []byte
	// Bind is set when Raw is a Bind message (else a Query).
	Bind bool
}

// Handler sees a connection's statements and commits.
type Handler interface {
	// Statement is called before a Query or Bind is forwarded; false
	// withholds it.
	Statement(c *Conn, s *Statement) bool
	// Committing is called when the ReadyForQuery that ends a transaction
	// (or an autocommit statement) with writes arrives, before it is
	// forwarded; false drops the connection instead, so the client never
	// learns that the writes are durable (Committed is still called).
	Committing(c *Conn, writes []*Statement) bool
	// Committed is called when the ReadyForQuery that ends a transaction
	// (or an autocommit statement) with writes is about to be forwarded:
	// the writes are durable now, and the client does not know it yet.
	Committed(c *Conn, writes []*Statement)
	// Closed is called when the connection is gone.
	Closed(c *Conn)
}

// Replier is a Handler that also learns each statement's CommandComplete
// tag ("SELECT 0", "INSERT 0 1"): what the server answered, e.g. that a
// status read found no row.
type Replier interface {
	Replied(c *Conn, s *Statement, tag string)
}

// ErrCommitReplyDropped ends a connection whose commit reply the handler
// withheld.
var ErrCommitReplyDropped = errors.New("pgproxy: the commit reply was withheld and the connection dropped")

// Conn is one proxied PostgreSQL connection.
type Conn struct {
	*proxy.Pair

	mu         sync.Mutex
	stmts      map[string]string // prepared statement name -> SQL
	open       *unit             // statements since the last Sync
	units      []*unit           // sent, awaiting their ReadyForQuery
	txn        []*Statement      // writes of the open transaction
	txnBroken  bool              // failed or rolled back
	wantAnswer atomic.Bool       // the next server byte answers SSLRequest/GSSENCRequest
	answer     chan byte
}

// PendingWrites are the writes of the connection's open transaction that
// have not committed: those already answered and those still on their
// way.
func (c *Conn) PendingWrites() []*Statement {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.txn)
	for _, u := range append(slices.Clone(c.units), c.open) {
		for _, s := range u.stmts {
			if s.Kind == KindWrite {
				out = append(out, s)
			}
		}
	}
	return out
}

type unit struct {
	stmts    []*Statement
	failed   bool
	answered int // CommandCompletes seen: the next one answers stmts[answered]
}

// Pumps returns the proxy's protocol for one pair.
func Pumps(h Handler) func(*proxy.Pair) proxy.Pumps {
	return func(p *proxy.Pair) proxy.Pumps {
		return &pumps{c: &Conn{Pair: p, stmts: map[string]string{}, open: &unit{}, answer: make(chan byte, 1)}, h: h}
	}
}

type pumps struct {
	c *Conn
	h Handler
}

func (p *pumps) Done(*proxy.Pair) { p.h.Closed(p.c) }

func (p *pumps) ClientToServer(pr *proxy.Pair) error {
	br := bufio.NewReaderSize(pr.Client, 64<<10)
	if typed, err := p.startup(pr, br); !typed {
		return err
	}
	c := p.c
	var out []byte
	for {
		m, err := ReadMessage(br, false)
		if err != nil {
			return err
		}
		if !pr.Gate.Wait() {
			return nil
		}
		st := c.statement(m)
		if st != nil {
			ok := p.h.Statement(c, st)
			if !pr.Gate.Wait() {
				return nil
			}
			if !ok {
				continue
			}
		}
		c.sent(m, st)
		out = m.Append(out[:0])
		if err := pr.WriteServer(out); err != nil {
			return err
		}
	}
}

// startup forwards the untyped messages that open a connection: an
// SSLRequest or GSSENCRequest (the server's one-byte answer says whether
// the rest is encrypted, then only bytes are copied), a CancelRequest
// (bytes only after it), then the StartupMessage. typed: typed messages
// follow; otherwise the pump is done, with err.
func (p *pumps) startup(pr *proxy.Pair, br *bufio.Reader) (typed bool, err error) {
	c := p.c
	for {
		m, err := ReadMessage(br, true)
		if err != nil {
			return false, err
		}
		if !pr.Gate.Wait() {
			return false, nil
		}
		code := StartupCode(m)
		if code == codeSSL || code == codeGSSENC {
			c.wantAnswer.Store(true)
		}
		if err := pr.WriteServer(m.Append(nil)); err != nil {
			return false, err
		}
		switch code {
		case codeSSL, codeGSSENC:
			select {
			case a := <-c.answer:
				if a == 'S' || a == 'G' { // encrypted from here on: bytes only
					_, err := io.Copy(pr.Server, br)
					return false, err
				}
			case <-pr.Closed():
				return false, nil
			}
		case codeCancel:
			_, err := io.Copy(pr.Server, br)
			return false, err
		default:
			return true, nil
		}
	}
}

// clientReaders read the client messages that run or name a statement.
var clientReaders = map[byte]func(c *Conn, body []byte) *Statement{
	'P': (*Conn).parse,
	'Q': (*Conn).query,
	'B': (*Conn).bind,
}

// statement is the statement m runs (nil: none, or one the proxy cannot
// read).
func (c *Conn) statement(m Message) *Statement {
	read := clientReaders[m.Type]
	if read == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return read(c, m.Body)
}

// parse remembers a prepared statement's SQL for the binds that name it
// (c.mu held).
func (c *Conn) parse(body []byte) *Statement {
	if name, sql, err := ParseMsg(body); err == nil {
		c.stmts[name] = sql
	}
	return nil
}

// query is a simple query's statement (c.mu held).
func (c *Conn) query(body []byte) *Statement {
	sql, err := QueryText(body)
	if err != nil {
		return nil
	}
	return &Statement{Kind: Classify(sql), SQL: sql, Raw: body}
}

// bind is the statement a Bind runs: the SQL its Parse named (c.mu held).
func (c *Conn) bind(body []byte) *Statement {
	name, err := BindStatement(body)
	if err != nil {
		return nil
	}
	sql := c.stmts[name]
	return &Statement{Kind: Classify(sql), SQL: sql, Raw: body, Bind: true}
}

// sent records m as forwarded: st joins the statements awaiting their
// ReadyForQuery, and a Query or Sync closes the unit that one answers.
func (c *Conn) sent(m Message, st *Statement) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st != nil {
		c.open.stmts = append(c.open.stmts, st)
	}
	if m.Type == 'Q' || m.Type == 'S' { // each ends in one ReadyForQuery
		c.units = append(c.units, c.open)
		c.open = &unit{}
	}
}

func (p *pumps) ServerToClient(pr *proxy.Pair) error {
	c := p.c
	br := bufio.NewReaderSize(pr.Server, 64<<10)
	var out []byte
	for {
		if _, err := br.Peek(1); err != nil {
			return err
		}
		if c.wantAnswer.Swap(false) {
			a, _ := br.ReadByte()
			if err := pr.WriteClient([]byte{a}); err != nil {
				return err
			}
			c.answer <- a
			if a == 'S' || a == 'G' {
				_, err := io.Copy(pr.Client, br)
				return err
			}
			continue
		}
		m, err := ReadMessage(br, false)
		if err != nil {
			return err
		}
		committed, answered, tag := c.account(m)
		if rp, ok := p.h.(Replier); ok && answered != nil {
			rp.Replied(c, answered, tag)
		}
		if committed != nil && !p.h.Committing(c, committed) {
			p.h.Committed(c, committed)
			return ErrCommitReplyDropped
		}
		pr.Slow()
		if committed != nil {
			// Told before the client can act on it: an ack or lock release
			// it sends next, seen by another proxy, must not be recorded first.
			p.h.Committed(c, committed)
		}
		out = m.Append(out[:0])
		if err := pr.WriteClient(out); err != nil {
			return err
		}
	}
}

// answeredLocked is the statement a CommandComplete answers: the head
// unit's next one (a simple Query of several statements is one Statement,
// answered by each of its tags in turn); nil when the unit holds none.
// The caller holds c.mu.
func (c *Conn) answeredLocked() *Statement {
	if len(c.units) == 0 || len(c.units[0].stmts) == 0 {
		return nil
	}
	u := c.units[0]
	s := u.stmts[min(u.answered, len(u.stmts)-1)]
	u.answered++
	return s
}

// account follows a server message: a CommandComplete answers a statement
// (and a ROLLBACK breaks the transaction), an error fails its unit, and a
// ReadyForQuery that ends an unbroken transaction with writes returns
// them, committed.
func (c *Conn) account(m Message) (committed []*Statement, answered *Statement, tag string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Type {
	case 'C':
		var err error
		if tag, err = QueryText(m.Body); err == nil && strings.HasPrefix(tag, "ROLLBACK") {
			c.txnBroken = true
		}
		answered = c.answeredLocked()
	case 'E':
		if len(c.units) > 0 {
			c.units[0].failed = true
		}
	case 'Z':
		if len(c.units) > 0 {
			u := c.units[0]
			c.units = c.units[1:]
			if u.failed {
				c.txnBroken = true
			}
			for _, s := range u.stmts {
				if s.Kind == KindWrite {
					c.txn = append(c.txn, s)
				}
			}
		}
		if len(m.Body) == 1 && m.Body[0] == 'I' {
			if !c.txnBroken && len(c.txn) > 0 {
				committed = c.txn
			}
			c.txn, c.txnBroken = nil, false
		}
	}
	return committed, answered, tag
}
