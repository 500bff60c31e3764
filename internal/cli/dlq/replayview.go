package dlq

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
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
	read := fmt.Sprintf("Read %s %s", english.Number(int64(c.Read)), english.Plural(c.Read, "message", "messages"))
	if res.File == "" {
		read += fmt.Sprintf(" (%s at the start)", english.Number(int64(res.AtStart.Messages)))
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
			t.Row(d.Kind, d.Target.String(), exists, english.Number(int64(d.Messages)), bytesText(d.Bytes), d.Reasons)
		}
		if err := t.Render(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if res.DryRun {
		would := 0
		for _, d := range res.Destinations {
			if d.Kind == "replay" {
				would += d.Messages
			}
		}
		fmt.Fprintf(w, "Would replay %s, park %s; leave %s.\n",
			english.Number(int64(would)), english.Number(int64(parkCount(res))), leftText(c))
		fmt.Fprintf(w, "Nothing was published: add --yes to replay.\n")
		if res.File == "" {
			fmt.Fprintf(w, "%s\n", th.Faint(readNote(dlqread.Result{Read: c.Read, Quorum: res.Quorum})))
		}
		return nil
	}
	if res.File != "" {
		// No DLQ is involved: nothing to ack, nothing left behind.
		fmt.Fprintf(w, "Replayed %s (confirmed), parked %s, already done %s.\n",
			english.Number(int64(c.Replayed)), english.Number(int64(c.Parked)), english.Number(int64(c.AlreadyDone)))
		if c.Left() > 0 {
			fmt.Fprintf(w, "Not replayed: %s.\n", leftText(c))
		}
	} else {
		fmt.Fprintf(w, "Replayed %s (confirmed, then acked in the DLQ), parked %s, already done %s.\n",
			english.Number(int64(c.Replayed)), english.Number(int64(c.Parked)), english.Number(int64(c.AlreadyDone)))
		fmt.Fprintf(w, "Left in the DLQ: %s.\n", leftText(c))
		if c.Unread > 0 {
			fmt.Fprintf(w, "Not read: %s of the messages counted at the start.\n", english.Number(int64(c.Unread)))
		}
		if c.Unaccounted > 0 {
			fmt.Fprintf(w, "%s %s still in the DLQ that this run did not read after the failover.\n",
				th.Severity(findings.Error, "Not read:"), english.Count(c.Unaccounted, "message", "messages"))
		}
		if c.Arrived > 0 {
			fmt.Fprintf(w, "The DLQ gained at least %s during the run.\n", english.Count(c.Arrived, "message", "messages"))
		}
	}
	fmt.Fprintf(w, "%s msgs/s over %s. Journal: %s\n", fmt.Sprintf("%.0f", res.PerSecond),
		(time.Duration(res.ElapsedMs) * time.Millisecond).String(), journal)
	writeFailovers(w, th, res.Failovers)
	writeDestinationChecks(w, th, res.DestinationChecks)
	if res.Lost != "" {
		fmt.Fprintf(w, "%s %s\n", th.Severity(findings.Error, "Connection lost:"), res.Lost)
	}
	return nil
}

// writeFailovers says, per node lost mid-run, which node took over and
// what the loss left in doubt.
func writeFailovers(w io.Writer, th *report.Theme, evs []replay.FailoverEvent) {
	for _, ev := range evs {
		at := (time.Duration(ev.AtMs) * time.Millisecond).Round(100 * time.Millisecond)
		fmt.Fprintf(w, "%s node %s lost after %s (%s); ", th.Severity(findings.Warn, "Failover:"), ev.Lost, at, ev.Why)
		if ev.GaveUp != "" {
			fmt.Fprintf(w, "not failed over: %s.\n", ev.GaveUp)
			continue
		}
		pause := (time.Duration(ev.PauseMs) * time.Millisecond).Round(100 * time.Millisecond)
		fmt.Fprintf(w, "%s took over %s later; unconfirmed %s, acks not seen applied %s; in doubt after it %s.\n", ev.TookOver, pause,
			english.Number(int64(ev.InDoubt)), english.Number(int64(ev.AcksUnknown)), english.Number(int64(ev.InDoubtAfter)))
	}
}

// writeDestinationChecks says what reading each destination queue
// settled of the messages in doubt (--check-destination).
func writeDestinationChecks(w io.Writer, th *report.Theme, checks []replay.DestCheck) {
	for _, c := range checks {
		fmt.Fprintf(w, "%s %s: ", th.Strong("Destination read:"), c.Queue)
		if c.Skipped != "" {
			fmt.Fprintf(w, "%s; %s stay in doubt.\n", c.Skipped, english.Number(int64(c.InDoubt)))
			continue
		}
		rest := c.InDoubt - c.Found - c.Absent
		fmt.Fprintf(w, "read %s; of %s in doubt, %s there (done), %s never arrived (replayed), %s still in doubt",
			english.Count(c.Read, "message", "messages"), english.Number(int64(c.InDoubt)), english.Number(int64(c.Found)),
			english.Number(int64(c.Absent)), english.Number(int64(rest)))
		if rest > 0 && c.Unknown != "" {
			fmt.Fprintf(w, " (%s)", c.Unknown)
		}
		fmt.Fprintln(w, ".")
	}
}

// leftText lists what was left and why, the reasons that apply only.
func leftText(c replay.Counts) string {
	parts := []string{}
	for _, p := range []struct {
		what string
		n    int
	}{
		{"returned", c.Returned}, {"nacked", c.Nacked}, {"in doubt", c.InDoubt + c.InDoubtEarlier},
		{"destination missing", c.DestinationMissing}, {"not published", c.NotPublished}, {"bounced", c.Bounced}, {"new", c.New},
		{"filtered", c.Filtered}, {"over --max", c.OverMax}, {"no destination", c.NoDestination}, {"already SUCCEEDED", c.SucceededLeft},
	} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", p.what, english.Number(int64(p.n))))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return english.Number(int64(c.Left())) + " (" + strings.Join(parts, ", ") + ")"
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
