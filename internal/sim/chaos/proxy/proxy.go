// Package proxy is the TCP plumbing under dupctl's fault-injecting
// proxies: a loopback listener that dials the real server for every
// connection it accepts and runs a protocol's two pumps (client to server,
// server to client) over the pair. The protocols themselves (AMQP 0-9-1
// framing, RESP, the PostgreSQL wire protocol) live in the sibling
// packages; this one knows bytes, connections and the Gate that freezes or
// kills everything one worker sends.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Gate decides whether bytes from one worker process may reach the
// servers. A pump waits on it before forwarding what the worker sent:
// frozen (the worker is stopped) holds them, dead (the worker was killed)
// drops them and closes the connection. One Gate belongs to one worker
// process instance; a restarted worker gets a new one.
type Gate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	dead   bool
	killed chan struct{}
}

// NewGate returns an open gate.
func NewGate() *Gate {
	g := &Gate{killed: make(chan struct{})}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Killed is closed when the gate is killed.
func (g *Gate) Killed() <-chan struct{} { return g.killed }

// Freeze holds every later Wait until Thaw or Kill.
func (g *Gate) Freeze() {
	g.mu.Lock()
	g.frozen = true
	g.mu.Unlock()
}

// Thaw releases the waiters of a frozen gate.
func (g *Gate) Thaw() {
	g.mu.Lock()
	g.frozen = false
	g.mu.Unlock()
	g.cond.Broadcast()
}

// Kill makes every Wait return false from now on.
func (g *Gate) Kill() {
	g.mu.Lock()
	if !g.dead {
		g.dead = true
		close(g.killed)
	}
	g.mu.Unlock()
	g.cond.Broadcast()
}

// Dead reports whether the gate was killed.
func (g *Gate) Dead() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dead
}

// Wait blocks while the gate is frozen and reports whether bytes may pass.
func (g *Gate) Wait() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.frozen && !g.dead {
		g.cond.Wait()
	}
	return !g.dead
}

// Pair is one proxied connection: the worker's side and the server's.
type Pair struct {
	ID     int
	Client net.Conn
	Server net.Conn
	Gate   *Gate
	// Latency is added before each unit the server sends reaches the
	// client (a slow server).
	Latency time.Duration

	cmu, smu  sync.Mutex
	closeOnce sync.Once
	closed    chan struct{}
}

// WriteClient writes to the worker; safe from both pumps.
func (p *Pair) WriteClient(b []byte) error {
	p.cmu.Lock()
	defer p.cmu.Unlock()
	_, err := p.Client.Write(b)
	return err
}

// WriteServer writes to the server; safe from both pumps.
func (p *Pair) WriteServer(b []byte) error {
	p.smu.Lock()
	defer p.smu.Unlock()
	_, err := p.Server.Write(b)
	return err
}

// Slow sleeps for the pair's latency, or until the pair closes.
func (p *Pair) Slow() {
	if p.Latency <= 0 {
		return
	}
	t := time.NewTimer(p.Latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.closed:
	}
}

// Close closes both sides once.
func (p *Pair) Close() {
	p.closeOnce.Do(func() {
		close(p.closed)
		p.Client.Close()
		p.Server.Close()
	})
}

// Closed is closed when the pair is.
func (p *Pair) Closed() <-chan struct{} { return p.closed }

// Pumps are a protocol's two directions over one pair. Each returns when
// its side's read fails or the protocol ends; the pair is then closed.
type Pumps interface {
	ClientToServer(p *Pair) error
	ServerToClient(p *Pair) error
	// Done is called once both pumps returned.
	Done(p *Pair)
}

// Config is one listener.
type Config struct {
	// Dial opens a connection to the real server.
	Dial func(ctx context.Context) (net.Conn, error)
	// Gate returns the gate of the worker instance that owns the
	// listener now.
	Gate func() *Gate
	// Pumps returns a protocol's pumps for a new pair.
	Pumps func(p *Pair) Pumps
	// Latency is added to every unit from the server.
	Latency time.Duration
	// OnError learns of a failure that ended a pair other than a close
	// (a dial error); may be nil.
	OnError func(error)
}

// Listener accepts a worker's connections on loopback and proxies them.
type Listener struct {
	ln  net.Listener
	cfg Config

	mu     sync.Mutex
	pairs  map[*Pair]struct{}
	nextID int
	closed bool
	// refuseUntil: a connection accepted before then is closed at once,
	// by the clock now (time.Now; a test's own).
	refuseUntil time.Time
	now         func() time.Time
	wg          sync.WaitGroup
}

// Listen starts a listener on 127.0.0.1 at a free port.
func Listen(cfg Config) (*Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	l := &Listener{ln: ln, cfg: cfg, pairs: map[*Pair]struct{}{}, now: time.Now}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Addr is the host:port workers connect to.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Port is the listener's port.
func (l *Listener) Port() int { return l.ln.Addr().(*net.TCPAddr).Port }

func (l *Listener) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go l.serve(c)
	}
}

func (l *Listener) serve(c net.Conn) {
	defer l.wg.Done()
	l.mu.Lock()
	refused := l.now().Before(l.refuseUntil)
	l.mu.Unlock()
	if refused {
		c.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	s, err := l.cfg.Dial(ctx)
	cancel()
	if err != nil {
		c.Close()
		if l.cfg.OnError != nil {
			l.cfg.OnError(fmt.Errorf("proxy dial upstream: %w", err))
		}
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	l.nextID++
	p := &Pair{ID: l.nextID, Client: c, Server: s, Gate: l.cfg.Gate(), Latency: l.cfg.Latency, closed: make(chan struct{})}
	l.pairs[p] = struct{}{}
	l.mu.Unlock()

	pumps := l.cfg.Pumps(p)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = pumps.ClientToServer(p)
		p.Close()
	}()
	go func() {
		defer wg.Done()
		_ = pumps.ServerToClient(p)
		p.Close()
	}()
	// A killed worker's connections must go at once, so the broker
	// requeues its unacked deliveries now and not at a TCP timeout.
	go func() {
		select {
		case <-p.closed:
		case <-p.Gate.Killed():
			p.Close()
		}
	}()
	wg.Wait()
	pumps.Done(p)
	l.mu.Lock()
	delete(l.pairs, p)
	l.mu.Unlock()
}

// CloseConns drops every open connection (a network failure).
func (l *Listener) CloseConns() {
	l.mu.Lock()
	ps := make([]*Pair, 0, len(l.pairs))
	for p := range l.pairs {
		ps = append(ps, p)
	}
	l.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
}

// Refuse cuts the worker off from the server for d, as a network
// partition does: every open connection drops now, and one opened before
// d has passed is closed as soon as it is accepted.
func (l *Listener) Refuse(d time.Duration) {
	l.mu.Lock()
	l.refuseUntil = l.now().Add(d)
	l.mu.Unlock()
	l.CloseConns()
}

// Close stops accepting, drops every connection and waits for the pumps.
func (l *Listener) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.ln.Close()
	l.CloseConns()
	l.wg.Wait()
}

// IsClosed reports whether err is what reading a closed connection gives.
func IsClosed(err error) bool {
	return err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
