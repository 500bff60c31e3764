//go:build unix

package logs

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO named as a file is followed as a stream: its open waits for a
// writer (bound to the context), its lines come as written, and its
// writer's close ends it.
func TestFollowFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	src, err := File(path)
	if err != nil {
		t.Fatal(err)
	}
	f := startFollow(t, []Source{src}, FollowOptions{})
	w, err := os.OpenFile(path, os.O_WRONLY, 0) // returns once the follow has it open
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, jobLine("j1"))
	f.want(t, "j1@"+path+":1")
	io.WriteString(w, jobLine("j2"))
	f.want(t, "j2@"+path+":2")
	w.Close()
	if err := <-f.done; err != nil {
		t.Fatalf("the writer's close ends the follow: %v", err)
	}
	f.done <- nil
}
