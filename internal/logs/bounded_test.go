package logs

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// endless reads like /dev/zero: prefix, then fill bytes for ever; it
// counts what was read.
type endless struct {
	prefix []byte
	fill   []byte // repeated; a single zero byte for /dev/zero
	read   atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	if len(e.prefix) > 0 {
		n = copy(p, e.prefix)
		e.prefix = e.prefix[n:]
	}
	for n < len(p) {
		off := int(e.read.Load()+int64(n)) % len(e.fill)
		n += copy(p[n:], e.fill[off:])
	}
	e.read.Add(int64(n))
	return n, nil
}

// blocking hands out its data, then waits for ever as an idle stdin does;
// waiting is closed once a read waits.
type blocking struct {
	data    []byte
	once    sync.Once
	waiting chan struct{}
	release chan struct{}
}

func newBlocking(data string) *blocking {
	return &blocking{data: []byte(data), waiting: make(chan struct{}), release: make(chan struct{})}
}

func (b *blocking) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	b.once.Do(func() { close(b.waiting) })
	<-b.release
	return 0, io.EOF
}

func lineError(t *testing.T, err error) *LineTooLongError {
	t.Helper()
	var in *problem.Input
	var lt *LineTooLongError
	if !errors.As(err, &in) || !errors.As(err, &lt) {
		t.Fatalf("want the input error of a line too long, got %v", err)
	}
	return lt
}

func TestEndlessInputEndsAtTheLineLimit(t *testing.T) {
	const limit = 1 << 20
	zero := &endless{fill: []byte{0}}
	_, err := Scan(context.Background(), []Source{ReaderSource("-", zero)}, Options{MaxLine: limit}, func(*Event) error { return nil })
	lt := lineError(t, err)
	if lt.Line != 1 || lt.Offset != 0 || lt.Max != limit || lt.Source != "-" {
		t.Fatalf("got %+v", lt)
	}
	if !strings.Contains(err.Error(), "-: line 1, from byte offset 0, runs past 1 MiB without a line end") {
		t.Fatalf("message: %v", err)
	}
	// It stops near the limit: what it read is the limit and the reads
	// in flight, not the stream.
	if n := zero.read.Load(); n > 8*limit {
		t.Fatalf("read %d bytes of an endless stream for a limit of %d", n, limit)
	}
}

func TestOverLongLineNamesItsLineAndOffset(t *testing.T) {
	head := strings.Repeat(`{"event":"acked","jobId":"j1"}`+"\n", 1000)
	for _, name := range []string{"app.log", "app.log.gz"} {
		t.Run(name, func(t *testing.T) {
			body := head + strings.Repeat("x", 3<<20) + "\n" + `{"event":"acked"}` + "\n"
			path := filepath.Join(t.TempDir(), name)
			data := []byte(body)
			if strings.HasSuffix(name, ".gz") {
				data = gzipped(t, data)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := File(path)
			if err != nil {
				t.Fatal(err)
			}
			events := 0
			_, err = Scan(context.Background(), []Source{src}, Options{MaxLine: 1 << 20, ChunkSize: 4 << 10},
				func(*Event) error { events++; return nil })
			lt := lineError(t, err)
			if lt.Line != 1001 || lt.Offset != int64(len(head)) {
				t.Fatalf("got line %d offset %d, want line 1001 offset %d", lt.Line, lt.Offset, len(head))
			}
		})
	}
}

func TestLongLineUnderTheLimitIsRead(t *testing.T) {
	line := `{"event":"acked","jobId":"j1","pad":"` + strings.Repeat("x", 900<<10) + `"}` + "\n"
	src := ReaderSource("-", strings.NewReader(line+line))
	st, err := Scan(context.Background(), []Source{src}, Options{MaxLine: 1 << 20, ChunkSize: 4 << 10}, func(*Event) error { return nil })
	if err != nil || st.Events != 2 {
		t.Fatalf("%v, %d events", err, st.Events)
	}
}

func TestRecordsOverTheLimit(t *testing.T) {
	big := strings.Repeat("y", 2<<20)
	for name, body := range map[string]string{
		"rows.csv":  "jobId,event\nj1,acked\nj2," + big + "\nj3,acked\n",
		"array.log": `[{"jobId":"j1"},{"jobId":"` + big + `"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := File(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Scan(context.Background(), []Source{src}, Options{MaxLine: 1 << 20}, func(*Event) error { return nil })
			if lt := lineError(t, err); lt.Line != 3 && lt.Line != 2 || lt.Offset <= 0 {
				t.Fatalf("got %+v", lt)
			}
		})
	}
}

// A cancel (what a signal does) ends a scan whose input waits for data that
// never comes, and the error says what was read.
func TestCancelEndsAWaitingRead(t *testing.T) {
	in := newBlocking(`{"event":"acked","jobId":"j1"}` + "\n" + `{"event":"acked","jobId":"j2"}` + "\n")
	defer close(in.release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-in.waiting; cancel() }()
	st, err := Scan(ctx, []Source{ReaderSource("-", in)}, Options{}, func(*Event) error { return nil })
	var se *StoppedError
	if !errors.As(err, &se) || !errors.Is(err, context.Canceled) {
		t.Fatalf("want a stopped error, got %v", err)
	}
	// The lines were read, not parsed: a scan parses a chunk once it is
	// full or the input ends.
	if st.Events != 0 || !strings.Contains(err.Error(), "stopped after reading 62 bytes, 2 lines of -") {
		t.Fatalf("%d events; %v", st.Events, err)
	}
}

// A deadline ends an endless stream of valid lines.
func TestDeadlineEndsAnEndlessRead(t *testing.T) {
	in := &endless{fill: []byte(`{"event":"acked","jobId":"j1"}` + "\n")}
	ctx, cancel := context.WithCancelCause(context.Background())
	var events atomic.Int64
	_, err := Scan(ctx, []Source{ReaderSource("-", in)}, Options{}, func(*Event) error {
		if events.Add(1) == 1000 {
			cancel(context.DeadlineExceeded)
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the scan ended by its context, got %v", err)
	}
	if !strings.Contains(err.Error(), "stopped after reading ") {
		t.Fatalf("%v", err)
	}
}

func TestSpoolIsBounded(t *testing.T) {
	dir := t.TempDir()
	t.Run("endless", func(t *testing.T) {
		zero := ReaderSource("-", &endless{fill: []byte{0}})
		_, _, err := Spool(context.Background(), zero, dir, SpoolLimit{Bytes: 64 << 20, MaxLine: 1 << 20})
		if lt := lineError(t, err); lt.Offset != 0 {
			t.Fatalf("got %+v", lt)
		}
	})
	t.Run("over the disk limit", func(t *testing.T) {
		in := &endless{fill: []byte(`{"event":"acked"}` + "\n")}
		_, _, err := Spool(context.Background(), ReaderSource("-", in), dir, SpoolLimit{Bytes: 1 << 20})
		var full *SpoolFullError
		if !errors.As(err, &full) || !strings.Contains(err.Error(), "- is larger than the 1 MiB it may take on disk") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("cancelled while stdin waits", func(t *testing.T) {
		in := newBlocking("{}\n")
		defer close(in.release)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-in.waiting; cancel() }()
		_, _, err := Spool(ctx, ReaderSource("-", in), dir, SpoolLimit{Bytes: 1 << 20})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after reading 3 bytes, 1 line of -") {
			t.Fatalf("got %v", err)
		}
	})
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Fatalf("spool files left: %v", left)
	}
}

func TestLineReader(t *testing.T) {
	in := "a\r\nbb\n" + strings.Repeat("c", 300<<10) + "\nlast"
	lr := NewLineReader(strings.NewReader(in), "x", 0)
	var got []int
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, len(l))
	}
	if len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 300<<10 || got[3] != 4 {
		t.Fatalf("lines %v", got)
	}
	lr = NewLineReader(io.MultiReader(strings.NewReader("ok\n"), bytes.NewReader(make([]byte, 600<<10))), "x", 512<<10)
	if _, err := lr.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := lr.Next()
	if lt := lineError(t, err); lt.Line != 2 || lt.Offset != 3 {
		t.Fatalf("got %+v", lt)
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
