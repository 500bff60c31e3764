package dlq

import (
	"fmt"
	"io"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/replay"
)

func writeReplay(w io.Writer, th *report.Theme, res *replay.ReplayResult, journal string) error {
	src := "queue " + res.Queue
	if res.File != "" {
		src = "file " + res.File
	}
	title := "dlq replay:"
	if res.DryRun {
		title = "dlq replay (dry run):"
	}
	fmt.Fprintf(w, "%s %s (vhost %s), run %s\n", th.Strong(title), src, res.Vhost, res.Run)
	c := res.Counts
	read := fmt.Sprintf("Read %s messages", iostreams.Count(int64(c.Read)))
	if res.File == "" {
		read += fmt.Sprintf(" (%s at the start)", iostreams.Count(int64(res.AtStart.Messages)))
	}
	fmt.Fprintf(w, "%s; stopped: %s.\n", read, res.StoppedBy)
	if len(res.Destinations) > 0 {
		fmt.Fprintln(w)
		t := report.NewTable("ACTION", "DESTINATION", "EXISTS", "MESSAGES", "BYTES", "REASONS").AlignRight(3, 4)
		for _, d := range res.Destinations {
			exists := "-"
			if d.Exists != nil {
				exists = map[bool]string{true: "yes", false: th.Severity(findings.Error, "no")}[*d.Exists]
			}
			t.Row(d.Kind, d.Target.String(), exists, iostreams.Count(int64(d.Messages)), bytesText(d.Bytes), d.Reasons)
		}
		if err := t.Render(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	left := c.Filtered + c.OverMax + c.NoDestination + c.Bounced + c.InDoubtEarlier
	if res.DryRun {
		would := 0
		for _, d := range res.Destinations {
			if d.Kind == "replay" {
				would += d.Messages
			}
		}
		fmt.Fprintf(w, "Would replay %s, park %s; leave %s (filtered %d, over --max %d, no destination %d, already SUCCEEDED %d).\n",
			iostreams.Count(int64(would)), iostreams.Count(int64(parkCount(res))), iostreams.Count(int64(left+c.Succeeded)),
			c.Filtered, c.OverMax, c.NoDestination, c.Succeeded)
		fmt.Fprintf(w, "Nothing was published: add --yes to replay.\n")
		if res.File == "" {
			fmt.Fprintf(w, "%s\n", th.Faint(readNote(replay.ReadResult{Read: c.Read, Quorum: res.Quorum})))
		}
		return nil
	}
	fmt.Fprintf(w, "Replayed %s (confirmed, then acked in the DLQ), parked %s, already done %s.\n",
		iostreams.Count(int64(c.Replayed)), iostreams.Count(int64(c.Parked)), iostreams.Count(int64(c.AlreadyDone)))
	fmt.Fprintf(w, "Left in the DLQ: returned %d, nacked %d, in doubt %d, filtered %d, over --max %d, no destination %d, bounced %d, SUCCEEDED %d.\n",
		c.Returned, c.Nacked, c.InDoubt+c.InDoubtEarlier, c.Filtered, c.OverMax, c.NoDestination, c.Bounced, c.Succeeded)
	fmt.Fprintf(w, "%s msgs/s over %s. Journal: %s\n", fmt.Sprintf("%.0f", res.PerSecond), (time.Duration(res.ElapsedMs) * time.Millisecond).String(), journal)
	if res.Lost != "" {
		fmt.Fprintf(w, "%s %s\n", th.Severity(findings.Error, "Connection lost:"), res.Lost)
	}
	return nil
}

func parkCount(res *replay.ReplayResult) int {
	n := 0
	for _, d := range res.Destinations {
		if d.Kind == "park" {
			n += d.Messages
		}
	}
	return n
}
