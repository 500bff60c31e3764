package dlq

import (
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

func writeExport(w io.Writer, th *report.Theme, data *dlqread.ExportResult) error {
	fmt.Fprintf(w, "%s %s messages (%s of bodies) from queue %s (vhost %s) to %s\n", th.Strong("dlq export:"),
		english.Number(int64(data.Written)), bytesText(data.Bytes), data.Queue, data.Vhost, data.File)
	if data.Drained {
		fmt.Fprintf(w, "Removed them from the queue after the file was synced (--drain).\n")
	} else {
		fmt.Fprintf(w, "%s\n", th.Faint(readNote(data.Read)))
	}
	return nil
}
