package ttl

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// zeros reads like /dev/zero and counts what it gave.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// A table with no line end is not a table: the read stops at the log
// reader's limit with the input error naming where the row starts.
func TestEndlessRowIsAnInputError(t *testing.T) {
	z := &zeros{}
	in := io.MultiReader(strings.NewReader("job_type,duration_ms\npay,12\n"), z)
	err := ReadCSV(context.Background(), in, "-", TableOptions{}, NewCollector(CollectOptions{}), nil)
	var pi *problem.Input
	var lt *logs.LineTooLongError
	if !errors.As(err, &pi) || !errors.As(err, &lt) || lt.Line != 3 || lt.Offset != 28 {
		t.Fatalf("want a line too long at line 3, byte 28: %v", err)
	}
	if z.n > 2*logs.DefaultMaxLine {
		t.Fatalf("read %d bytes of an endless row", z.n)
	}
}

// A row longer than a table's but under the limit is skipped and counted,
// as before.
func TestLongRowIsSkipped(t *testing.T) {
	in := "job_type,duration_ms\npay,12\npay," + strings.Repeat("9", 3<<20) + "\npay,15\n"
	c := NewCollector(CollectOptions{})
	if err := ReadCSV(context.Background(), strings.NewReader(in), "t.csv", TableOptions{}, c, nil); err != nil {
		t.Fatal(err)
	}
	res := c.Analyze(AnalyzeOptions{MinSamples: 1})
	if res.Runs != 2 || res.Skipped.Rows != 1 || !strings.Contains(res.Skipped.Examples[0], "t.csv:3: line longer than") {
		t.Fatalf("runs %d, skipped %v", res.Runs, res.Skipped)
	}
}

// A cancel ends the read of an endless table and says what was read.
func TestCancelEndsTheTable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rows := &rowsThenCancel{cancel: cancel}
	err := ReadCSV(ctx, rows, "-", TableOptions{}, NewCollector(CollectOptions{}), nil)
	var se *logs.StoppedError
	if !errors.As(err, &se) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after reading ") {
		t.Fatalf("got %v", err)
	}
}

// rowsThenCancel gives rows for ever and cancels once a million bytes
// were read.
type rowsThenCancel struct {
	n      int
	cancel func()
}

func (r *rowsThenCancel) Read(p []byte) (int, error) {
	const row = "pay,12\n"
	n := 0
	for n+len(row) <= len(p) {
		n += copy(p[n:], row)
	}
	r.n += n
	if r.n > 1<<20 {
		r.cancel()
	}
	return n, nil
}
