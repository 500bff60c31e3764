package logs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openWaits reports whether a thread of this process waits in the open of
// a FIFO for its writer (the kernel's wait_for_partner).
func openWaits() bool {
	tasks, _ := filepath.Glob("/proc/self/task/*/wchan")
	for _, p := range tasks {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == "wait_for_partner" {
			return true
		}
	}
	return false
}

// A scan or a follow waiting in the open of a FIFO no writer comes to ends
// with its context (a signal): the open is a system call no signal
// interrupts, left behind.
func TestFIFOWithoutWriterEnds(t *testing.T) {
	for _, follow := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "worker.pipe")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skip("no FIFO here:", err)
		}
		src, err := File(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			var err error
			if follow {
				_, err = Follow(ctx, []Source{src}, FollowOptions{}, func(*Event) error { return nil })
			} else {
				_, err = Scan(ctx, []Source{src}, Options{}, func(*Event) error { return nil })
			}
			done <- err
		}()
		// The event: the open waits for a writer (the guard: /proc may not
		// show kernel waits, wchan 0).
		guard := time.After(time.Minute)
		for !openWaits() {
			select {
			case err := <-done:
				t.Fatalf("ended before its open waited: %v", err)
			case <-guard:
				cancel()
				t.Skip("no thread shows wait_for_partner in /proc/self/task/*/wchan")
			case <-time.After(time.Millisecond):
			}
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("follow %v: got %v", follow, err)
		}
		// The open left behind ends here, when a writer comes and goes.
		if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
	}
}
