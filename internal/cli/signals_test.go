package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
)

// syncBuffer is written by the signal goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecondInterruptQuits: the first Ctrl-C cancels the command's context
// and nothing else; the second quits with 130 and says why (issue 39: a
// second Ctrl-C was swallowed while the first one's cleanup ran).
func TestSecondInterruptQuits(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	var errOut syncBuffer
	exited := make(chan int, 1)
	ctx, stop := onSignals(context.Background(), sigs, &errOut, func(code int) { exited <- code })
	defer stop()

	sigs <- os.Interrupt
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first interrupt did not cancel the context")
	}
	select {
	case code := <-exited:
		t.Fatalf("the first interrupt quit (exit %d): it should only cancel", code)
	case <-time.After(50 * time.Millisecond):
	}
	if errOut.String() != "" {
		t.Fatalf("the first interrupt wrote %q", errOut.String())
	}

	sigs <- syscall.SIGTERM
	select {
	case code := <-exited:
		if code != exitcode.Interrupted {
			t.Errorf("second signal: exit %d, want %d", code, exitcode.Interrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second signal did not quit")
	}
	if !strings.Contains(errOut.String(), "terminated again: quitting now") {
		t.Errorf("stderr %q does not say why it quit", errOut.String())
	}
}

// TestStopEndsTheSignalWatcher: once the command returned, a signal no
// longer reaches the watcher (stop ends its goroutine).
func TestStopEndsTheSignalWatcher(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	ctx, stop := onSignals(context.Background(), sigs, &syncBuffer{}, func(code int) { exited <- code })
	stop()
	if ctx.Err() == nil {
		t.Fatal("stop left the context running")
	}
	sigs <- os.Interrupt
	sigs <- os.Interrupt
	select {
	case code := <-exited:
		t.Fatalf("signals after stop quit with %d", code)
	case <-time.After(50 * time.Millisecond):
	}
}
