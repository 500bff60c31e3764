package dlq

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/spf13/cobra"
)

// ExportOptions are one `dlq export` run.
type ExportOptions struct {
	Factory *cmdutil.Factory
	Queue   string
	Out     string
	readFlags
	Drain bool
	Yes   bool
	Force bool
}

// NewCmdExport is `dupctl dlq export`.
func NewCmdExport(f *cmdutil.Factory, runF func(*ExportOptions) error) *cobra.Command {
	o := &ExportOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "export --queue QUEUE --out FILE",
		Short: "Write every dead letter to a lossless JSON Lines file",
		Long: `Export writes each message of the DLQ as one JSON line: every property, the
headers with their AMQP types ({"int64": 3}, {"timestamp": ...}, byte arrays,
decimals, nested tables and arrays all survive), and the body as text when
it is UTF-8, base64 otherwise. 'dlq replay --from-file' publishes such a file
back byte for byte; the format is in docs/dlq.md.

Non-destructive by default: the messages are requeued after the file is
written (they are then marked redelivered; see 'dupctl dlq --help').
--drain --yes removes them from the queue, and only after the file has been
written and synced to disk.

The records go to FILE.partial until the export is whole, then it is renamed
FILE: an interrupted or failed export never leaves a file under the name
asked for (FILE.partial holds what was written).` + readExitStatus,
		Example: `  dupctl dlq export --queue orders.dlq --out orders-dlq.jsonl
  dupctl dlq export --queue orders.dlq --out - | jq -c '.properties.message_id'
  dupctl dlq export --queue orders.dlq --out archive.jsonl --drain --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireQueue(f, cmd, &o.Queue); err != nil {
				return err
			}
			if o.Out == "" {
				return exitcode.UsageErrorf("--out is required (a file, or - for stdout)")
			}
			if o.Drain && !o.Yes {
				return exitcode.UsageErrorf("--drain removes the exported messages from the queue: add --yes to do it")
			}
			if o.Drain && o.Out == "-" {
				return exitcode.UsageErrorf("--drain needs a file to sync before acking, not stdout")
			}
			if o.Out == "-" && f.Global.Output != report.FormatTable {
				return exitcode.UsageErrorf("--out - writes records to stdout: it cannot be combined with -o %s", f.Global.Output)
			}
			if err := o.checkRead(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runExport(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Queue, "queue", "q", "", "the dead-letter queue")
	fs.StringVar(&o.Out, "out", "", "file to write (- for stdout)")
	o.registerRead(fs, "export at most this many messages (default: all counted at the start)")
	fs.BoolVar(&o.Drain, "drain", false, "remove the exported messages from the queue after the file is synced (needs --yes)")
	fs.BoolVar(&o.Yes, "yes", false, "confirm --drain")
	fs.BoolVar(&o.Force, "force", false, "overwrite --out if it exists")
	return cmd
}

type stdoutFile struct{ io.Writer }

func (stdoutFile) Sync() error { return nil }

func runExport(ctx context.Context, o *ExportOptions) error {
	f := o.Factory
	c, err := amqpConn(f, "export")
	if err != nil {
		return err
	}
	var w dlqread.SyncWriter = stdoutFile{f.IO.Out}
	partial := ""
	if o.Out != "-" {
		fh, path, err := openPartial(o.Out, o.Force)
		if err != nil {
			return err
		}
		defer fh.Close()
		w, partial = fh, path
	}
	data, err := dlqread.Export(ctx, dlqread.ExportDeps{Deps: c.readDeps(f, "dlq export", o.failoverFlag), Out: w}, dlqread.ExportOptions{
		Read: o.readOptions(o.Queue), Vhost: c.vhost, File: o.Out, Drain: o.Drain,
	})
	if err != nil {
		if partial != "" {
			removeIfEmpty(partial) // nothing exported: no partial file to keep
		}
		return err
	}
	if data.Read.Lost != "" || data.Read.Repeats > 0 || data.Read.Untrusted() {
		return exportLost(ctx, o, data, partial)
	}
	if partial != "" && !data.Complete() {
		// Short of what was counted (DLQ_EXPORT_INCOMPLETE): never under
		// the name asked for either.
		data.File = partial
	}
	if partial != "" && data.Complete() {
		// Only a whole export gets the name asked for (issue 27: an
		// interrupted export left a file cut mid-line under that name).
		if err := os.Rename(partial, o.Out); err != nil {
			return exitcode.InputError(fmt.Errorf("--out: %w", err), "the records are in "+partial)
		}
	}
	if o.Out == "-" {
		return nil // stdout carries the records
	}
	return f.Emit(ctx, report.Document{Report: data.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeExport(w, th, data)
	}})
}

// exportLost ends an export whose connection was lost mid-read: the
// records read before the loss stay in the partial file (never renamed to
// the name asked for) or went to stdout, and the summary and the error say
// how many of how many.
func exportLost(ctx context.Context, o *ExportOptions, data *dlqread.ExportResult, partial string) error {
	where := fmt.Sprintf("stdout holds %d records:", data.Written)
	var emitErr error
	if partial != "" {
		where = fmt.Sprintf("%s holds %d records (it is not renamed %s):", partial, data.Written, o.Out)
		emitErr = o.Factory.Emit(ctx, report.Document{Report: data.Report(), Text: func(w io.Writer, th *report.Theme) error {
			return writeExport(w, th, data)
		}})
	}
	return lostOr(readLost(data.Read, where), emitErr)
}

// openPartial creates the file an export writes to until it is whole:
// OUT.partial beside OUT, renamed to OUT at the end. An OUT that exists is
// refused unless force; a partial file of an earlier, interrupted export is
// replaced.
func openPartial(out string, force bool) (*os.File, string, error) {
	if _, err := os.Lstat(out); err == nil && !force {
		return nil, "", exitcode.InputError(fmt.Errorf("--out %s exists", out), "choose another file or pass --force")
	}
	path := out + ".partial"
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, "", exitcode.InputError(fmt.Errorf("--out: %w", err), "check the path")
	}
	return fh, path, nil
}
