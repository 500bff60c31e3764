// Package respproxy is a proxy that speaks just enough RESP to see a
// worker's Redis commands and their replies, and to answer a command
// itself (a cache write dupctl delays, to make the cache lag). It reads the
// protocol with internal/platform/resp, keeping every byte it read so that
// what it forwards is exactly what it received.
package respproxy

import (
	"bufio"
	"strings"
	"sync"

	"github.com/dupctl/dupctl/internal/platform/resp"
	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
)

// Cmd is one command a worker sent.
type Cmd struct {
	Args [][]byte
	// InMulti is set between MULTI and EXEC: its reply is +QUEUED, and
	// the proxy never answers it itself.
	InMulti bool
}

// Name is the command's name, upper case.
func (c *Cmd) Name() string {
	if len(c.Args) == 0 {
		return ""
	}
	return strings.ToUpper(string(c.Args[0]))
}

// Arg returns argument i (0 is the name) or "".
func (c *Cmd) Arg(i int) string {
	if i < len(c.Args) {
		return string(c.Args[i])
	}
	return ""
}

// Handler sees a connection's commands and replies.
type Handler interface {
	// Command is called before a command is forwarded. A non-nil reply
	// is sent to the worker in the command's place and the command is
	// not forwarded (never inside MULTI).
	Command(c *Conn, cmd *Cmd) (reply []byte)
	// Reply is called with the reply to a forwarded command just before
	// it goes to the worker, so that what the worker does next, seen by
	// another proxy, cannot be told first (the connection is held: replies
	// keep their order). The func it returns, if any, runs once the reply
	// was sent: for what must come after the worker has it.
	Reply(c *Conn, cmd *Cmd, v *resp.Value) (then func())
	// Closed is called when the connection is gone.
	Closed(c *Conn)
}

// Conn is one proxied Redis connection.
type Conn struct {
	*proxy.Pair

	mu          sync.Mutex
	queue       []*entry // commands awaiting their reply, in order
	passthrough bool     // pub/sub or MONITOR: replies no longer pair with commands
	inMulti     bool
}

type entry struct {
	cmd   *Cmd
	reply []byte // answered by the proxy
}

// Pumps returns the proxy's protocol for one pair.
func Pumps(h Handler) func(*proxy.Pair) proxy.Pumps {
	return func(p *proxy.Pair) proxy.Pumps { return &pumps{c: &Conn{Pair: p}, h: h} }
}

type pumps struct {
	c *Conn
	h Handler
}

func (p *pumps) Done(*proxy.Pair) { p.h.Closed(p.c) }

// flush sends the proxy's own replies that are next in line. The caller
// holds c.mu.
func (c *Conn) flush() error {
	for len(c.queue) > 0 && c.queue[0].reply != nil {
		if err := c.WriteClient(c.queue[0].reply); err != nil {
			return err
		}
		c.queue = c.queue[1:]
	}
	return nil
}

func (p *pumps) ClientToServer(pr *proxy.Pair) error {
	c := p.c
	br := bufio.NewReaderSize(pr.Client, 64<<10)
	var raw []byte
	for {
		args, b, err := resp.ReadCommand(br, raw[:0])
		raw = b
		if err != nil {
			return err
		}
		if !pr.Gate.Wait() {
			return nil
		}
		if len(args) == 0 { // an empty inline line: Redis ignores it
			if err := pr.WriteServer(raw); err != nil {
				return err
			}
			continue
		}
		c.mu.Lock()
		cmd := &Cmd{Args: args, InMulti: c.inMulti}
		pass := c.passthrough
		switch cmd.Name() {
		case "MULTI":
			c.inMulti = true
		case "EXEC", "DISCARD":
			c.inMulti = false
		case "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "MONITOR":
			c.passthrough = true
		}
		c.mu.Unlock()
		var reply []byte
		if !pass {
			reply = p.h.Command(c, cmd)
			if cmd.InMulti {
				reply = nil
			}
			if !pr.Gate.Wait() {
				return nil
			}
		}
		c.mu.Lock()
		if !pass {
			c.queue = append(c.queue, &entry{cmd: cmd, reply: reply})
		}
		err = c.flush()
		c.mu.Unlock()
		if err != nil {
			return err
		}
		if reply == nil {
			if err := pr.WriteServer(raw); err != nil {
				return err
			}
		}
	}
}

func (p *pumps) ServerToClient(pr *proxy.Pair) error {
	c := p.c
	br := bufio.NewReaderSize(pr.Server, 64<<10)
	var raw []byte
	for {
		v, b, err := resp.ReadValue(br, raw[:0])
		raw = b
		if err != nil {
			return err
		}
		for v.Type == '|' { // an attribute annotates the reply that follows
			v, raw, err = resp.ReadValue(br, raw)
			if err != nil {
				return err
			}
		}
		pr.Slow()
		c.mu.Lock()
		if v.Type == '>' { // out of band: no command waits for it
			err := c.WriteClient(raw)
			c.mu.Unlock()
			if err != nil {
				return err
			}
			continue
		}
		var then func()
		err = c.flush()
		if err == nil {
			if len(c.queue) > 0 {
				var e *entry
				e, c.queue = c.queue[0], c.queue[1:]
				then = p.h.Reply(c, e.cmd, &v)
			}
			err = c.WriteClient(raw)
		}
		if err == nil {
			err = c.flush()
		}
		c.mu.Unlock()
		if err != nil {
			return err
		}
		if then != nil {
			then()
		}
	}
}
