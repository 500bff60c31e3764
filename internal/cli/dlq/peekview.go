package dlq

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/text"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/mattn/go-runewidth"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

func writePeek(w io.Writer, th *report.Theme, data *dlqread.PeekResult, now time.Time, bodyMax int, verbose bool) error {
	fmt.Fprintf(w, "%s queue %s (vhost %s): %d of %d messages\n", th.Strong("dlq peek:"), data.Queue, data.Vhost,
		len(data.Messages), data.Read.AtStart.Messages)
	for i, p := range data.Messages {
		writePeeked(w, th, i+1, p, now, bodyMax, verbose)
	}
	fmt.Fprintf(w, "\n%s\n", th.Faint(readNote(data.Read)))
	return nil
}

func writePeeked(w io.Writer, th *report.Theme, n int, p *dlqread.Peeked, now time.Time, bodyMax int, verbose bool) {
	m := p.Msg
	id := m.Props.MessageID
	if id == "" {
		id = "(no message id)"
	}
	died := ""
	if p.DiedAt != nil {
		died = " " + ago(now, *p.DiedAt)
	}
	poison := ""
	if p.Reason == deadletter.ReasonDeliveryLimit {
		poison = " (poison: requeued until the queue's delivery limit)"
	}
	fmt.Fprintf(w, "\n%s %s: %s in %s%s, %d %s%s\n", th.Strong(fmt.Sprintf("#%d", n)), id, p.Reason, dash(p.Queue), died, p.Deaths,
		english.Plural(p.Deaths, "death", "deaths"), poison)
	if p.Error != "" {
		fmt.Fprintf(w, "  error:    %s (%s)\n", p.Error, classText(th, p.Class))
	} else {
		fmt.Fprintf(w, "  error:    - (%s)\n", classText(th, p.Class))
	}
	fmt.Fprintf(w, "  group:    %s   job type: %s   replayed: %d\n", p.Group, dash(p.JobType), p.ReplayCount)
	if p.Destination != nil {
		fmt.Fprintf(w, "  replay →  %s (from %s)\n", p.Destination, p.Destination.From)
	} else {
		fmt.Fprintf(w, "  replay →  %s\n", th.Severity(findings.Warn, "no destination: needs --to"))
	}
	if len(p.Malformed) > 0 {
		fmt.Fprintf(w, "  %s %s\n", th.Severity(findings.Warn, "malformed:"), strings.Join(p.Malformed, ", "))
	}
	fmt.Fprintf(w, "  props:    %s\n", propsText(&m.Props))
	for _, line := range headerLines(w, m.Props.Headers, verbose) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	fmt.Fprintf(w, "  body:     %s\n", bodyText(w, m.Body, bodyMax, verbose))
}

func propsText(p *deadletter.Properties) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+quoteIfNeeded(v))
		}
	}
	add("content_type", p.ContentType)
	add("content_encoding", p.ContentEncoding)
	if p.DeliveryMode != 0 {
		add("delivery_mode", fmt.Sprint(p.DeliveryMode))
	}
	if p.Priority != 0 {
		add("priority", fmt.Sprint(p.Priority))
	}
	add("correlation_id", p.CorrelationID)
	add("reply_to", p.ReplyTo)
	add("expiration", p.Expiration)
	if !p.Timestamp.IsZero() {
		add("timestamp", p.Timestamp.UTC().Format(time.RFC3339))
	}
	add("type", p.Type)
	add("user_id", p.UserID)
	add("app_id", p.AppID)
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// headerLines shows each header with its AMQP type; x-death compactly
// unless -v, cut to the terminal's width (w's).
func headerLines(w io.Writer, h map[string]any, verbose bool) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for i, k := range keys {
		label := "          "
		if i == 0 {
			label = "headers:  "
		}
		raw, err := deadletter.EncodeValue(h[k])
		v := string(raw)
		if err != nil {
			v = "(" + err.Error() + ")"
		}
		name := quoteIfNeeded(k)
		if !verbose {
			// (the line's indent, label, name and blank before the value)
			v = text.ClipRunes(v, report.Room(w, 2+len(label)+runewidth.StringWidth(name)+1, 160), "...")
		}
		out = append(out, label+name+" "+v)
	}
	if len(out) == 0 {
		out = append(out, "headers:  -")
	}
	return out
}

func bodyText(w io.Writer, b []byte, n int, verbose bool) string {
	enc := "text"
	s := string(b)
	if !utf8.Valid(b) {
		enc = "base64"
		s = base64.StdEncoding.EncodeToString(b)
	}
	head := fmt.Sprintf("(%s, %s)", bytesText(int64(len(b))), enc)
	if verbose {
		return head + " " + report.Cell(s, 0)
	}
	// Control bytes written visibly first, then cut to the display width:
	// a body of NULs is as long on screen as it says, not four times.
	return head + " " + report.Cell(s, report.Room(w, len("  body:     ")+runewidth.StringWidth(head)+1, n))
}

func quoteIfNeeded(s string) string {
	if strings.ContainsAny(s, " \t\r\n\"") || !utf8.ValidString(s) {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return s
}
