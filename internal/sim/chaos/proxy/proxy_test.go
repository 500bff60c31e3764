package proxy

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestGate: a frozen gate holds waiters until thawed; a killed gate
// releases them with false, and Killed is closed.
func TestGate(t *testing.T) {
	g := NewGate()
	if !g.Wait() {
		t.Fatal("an open gate refused")
	}
	g.Freeze()
	got := make(chan bool)
	go func() { got <- g.Wait() }()
	select {
	case <-got:
		t.Fatal("a frozen gate let a waiter through")
	case <-time.After(50 * time.Millisecond):
	}
	g.Thaw()
	if !<-got {
		t.Fatal("a thawed gate refused")
	}
	g.Freeze()
	go func() { got <- g.Wait() }()
	g.Kill()
	if <-got {
		t.Fatal("a killed gate let a frozen waiter through")
	}
	select {
	case <-g.Killed():
	default:
		t.Fatal("Killed not closed")
	}
	g.Kill() // twice is fine
	if g.Wait() || !g.Dead() {
		t.Fatal("a dead gate let bytes pass")
	}
}

// echoPumps copy bytes both ways.
type echoPumps struct{}

func (echoPumps) ClientToServer(p *Pair) error { _, err := io.Copy(p.Server, p.Client); return err }
func (echoPumps) ServerToClient(p *Pair) error { _, err := io.Copy(p.Client, p.Server); return err }
func (echoPumps) Done(*Pair)                   {}

// TestRefuse: a partition drops the open connections and closes new ones
// at once until it ends; then connections work again.
func TestRefuse(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	gate := NewGate()
	ln, err := Listen(Config{Dial: DialTCP(up.Addr().String()), Gate: func() *Gate { return gate },
		Pumps: func(*Pair) Pumps { return echoPumps{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	echo := func() error {
		var d net.Dialer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := d.DialContext(ctx, "tcp", ln.Addr())
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		b := make([]byte, 4)
		_, err = io.ReadFull(c, b)
		return err
	}
	if err := echo(); err != nil {
		t.Fatalf("before the partition: %v", err)
	}
	// The partition is timed by the listener's clock: the test moves it,
	// so a slow machine cannot outlast the partition before a dial.
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	ln.mu.Lock()
	ln.now = func() time.Time { return time.Unix(0, clock.Load()) }
	ln.mu.Unlock()
	ln.Refuse(300 * time.Millisecond)
	if err := echo(); err == nil {
		t.Fatal("a connection during the partition worked")
	}
	clock.Add(int64(299 * time.Millisecond))
	if err := echo(); err == nil {
		t.Fatal("a connection 299ms into a 300ms partition worked")
	}
	clock.Add(int64(time.Millisecond))
	if err := echo(); err != nil {
		t.Fatalf("after the partition: %v", err)
	}
}
