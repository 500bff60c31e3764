package proxy

import (
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
