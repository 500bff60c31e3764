package amqpproxy

import (
	"bufio"
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
)

// Handler sees a connection's events.
type Handler interface {
	// Before is called before the frame that completes a client event is
	// forwarded to the broker; false withholds that frame.
	Before(c *Conn, ev *Event) bool
	// After is called once a client event was forwarded, and for a server
	// event just before it is (so the client cannot act on it first).
	After(c *Conn, ev *Event)
	// Closed is called when the connection is gone.
	Closed(c *Conn)
}

// Conn is one proxied AMQP connection.
type Conn struct {
	*proxy.Pair
	closing atomic.Bool
	// order keeps the handler's events in the order they happened: a
	// delivery's After runs before the client can answer it, so an ack
	// is never seen before the delivery it settles.
	order sync.Mutex
}

// CloseAsServer ends the connection the way a broker does: a
// connection.close frame to the client (code 320 CONNECTION_FORCED is what
// RabbitMQ sends when an operator closes a connection) and the broker side
// closed at once, so the broker requeues every unacked delivery.
func (c *Conn) CloseAsServer(code uint16, text string) {
	if c.closing.Swap(true) {
		return
	}
	_ = c.WriteClient(CloseFrame(code, text).Append(nil))
	c.Server.Close()
	// The client's socket goes once it answers with connection.close-ok
	// (it has read the close) or closes it itself; one that never does (a
	// hung client) is cut after closeWait.
	time.AfterFunc(closeWait, c.Pair.Close)
}

// closeWait bounds how long a client may take to answer a broker-side
// close: a bound for a client that never answers, not a guess at how
// long one that does takes.
const closeWait = 30 * time.Second

// Pumps returns the proxy's protocol for one pair.
func Pumps(h Handler) func(*proxy.Pair) proxy.Pumps {
	return func(p *proxy.Pair) proxy.Pumps { return &pumps{c: &Conn{Pair: p}, h: h} }
}

type pumps struct {
	c *Conn
	h Handler
}

func (p *pumps) Done(*proxy.Pair) { p.h.Closed(p.c) }

func (p *pumps) ClientToServer(pr *proxy.Pair) error {
	br := bufio.NewReaderSize(pr.Client, 64<<10)
	hdr := make([]byte, len(ProtocolHeader))
	if _, err := io.ReadFull(br, hdr); err != nil {
		return err
	}
	if !pr.Gate.Wait() {
		return nil
	}
	if err := pr.WriteServer(hdr); err != nil {
		return err
	}
	if !bytes.Equal(hdr, ProtocolHeader) {
		// Not AMQP 0-9-1: the broker answers with its own header and
		// closes; nothing here to read.
		_, err := io.Copy(pr.Server, br)
		return err
	}
	var asm assembler
	var out []byte
	for {
		f, err := ReadFrame(br)
		if err != nil {
			return err
		}
		if p.c.closing.Load() {
			if f.isCloseOk() {
				return nil // the client has read the close: its socket may go
			}
			continue // after a broker-side close, nothing reaches the broker
		}
		if !pr.Gate.Wait() {
			return nil
		}
		ev, complete := asm.feed(f)
		forward := true
		if complete {
			forward = p.h.Before(p.c, &ev)
			if !pr.Gate.Wait() {
				return nil
			}
		}
		if !forward {
			continue
		}
		ev.At = time.Now() // as it goes: before the broker can answer it
		out = f.Append(out[:0])
		if err := pr.WriteServer(out); err != nil {
			return err
		}
		if complete {
			p.c.order.Lock()
			p.h.After(p.c, &ev)
			p.c.order.Unlock()
		}
	}
}

func (p *pumps) ServerToClient(pr *proxy.Pair) error {
	br := bufio.NewReaderSize(pr.Server, 64<<10)
	first, err := br.Peek(1)
	if err != nil {
		return err
	}
	if first[0] == 'A' { // the broker refused our protocol version
		_, err := io.Copy(pr.Client, br)
		return err
	}
	var asm assembler
	var out []byte
	for {
		f, err := ReadFrame(br)
		if err != nil {
			if p.c.closing.Load() {
				<-pr.Closed()
				return nil
			}
			return err
		}
		pr.Slow()
		out = f.Append(out[:0])
		ev, complete := asm.feed(f)
		if !complete {
			if err := pr.WriteClient(out); err != nil {
				return err
			}
			continue
		}
		if err := p.deliver(pr, out, &ev); err != nil {
			return err
		}
	}
}

// deliver tells the handler of a server event and forwards the frame that
// completes it: told first, so that nothing the client does on it (an
// ack here, a lock or a write through another proxy) is told before it.
func (p *pumps) deliver(pr *proxy.Pair, frame []byte, ev *Event) error {
	p.c.order.Lock()
	defer p.c.order.Unlock()
	ev.At = time.Now()
	p.h.After(p.c, ev)
	return pr.WriteClient(frame)
}

// assembler joins a method with its content header and bodies, per
// channel (frames of different channels may interleave; one channel's
// content frames follow its method, section 4.2.6).
type assembler struct {
	pending map[uint16]*pendingContent
}

type pendingContent struct {
	ev        Event
	remaining uint64
}

// feed takes one frame and returns the event it completes.
func (a *assembler) feed(f Frame) (Event, bool) {
	switch f.Type {
	case FrameMethod:
		m, ok := f.Method()
		if !ok {
			return Event{}, false
		}
		ev, err := Decode(f.Channel, m)
		if err != nil || ev.Kind == KindNone {
			return Event{}, false
		}
		if ev.Kind.HasContent() {
			if a.pending == nil {
				a.pending = map[uint16]*pendingContent{}
			}
			a.pending[f.Channel] = &pendingContent{ev: ev}
			return Event{}, false
		}
		return ev, true
	case FrameHeader:
		pc := a.pending[f.Channel]
		if pc == nil {
			return Event{}, false
		}
		size, err := BodySize(f.Payload)
		if err != nil {
			delete(a.pending, f.Channel)
			return Event{}, false
		}
		pc.ev.BodySize = size
		pc.ev.Content = appendCapped(pc.ev.Content, f.Payload)
		if size == 0 {
			delete(a.pending, f.Channel)
			return pc.ev, true
		}
		pc.remaining = size
	case FrameBody:
		pc := a.pending[f.Channel]
		if pc == nil {
			return Event{}, false
		}
		pc.ev.Content = appendCapped(pc.ev.Content, f.Payload)
		if uint64(len(f.Payload)) >= pc.remaining {
			delete(a.pending, f.Channel)
			return pc.ev, true
		}
		pc.remaining -= uint64(len(f.Payload))
	}
	return Event{}, false
}

func appendCapped(b, p []byte) []byte {
	if room := MaxContent - len(b); room < len(p) {
		p = p[:max(room, 0)]
	}
	return append(b, p...)
}
