package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A journal killed mid-write ends in a torn line; a resume appends to it.
// Without cutting the fragment first, the resume's start record is glued
// to it and the next resume cannot read the journal.
func TestResumeAfterATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.journal")
	start := `{"t":"start","at":"2026-12-01T12:00:00Z","run":"r1","queue":"q"}` + "\n"
	must(t, os.WriteFile(path, []byte(start+`{"t":"pub","seq":1,"fp":"a"}`+"\n"+`{"t":"ok","se`), 0o600))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	must(t, err)
	must(t, TrimTornLine(f))
	j := New(f, "r1", time.Now)
	j.Add(Record{T: Start, Queue: "q"})
	j.Add(Record{T: OK, Seq: 1})
	must(t, j.Sync())
	must(t, f.Close())
	f, err = os.Open(path)
	must(t, err)
	defer f.Close()
	st, err := Read(f)
	if err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("resumed journal unreadable: %v\n%s", err, b)
	}
	if st.Count(OutcomeDone) != 1 || !strings.Contains(st.Describe("a"), "done") {
		t.Fatalf("outcome of a: %s", st.Describe("a"))
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), `"se{`) {
		t.Fatalf("the torn fragment is still there:\n%s", b)
	}
}

func TestTrimTornLineLeavesWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	must(t, os.WriteFile(path, []byte("a\nb\n"), 0o600))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err)
	must(t, TrimTornLine(f))
	f.Close()
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Fatalf("complete journal changed: %q", b)
	}
}
