package dlqread

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// ExportOptions are one `dlq export` run.
type ExportOptions struct {
	Read  Options
	Vhost string
	File  string // the name of Out, for messages
	// Drain acks the exported messages once Out is synced (removing them
	// from the queue); without it they are requeued.
	Drain bool
}

// SyncWriter is what an export writes to (an *os.File): the records are
// synced before a drain acks the messages.
type SyncWriter interface {
	io.Writer
	Sync() error
}

// ExportDeps are a read's dependencies and the file the records go to.
type ExportDeps struct {
	Deps
	Out SyncWriter
}

// ExportResult is what `dlq export` wrote (its JSON data).
type ExportResult struct {
	Queue   string `json:"queue"`
	Vhost   string `json:"vhost,omitempty"`
	File    string `json:"file"`
	Read    Result `json:"read"`
	Written int    `json:"written"`
	Bytes   int64  `json:"body_bytes"`
	Drained bool   `json:"drained"`
}

// rewinder is an Out that a read again can start over (an *os.File).
type rewinder interface {
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// noRewind is why an export to a stream is not read again after losing its
// node: the records already written cannot be taken back, and a second
// read would write them again.
const noRewind = "the records already went to a stream, which cannot take them back (a file can: export to one)"

// Export writes every message read to Out as export records, syncs it,
// and requeues the messages - or, with Drain, acks them only after the
// sync succeeded. A read that loses its node starts over through another
// (the file emptied first, so it never holds a message twice); an Out
// that cannot be emptied is not read again.
func Export(ctx context.Context, d ExportDeps, o ExportOptions) (*ExportResult, error) {
	if err := o.Read.check(); err != nil {
		return nil, err
	}
	d.defaults()
	data := &ExportResult{Queue: o.Read.Queue, Vhost: o.Vhost, File: o.File}
	bw := bufio.NewWriterSize(d.Out, 1<<20)
	at := d.Now()
	write := func(m *deadletter.Message) error {
		rec, err := m.MarshalRecord(at, o.Read.Queue, o.Vhost)
		if err != nil {
			return fmt.Errorf("message %d: %w", data.Written+1, err)
		}
		if _, err := bw.Write(append(rec, '\n')); err != nil {
			return fmt.Errorf("write %s: %w", o.File, err)
		}
		data.Written++
		data.Bytes += int64(len(m.Body))
		return nil
	}
	commit := func() error {
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", o.File, err)
		}
		if err := d.Out.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", o.File, err)
		}
		return nil
	}
	rw, ok := d.Out.(rewinder)
	noFailover := ""
	if !ok {
		noFailover = noRewind
	}
	reads := 0
	res, err := failingOver(ctx, d.Deps, o.Read.Queue, noFailover, func(rd Deps) (Result, error) {
		if reads++; reads > 1 {
			if err := rewind(bw, rw, d.Out); err != nil {
				return Result{}, fmt.Errorf("empty %s to read again: %w", o.File, err)
			}
			data.Written, data.Bytes = 0, 0
		}
		return readQueue(ctx, rd, o.Read, write, o.Drain, commit)
	})
	if err != nil {
		return nil, err
	}
	if res.Lost != "" {
		// The records read before the loss reach the file (never renamed
		// as whole: the caller keeps its partial name) and nothing is acked.
		if err := bw.Flush(); err != nil {
			return nil, fmt.Errorf("write %s: %w", o.File, err)
		}
	}
	data.Read, data.Drained = res, o.Drain && res.Acked > 0
	return data, nil
}

// rewind drops what a lost read wrote: the buffer's records, then the
// file's.
func rewind(bw *bufio.Writer, rw rewinder, out io.Writer) error {
	bw.Reset(out)
	if err := rw.Truncate(0); err != nil {
		return err
	}
	_, err := rw.Seek(0, io.SeekStart)
	return err
}

// Complete reports whether the export holds every message it meant to
// read: a file that is not is never given the name asked for. A count not
// trusted (Result.Untrusted) is not the queue's, so no file read to it is
// whole.
func (x *ExportResult) Complete() bool {
	return x.Read.Lost == "" && !x.Read.Untrusted() && x.Written >= x.Read.Target
}

// Report has the findings of the read (consumers, quorum reads, malformed
// headers).
// An export that wrote fewer messages than it counted at the start is an
// error: the file is not the queue.
func (x *ExportResult) Report() *findings.Report {
	rep := readReport("dlq export", x, x.Queue, x.Read)
	rep.Check(ruleExportIncomplete.Code)
	switch {
	case x.Written < x.Read.Target:
		rep.Add(ruleExportIncomplete.New("file "+x.File,
			fmt.Sprintf("%d of the %d messages counted at the start were written", x.Written, x.Read.Target)))
	case x.Read.Untrusted():
		rep.Add(ruleExportIncomplete.New("file "+x.File,
			fmt.Sprintf("%d messages were written, but the queue held %d before the node was lost: the count is not trusted",
				x.Written, x.Read.CountBefore)))
	}
	return rep
}
