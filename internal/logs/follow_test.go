package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seen is an event as a follow handed it over.
type seen struct {
	job, where string
}

// following runs Follow in a goroutine; its events arrive on the channel,
// its end on done.
type following struct {
	events chan seen
	done   chan error
	stats  Stats
	cancel context.CancelFunc
}

func startFollow(t *testing.T, srcs []Source, o FollowOptions) *following {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &following{events: make(chan seen, 1<<16), done: make(chan error, 1), cancel: cancel}
	if o.Poll == 0 {
		o.Poll = 5 * time.Millisecond
	}
	if o.Settle == 0 {
		o.Settle = 5 * time.Millisecond
	}
	go func() {
		st, err := Follow(ctx, srcs, o, func(e *Event) error {
			f.events <- seen{job: strings.Clone(e.JobID()), where: e.Where()}
			return nil
		})
		f.stats = st
		f.done <- err
	}()
	t.Cleanup(func() { cancel(); <-f.done })
	return f
}

// next waits for the next event (a hang fails the test: not a timing).
func (f *following) next(t *testing.T) seen {
	t.Helper()
	select {
	case e := <-f.events:
		return e
	case err := <-f.done:
		f.done <- err
		t.Fatalf("the follow ended (%v) before the next event", err)
	case <-time.After(time.Minute):
		t.Fatal("no event in a minute")
	}
	return seen{}
}

func (f *following) want(t *testing.T, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if e := f.next(t); e.job+"@"+e.where != w {
			t.Fatalf("got %s@%s, want %s", e.job, e.where, w)
		}
	}
}

func jobLine(id string) string { return fmt.Sprintf(`{"event":"acked","jobId":%q}`+"\n", id) }

// A stream is read line by line as it comes, before it ends: the first
// line is read once its format settles, without waiting for more.
func TestFollowStdin(t *testing.T) {
	pr, pw := io.Pipe()
	f := startFollow(t, []Source{ReaderSource("-", pr)}, FollowOptions{})
	io.WriteString(pw, jobLine("j1"))
	f.want(t, "j1@-:1")
	io.WriteString(pw, jobLine("j2")+jobLine("j3"))
	f.want(t, "j2@-:2", "j3@-:3")
	io.WriteString(pw, `{"event":"acked","jobId":"j4"}`) // the last line, without its line end
	pw.Close()
	f.want(t, "j4@-:4")
	if err := <-f.done; err != nil {
		t.Fatalf("a stream's end ends the follow: %v", err)
	}
	f.done <- nil
	if f.stats.Lines != 4 || f.stats.Events != 4 || len(f.stats.Formats) != 1 || f.stats.Formats[0].Format != "json" {
		t.Fatalf("stats %+v", f.stats)
	}
}

// A cancel (what a signal does) ends a follow whose stdin waits for data.
func TestFollowCancelWhileStdinWaits(t *testing.T) {
	in := newBlocking(jobLine("j1"))
	defer close(in.release)
	f := startFollow(t, []Source{ReaderSource("-", in)}, FollowOptions{})
	f.want(t, "j1@-:1")
	<-in.waiting
	f.cancel()
	if err := <-f.done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	f.done <- nil
}

// A file is followed as tail -F does: appended lines, a truncation (read
// again from its start), a rename with lines written to the old file after
// it, and the file created anew.
func TestFollowFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	write := func(name, s string, flag int) {
		t.Helper()
		fh, err := os.OpenFile(name, flag|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.WriteString(s); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	write(path, jobLine("j1")+jobLine("j2"), os.O_CREATE|os.O_TRUNC)
	src, err := File(path)
	if err != nil {
		t.Fatal(err)
	}
	f := startFollow(t, []Source{src}, FollowOptions{})
	f.want(t, "j1@"+path+":1", "j2@"+path+":2")
	write(path, jobLine("j3"), os.O_APPEND)
	f.want(t, "j3@"+path+":3")
	// copytruncate: the file is emptied and written again.
	write(path, jobLine("t1"), os.O_TRUNC)
	f.want(t, "t1@"+path+":1")
	// rename and create: a line the old file got after the rename, then
	// the new file's.
	old := filepath.Join(dir, "app.log.1")
	if err := os.Rename(path, old); err != nil {
		t.Fatal(err)
	}
	write(old, jobLine("t2"), os.O_APPEND)
	write(path, jobLine("n1"), os.O_CREATE|os.O_EXCL)
	f.want(t, "t2@"+path+":2", "n1@"+path+":1")
	write(path, jobLine("n2"), os.O_APPEND)
	f.want(t, "n2@"+path+":2")
}

// A line over the limit is skipped and counted, whether it comes whole or
// in pieces, and the follow reads on with the lines' numbers kept.
func TestFollowSkipsOverLongLines(t *testing.T) {
	pr, pw := io.Pipe()
	f := startFollow(t, []Source{ReaderSource("-", pr)}, FollowOptions{Options: Options{MaxLine: 1 << 10}})
	io.WriteString(pw, jobLine("j1")+`{"pad":"`+strings.Repeat("x", 5<<10)+`"}`+"\n"+jobLine("j3"))
	f.want(t, "j1@-:1", "j3@-:3")
	for range 10 { // a long line written in many small pieces
		io.WriteString(pw, strings.Repeat("y", 400))
	}
	io.WriteString(pw, "\n"+jobLine("j5"))
	f.want(t, "j5@-:5")
	pw.Close()
	if err := <-f.done; err != nil {
		t.Fatal(err)
	}
	f.done <- nil
	st := f.stats
	if st.Malformed != 2 || len(st.Samples) != 2 || st.Samples[0].Line != 2 || st.Samples[1].Line != 4 ||
		!strings.Contains(st.Samples[0].Reason, "longer than 1 KiB, skipped") {
		t.Fatalf("stats %+v", st)
	}
}

// An endless stream with no line end (/dev/zero) is skipped as it comes:
// the follow keeps reading in bounded memory until it is cancelled.
func TestFollowEndlessZeros(t *testing.T) {
	zero := &endless{fill: []byte{0}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var st Stats
	go func() {
		var err error
		st, err = Follow(ctx, []Source{ReaderSource("-", zero)}, FollowOptions{Options: Options{MaxLine: 1 << 20}},
			func(*Event) error { return nil })
		done <- err
	}()
	for zero.read.Load() < 64<<20 { // the event: it has read 64 limits' worth
		select {
		case err := <-done:
			t.Fatalf("ended on its own: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || st.Malformed != 1 || st.Lines != 1 {
		t.Fatalf("got %v, %d malformed of %d lines", err, st.Malformed, st.Lines)
	}
}

// A line a container runtime wrote in parts (CRI's P) that never ends is
// dropped once its parts pass the limit: a follow's decoder lives on.
func TestFollowBoundsLinesInParts(t *testing.T) {
	part := "2026-11-03T09:00:00.000000000Z stdout P " + strings.Repeat("x", 300) + "\n"
	in := strings.Repeat(part, 10) + "2026-11-03T09:00:01.000000000Z stdout F the end\n" +
		`2026-11-03T09:00:01.000000000Z stdout F {"event":"acked","jobId":"j1"}` + "\n"
	st, err := Follow(context.Background(), []Source{ReaderSource("-", strings.NewReader(in))},
		FollowOptions{Options: Options{MaxLine: 1 << 10, Format: FormatCRI}}, func(*Event) error { return nil })
	if err != nil || st.Malformed != 1 || st.Events != 1 || !strings.Contains(st.Samples[0].Reason, "written in parts runs past 1 KiB") {
		t.Fatalf("%v %+v", err, st)
	}
}

// A stream's format is chosen from its first lines, as a file's is.
func TestFollowDetectsTheFormat(t *testing.T) {
	in := "time=2026-11-03T09:00:00Z level=info msg=\"charged card\" jobId=j1 orderId=ord-1\n" +
		"time=2026-11-03T09:00:01Z level=info msg=\"charged card\" jobId=j2 orderId=ord-1\n"
	var kinds []Kind
	st, err := Follow(context.Background(), []Source{ReaderSource("-", strings.NewReader(in))}, FollowOptions{},
		func(e *Event) error { kinds = append(kinds, e.Kind); return nil })
	if err != nil || st.Events != 2 || st.Formats[0].Format != "logfmt" || kinds[0] != KindSideEffect {
		t.Fatalf("%v %+v %v", err, st, kinds)
	}
}

// TestFollowRescansGlobs: a file that appears under a followed glob is
// followed from its start (a new pod's log), and a followed file renamed
// to a name the glob also matches (app.log -> app.log.1) is not read again
// under its new name (issue 39: globs were expanded once, at the start).
func TestFollowRescansGlobs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string, flag int) {
		t.Helper()
		fh, err := os.OpenFile(filepath.Join(dir, name), flag|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.WriteString(s); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	write("app.log", jobLine("j1"), os.O_CREATE)
	glob := filepath.Join(dir, "app*")
	srcs, err := Expand([]string{glob}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := startFollow(t, srcs, FollowOptions{Rescan: Rescannable([]string{glob, "-"}), RescanEvery: 10 * time.Millisecond})
	at := func(name string, line int) string { return fmt.Sprintf("%s:%d", filepath.Join(dir, name), line) }
	f.want(t, "j1@"+at("app.log", 1))

	write("app-2.log", jobLine("k1"), os.O_CREATE)
	f.want(t, "k1@"+at("app-2.log", 1))

	if err := os.Rename(filepath.Join(dir, "app.log"), filepath.Join(dir, "app.log.1")); err != nil {
		t.Fatal(err)
	}
	write("app.log", jobLine("n1"), os.O_CREATE|os.O_EXCL)
	f.want(t, "n1@"+at("app.log", 1))
	// A file made after the rotation: the rescan that finds it has listed
	// app.log.1 too.
	write("app-3.log", jobLine("s1"), os.O_CREATE)
	f.want(t, "s1@"+at("app-3.log", 1))
	f.cancel()
	err = <-f.done
	f.done <- err
	if f.stats.Sources != 3 {
		t.Errorf("followed %d sources, want 3 (app.log, app-2.log, app-3.log): the rotated app.log.1 was read again", f.stats.Sources)
	}
	select {
	case e := <-f.events:
		t.Errorf("an event after the last one: %+v", e)
	default:
	}
}

func TestRescannable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.log")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := Rescannable([]string{"-", file, dir, filepath.Join(dir, "*.log")})
	want := []string{dir, filepath.Join(dir, "*.log")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Rescannable = %v, want %v", got, want)
	}
}
