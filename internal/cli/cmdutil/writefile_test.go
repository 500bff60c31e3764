package cmdutil

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Outputs write the path, not over it (issue 27: -o junit=/dev/null as
// root replaced /dev/null with a regular file).
func TestWriteFileWritesThePathNotOverIt(t *testing.T) {
	dir := t.TempDir()

	// A regular file is replaced whole, its mode kept.
	reg := filepath.Join(dir, "report.json")
	if err := os.WriteFile(reg, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(reg, bytesSpool([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(reg); string(b) != "new" {
		t.Fatalf("regular file holds %q", b)
	}
	if st, _ := os.Stat(reg); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 kept", st.Mode().Perm())
	}

	// A symlink stays a symlink; its target gets the report.
	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(link, bytesSpool([]byte("via link"))); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(reg); string(b) != "via link" {
		t.Fatalf("target holds %q", b)
	}

	// A FIFO is written into, not replaced.
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		fh, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(fh)
		fh.Close()
		got <- string(b)
	}()
	if err := writeFile(fifo, bytesSpool([]byte("through the pipe"))); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Fatalf("FIFO reader got %q", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatal("the FIFO was replaced by a file")
	}

	// A character device stays one.
	if err := writeFile("/dev/null", bytesSpool([]byte("discarded"))); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat("/dev/null"); st.Mode()&os.ModeCharDevice == 0 {
		t.Fatal("/dev/null is no longer a character device")
	}

	// A directory is refused, before and at writing.
	if _, _, err := ParseOutputs([]string{"json=" + dir}, ""); err == nil {
		t.Fatal("-o json=DIR accepted")
	}
	if err := writeFile(dir, bytesSpool([]byte("x"))); err == nil {
		t.Fatal("writing over a directory accepted")
	}
	// FORMAT=- is stdout.
	if out, files, err := ParseOutputs([]string{"json=-"}, ""); err != nil || out != "json" || len(files) != 0 {
		t.Fatalf("json=-: %q %v %v", out, files, err)
	}
}
