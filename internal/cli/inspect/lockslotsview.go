package inspect

import (
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// The slot map on inspect lock's HTML page, for a Redis Cluster: one row
// per master the scan walked, its hash slots drawn along 0-16383 - read,
// or not read (dashed, in the error colour) - then the same as a table
// (the picture's text equivalent): the master, its slots, the keys it
// held, the nodes its keys were read on, and why any were not read.

const (
	slotLabelW = 200 // the masters' names, left of the bars
	slotBarW   = 640 // 0-16383
	slotRowH   = 24
	slotAxisH  = 20
	allSlots   = 16384
)

// slotX is where slot s starts on the bar.
func slotX(s int64) float64 { return slotLabelW + float64(s)*slotBarW/allSlots }

// slotRowName is a row's master, or what stands for none.
func slotRowName(r lock.SlotsRead) string {
	if r.Master == "" {
		return "no master"
	}
	return r.Master
}

// slotState words a row: read (and where), or not read.
func slotState(r lock.SlotsRead) (class, word string) {
	switch {
	case !r.Read:
		return "unread", "not read"
	case len(r.ReadOn) > 1:
		return "read", "read after a failover"
	}
	return "read", "read"
}

// writeSlotMapHTML draws the slot map; nothing outside a cluster.
func writeSlotMapHTML(w io.Writer, d *lock.Data) {
	if len(d.SlotMap) == 0 {
		return
	}
	summary := slotSummary(d)
	fmt.Fprintf(w, "<section class=\"slots\" aria-labelledby=\"slot-map\">"+
		"<h2 id=\"slot-map\">Cluster: which hash slots the scan read</h2>\n<p>%s.</p>\n",
		report.Escape(summary))
	writeSlotSVG(w, d, summary)
	writeSlotTable(w, d)
	io.WriteString(w, "</section>\n")
}

// slotSummary is the slot map in one sentence: the masters scanned, the
// slots read and not read.
func slotSummary(d *lock.Data) string {
	var read, unread int64
	masters := 0
	for _, r := range d.SlotMap {
		if r.Master != "" {
			masters++
		}
		for _, s := range r.Slots {
			if r.Read {
				read += s.End - s.Start + 1
			} else {
				unread += s.End - s.Start + 1
			}
		}
	}
	summary := fmt.Sprintf("%s scanned; %s of %s hash slots read", english.Count(masters, "master", "masters"), english.Number(read),
		english.Number(allSlots))
	if unread > 0 {
		summary += fmt.Sprintf(", %s not read", english.Number(unread))
	}
	return summary
}

// writeSlotText is the slot map in the terminal (and, through
// report.TextMarkdown, in Markdown): the summary, then per master its
// slots, whether they were read and on which node; nothing outside a
// cluster. Why slots were not read is on the scan's NOT READ lines.
func writeSlotText(w io.Writer, th *report.Theme, d *lock.Data) error {
	if len(d.SlotMap) == 0 {
		return nil
	}
	fmt.Fprintf(w, "%s %s\n", th.Faint("hash slots:"), slotSummary(d))
	t := report.NewTable("MASTER", "SLOTS", "STATE", "READ ON")
	for _, r := range d.SlotMap {
		class, word := slotState(r)
		if class == "unread" {
			word = th.Severity(findings.Error, word)
		}
		t.Row(slotRowName(r), lock.SlotsText(r.Slots), word, orDash(strings.Join(r.ReadOn, " then ")))
	}
	return t.Render(w)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeSlotSVG is the picture: a bar per master along the slots.
func writeSlotSVG(w io.Writer, d *lock.Data, summary string) {
	width, height := slotLabelW+slotBarW+20, slotAxisH+slotRowH*len(d.SlotMap)+4
	fmt.Fprintf(w, "<figure class=\"slotmap\"><div class=\"scroll\"><svg class=\"slotmap\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "+
		"role=\"img\" aria-label=\"%s\"><title>hash slots by master</title>\n", width, height, width, height, report.Escape(summary))
	for _, s := range []int64{0, 4096, 8192, 12288, allSlots - 1} {
		x := slotX(s)
		anchor := "middle"
		if s == allSlots-1 {
			anchor = "end"
			x = slotX(allSlots)
		}
		fmt.Fprintf(w, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"+
			"<text class=\"tick\" x=\"%.1f\" y=\"12\" text-anchor=\"%s\">%d</text>\n",
			x, slotAxisH-4, x, height, x, anchor, s)
	}
	for i, r := range d.SlotMap {
		y := slotAxisH + i*slotRowH
		class, word := slotState(r)
		fmt.Fprintf(w, "<g class=\"slot-row %s\" data-master=\"%s\"><text class=\"lane-name\" x=\"4\" y=\"%d\">%s</text>\n", class,
			report.Escape(r.Master), y+16, report.Escape(short(slotRowName(r), 28)))
		for _, s := range r.Slots {
			x0, x1 := slotX(s.Start), slotX(s.End+1)
			fmt.Fprintf(w, "<rect class=\"slots %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" data-start=\"%d\" data-end=\"%d\">"+
				"<title>slots %s of %s: %s</title></rect>\n", class, x0, y+4, max(x1-x0, 1), slotRowH-8, s.Start, s.End,
				report.Escape(s.String()), report.Escape(slotRowName(r)), word)
		}
		io.WriteString(w, "</g>\n")
	}
	io.WriteString(w, "</svg></div><figcaption class=\"legend\"><span><span class=\"sw sw-read\"></span>read</span>"+
		"<span><span class=\"sw sw-unread\"></span>not read</span></figcaption></figure>\n")
}

// writeSlotTable is the picture in words.
func writeSlotTable(w io.Writer, d *lock.Data) {
	keys := map[string]int64{}
	for _, s := range d.Servers {
		keys[s.Node] = s.Keys
	}
	io.WriteString(w, "<div class=\"scroll\"><table class=\"slotmap\"><thead><tr><th scope=\"col\">master</th><th scope=\"col\">slots</th>"+
		"<th class=\"num\" scope=\"col\">keys</th><th scope=\"col\">read on</th><th scope=\"col\">state</th></tr></thead><tbody>\n")
	for _, r := range d.SlotMap {
		class, word := slotState(r)
		badge := "pass"
		if class == "unread" {
			badge = "error"
		}
		n, ok := keys[r.Master]
		count := "-"
		if ok {
			count = english.Number(n)
		}
		readOn := strings.Join(r.ReadOn, " then ")
		if readOn == "" {
			readOn = "-"
		}
		why := ""
		if r.Why != "" {
			why = "<div class=\"note\">" + report.Escape(r.Why) + "</div>"
		}
		fmt.Fprintf(w, "<tr><th scope=\"row\"><code>%s</code></th><td>%s</td><td class=\"num\">%s</td><td>%s</td>"+
			"<td><span class=\"badge %s\">%s</span>%s</td></tr>\n", report.Escape(slotRowName(r)), rangesHTML(r.Slots), count,
			report.Escape(readOn), badge, word, why)
	}
	io.WriteString(w, "</tbody></table></div>\n")
}

// rangesHTML lists slot ranges, each kept on one line.
func rangesHTML(rs []lock.SlotRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = "<span class=\"nobr\">" + report.Escape(r.String()) + "</span>"
	}
	return strings.Join(parts, ", ")
}
