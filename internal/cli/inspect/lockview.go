package inspect

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// The text view of `dupctl inspect lock`: what was scanned, one row per
// key family with a TTL histogram, the per-key table with -v, the servers.

// bars draw histogram heights, from one key to the family's largest bucket.
var bars = []rune("▁▂▃▄▅▆▇█")

// lockDocument is an inspection for every output: the table view, the
// page, and on a cluster the slot map in Markdown.
func lockDocument(rep *findings.Report, d *lock.Data, verbose bool) report.Document {
	doc := report.Document{Report: rep, Text: lockView(d, verbose), HTML: func(w io.Writer) error { return writeLockHTML(w, d) }}
	if len(d.SlotMap) > 0 {
		doc.Markdown = func(w io.Writer) error {
			return report.TextMarkdown(w, func(w io.Writer, th *report.Theme) error { return writeSlotText(w, th, d) })
		}
	}
	return doc
}

func lockView(d *lock.Data, verbose bool) func(io.Writer, *report.Theme) error {
	return func(w io.Writer, th *report.Theme) error {
		if d.Target.Key != "" {
			return oneKeyView(w, th, d)
		}
		writeScanLine(w, th, d)
		if len(d.SlotMap) > 0 {
			fmt.Fprintln(w)
			if err := writeSlotText(w, th, d); err != nil {
				return err
			}
		}
		if len(d.Families) > 0 {
			fmt.Fprintln(w)
			if err := familyTable(w, th, d.Families); err != nil {
				return err
			}
			fmt.Fprintln(w, th.Faint("TTL histogram: remaining TTL <=1s <=10s <=1m <=10m <=1h <=1d >1d, then no TTL; "+
				"CERTAINTY: confirmed (a library's layout or --lock-pattern) or likely (lock word, token, TTL)"))
		}
		if err := writeSkipped(w, th, d, verbose); err != nil {
			return err
		}
		if verbose && len(d.Locks) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, th.Strong(fmt.Sprintf("Keys (%d shown, problems first)", len(d.Locks))))
			if err := keyTable(w, th, d.Locks); err != nil {
				return err
			}
		}
		fmt.Fprintln(w)
		writeServers(w, th, d)
		return nil
	}
}

func writeScanLine(w io.Writer, th *report.Theme, d *lock.Data) {
	where := d.Target.URL
	if d.Target.Cluster {
		where = fmt.Sprintf("%s (cluster, %d masters)", where, len(d.Target.Nodes))
	}
	s := d.Scan
	possible := ""
	if s.Uncertain > 0 {
		possible = fmt.Sprintf(", %s in %s (info only)", count(s.Uncertain, "possible lock", "possible locks"),
			count(int64(len(d.Possible)), "family", "families"))
	}
	fmt.Fprintf(w, "%s %s: %s in %s%s, %s skipped by shape\n", th.Strong("inspect lock"), where,
		count(s.Locks, "lock", "locks"), count(int64(s.Families), "family", "families"), possible,
		count(s.Skipped, "key", "keys"))
	considered := "every key"
	if !slices.Equal(d.Target.Patterns, []string{"*"}) {
		considered = "keys matching " + strings.Join(d.Target.Patterns, " ")
	}
	fmt.Fprintf(w, "%s %s; %s scanned, %s read\n", th.Faint("considered:"), considered, english.Number(s.KeysScanned),
		english.Number(s.KeysMatched))
	if !d.Target.Values {
		fmt.Fprintln(w, th.Faint("values not read (--no-values): no owner or maker from values"))
	}
	if s.Repeats > 0 {
		fmt.Fprintf(w, "%s SCAN returned %s keys twice (the server was resizing); each counted once\n", th.Faint("note:"),
			english.Number(s.Repeats))
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "%s %s\n", th.Faint("note:"), n)
	}
	for _, u := range d.Unread {
		fmt.Fprintf(w, "%s slots %s (master %s): %s\n", th.Severity(findings.Error, "NOT READ"), lock.SlotsText(u.Slots), u.Node, u.Why)
	}
}

// count is n with thousands separators and its noun.
func count(n int64, one, many string) string {
	return english.Number(n) + " " + english.Plural(n, one, many)
}

// writeSkipped says what was read and not taken for a lock: a line, and
// with -v one row per family with why and example names.
func writeSkipped(w io.Writer, th *report.Theme, d *lock.Data, verbose bool) error {
	if len(d.Skipped) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	if !verbose {
		fmt.Fprintf(w, "%s %s in %s (-v lists them with example names)\n", th.Faint("skipped by shape:"),
			english.Count(d.Scan.Skipped, "key", "keys"), english.Count(len(d.Skipped), "family", "families"))
		return nil
	}
	fmt.Fprintln(w, th.Strong(fmt.Sprintf("Skipped by shape (%s keys in %d families)", english.Number(d.Scan.Skipped), len(d.Skipped))))
	t := report.NewTable("FAMILY", "KEYS", "TYPE", "WHY", "EXAMPLE").AlignRight(1).Shorten(0, 4)
	for _, f := range d.Skipped {
		ex := "-"
		if len(f.Examples) > 0 {
			ex = short(printable(f.Examples[0]), 50)
		}
		t.Row(printable(f.Template), english.Number(f.Keys), top(f.Types), top(f.Reasons), ex)
	}
	return t.Render(w)
}

// top names a count map's entries, most common first (two at most).
func top(m map[string]int64) string { return makers(m) }

func familyTable(w io.Writer, th *report.Theme, fams []lock.Family) error {
	t := report.NewTable("FAMILY", "KEYS", "CERTAINTY", "MAKER", "KEY CLASS", "TTL LEFT", "HISTOGRAM", "PROBLEMS").AlignRight(1).
		Shorten(0).Fixed(6)
	for _, f := range fams {
		problems := th.Pass("-")
		if len(f.Problems) > 0 {
			short := make([]string, len(f.Problems))
			for i, p := range f.Problems {
				short[i] = strings.TrimPrefix(p, "LOCK_")
			}
			problems = th.Severity(findings.Warn, strings.Join(short, ","))
		}
		ttl := "-"
		if n := ttlCount(f.TTL); n > 0 {
			ttl = lock.FormatMs(f.TTL.MedianMs) + " (p50)"
			if f.TTL.NoTTL == n {
				ttl = "none"
			}
			if again := lock.RereadShort(f.TTL); again != "" {
				ttl += "; " + again // read again a moment later: no outliers
			}
		}
		t.Row(printable(f.Template), english.Number(f.Keys), f.Certainty, makers(f.Makers), f.KeyClass, ttl, histogram(f.TTL.Histogram),
			problems)
	}
	return t.Render(w)
}

func ttlCount(t lock.TTLStats) int64 {
	var n int64
	for _, b := range t.Histogram {
		n += b.Count
	}
	return n
}

// histogram draws one character per bucket, scaled to the largest.
func histogram(bs []lock.Bucket) string {
	var top int64
	for _, b := range bs {
		top = max(top, b.Count)
	}
	if top == 0 {
		return "-"
	}
	var sb strings.Builder
	for _, b := range bs {
		if b.Count == 0 {
			sb.WriteRune('·')
			continue
		}
		sb.WriteRune(bars[int((b.Count*int64(len(bars)-1)+top-1)/top)])
	}
	return sb.String()
}

// makers names the makers, most common first.
func makers(m map[string]int64) string {
	type mk struct {
		name string
		n    int64
	}
	var list []mk
	for k, v := range m {
		list = append(list, mk{k, v})
	}
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && (list[j].n > list[j-1].n || list[j].n == list[j-1].n && list[j].name < list[j-1].name); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	names := make([]string, 0, 2)
	for i, m := range list {
		if i == 2 {
			names = append(names, "...")
			break
		}
		names = append(names, m.name)
	}
	return strings.Join(names, ",")
}

func keyTable(w io.Writer, th *report.Theme, locks []lock.Lock) error {
	t := report.NewTable("KEY", "TYPE", "CONF", "TTL", "IDLE", "MAKER", "OWNER", "OWNER CLASS", "PROBLEMS").AlignRight(2, 3, 4).
		Shorten(0, 6)
	for _, l := range locks {
		problems := "-"
		if len(l.Problems) > 0 {
			problems = th.Severity(findings.Warn, strings.Join(l.Problems, ","))
		}
		t.Row(short(printable(l.Key), 60), l.Type, fmt.Sprintf("%.2f", l.Confidence), lock.FormatMs(l.PTTLMs), idle(l.IdleS), l.Maker,
			owner(l), l.OwnerClass, problems)
	}
	return t.Render(w)
}

func idle(s int64) string {
	switch {
	case s < 0:
		return "?"
	case s == 0:
		return "0s"
	}
	return lock.FormatMs(s * 1000)
}

func owner(l lock.Lock) string {
	if l.Owner == "" && len(l.Holders) == 0 {
		return "-"
	}
	s := strconv.Quote(short(l.Owner, 40))
	if len(l.Holders) > 1 {
		s += fmt.Sprintf(" +%d", len(l.Holders)-1)
	}
	return s
}

// printable quotes a key that holds control or invalid bytes, so one key
// cannot break the table.
func printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func writeServers(w io.Writer, th *report.Theme, d *lock.Data) {
	for _, s := range d.Servers {
		if s.Info != "ok" {
			fmt.Fprintf(w, "%s %s: INFO refused to this ACL user\n", th.Faint("server"), s.Node)
			continue
		}
		aof := "AOF off"
		if s.AOF {
			aof = "AOF on (appendfsync " + orUnknown(s.AppendFsync) + ")"
		}
		fmt.Fprintf(w, "%s %s: Redis %s %s, maxmemory-policy %s, evicted_keys %d, %s\n", th.Faint("server"), s.Node, s.Version, s.Role,
			s.Policy, s.EvictedKeys, aof)
	}
	for _, n := range d.NotChecked {
		fmt.Fprintf(w, "%s %s: %s\n", th.Faint("not checked:"), strings.Join(n.Checks, ", "), n.Why)
	}
	if d.Target.Key != "" {
		return
	}
	if o := d.Observe; o != nil {
		fmt.Fprintf(w, "%s %d observations %s apart: %d locks idle long enough to check, %d touched in between, %d orphans\n",
			th.Faint("orphan check:"), o.Count, lock.FormatMs(o.IntervalMs), o.Candidates, o.Touched, o.Orphans)
		return
	}
	fmt.Fprintf(w, "%s not run: an orphan needs two looks (--observe 2 --interval 30s)\n", th.Faint("orphan check:"))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func oneKeyView(w io.Writer, th *report.Theme, d *lock.Data) error {
	if len(d.Locks) == 0 {
		return nil
	}
	l := d.Locks[0]
	t := &rows{}
	t.Row("key", printable(l.Key))
	t.Row("family", printable(l.Family))
	switch l.Certainty {
	case "confirmed", "likely":
		t.Row("type", fmt.Sprintf("%s, %s made by %s (%s)", l.Type, l.Role, l.Maker, l.Certainty))
	case "possible":
		t.Row("type", fmt.Sprintf("%s, possibly a %s by its shape: not judged (confirm with --lock-pattern)", l.Type, l.Role))
	default:
		t.Row("type", fmt.Sprintf("%s, not a lock by its shape", l.Type))
	}
	t.Row("confidence", fmt.Sprintf("%.2f (%s)", l.Confidence, strings.Join(l.Signals, ", ")))
	t.Row("ttl left", lock.FormatMs(l.PTTLMs))
	t.Row("idle", idle(l.IdleS))
	if l.Owner != "" {
		t.Row("owner", fmt.Sprintf("%s (%s, ~%d random bits)", strconv.Quote(l.Owner), l.OwnerClass, l.OwnerBits))
	}
	for _, h := range l.Holders {
		t.Row("holder", fmt.Sprintf("%s = %s", strconv.Quote(h.Owner), strconv.Quote(h.Value)))
	}
	if l.Metadata != "" {
		t.Row("metadata", strconv.Quote(l.Metadata))
	}
	if l.AcquiredAt != "" {
		t.Row("acquired at", l.AcquiredAt)
	}
	if len(d.Families) > 0 {
		f := d.Families[0]
		t.Row("key class", f.KeyClass)
		for _, s := range f.Varying {
			t.Row(fmt.Sprintf("segment %d", s.Position+1), fmt.Sprintf("%s %s: %s", s.Placeholder, s.Shape, s.Why))
		}
		t.Row("fencing", f.Fencing)
	}
	for _, r := range t.r {
		fmt.Fprintf(w, "%-12s %s\n", th.Faint(r[0]+":"), r[1])
	}
	fmt.Fprintln(w)
	writeServers(w, th, d)
	return nil
}

// rows are label: value lines.
type rows struct{ r [][2]string }

func (t *rows) Row(label, value string) { t.r = append(t.r, [2]string{label, value}) }

// writeLockHTML draws the lock families as rows: keys, maker, key class,
// confidence, a strip of the remaining-TTL histogram (bar height by
// share, no-TTL keys in the error colour), and what the family's findings
// say; then what was skipped and why, so a missed family is visible.
func writeLockHTML(w io.Writer, d *lock.Data) error {
	fmt.Fprintf(w, "<p>%s keys scanned on %s; %s lock candidates in %s.</p>\n", english.Number(d.Scan.KeysScanned),
		report.Escape(d.Target.URL), english.Number(d.Scan.Locks), english.Count(len(d.Families), "family", "families"))
	writeSlotMapHTML(w, d)
	io.WriteString(w, `<div class="scroll">`+
		`<table class="families"><thead><tr><th scope="col">family</th><th class="num" scope="col">keys</th><th scope="col">maker</th>`+
		`<th scope="col">key</th><th class="num" scope="col">confidence</th><th scope="col">remaining TTL</th>`+
		`<th scope="col">problems</th></tr></thead><tbody>`+"\n")
	for _, fam := range d.Families {
		fmt.Fprintf(w, "<tr><td><code>%s</code></td><td class=\"num\">%s</td><td>%s</td><td>%s</td><td class=\"num\">%.2f</td>"+
			"<td>%s</td><td>%s</td></tr>\n",
			report.Escape(fam.Template), english.Number(fam.Keys), report.Escape(topOf(fam.Makers)), report.Escape(fam.KeyClass), fam.Confidence,
			ttlStrip(fam.TTL), problemLinks(fam.Problems))
	}
	io.WriteString(w, "</tbody></table></div>\n")
	if len(d.Skipped) > 0 {
		io.WriteString(w, "<details><summary>not taken for locks, by their shape</summary><div class=\"scroll\"><table><thead><tr><th "+
			"scope=\"col\">family</th><th class=\"num\" scope=\"col\">keys</th><th scope=\"col\">why</th><th scope=\"col\">examples</th></tr>"+
			"</thead><tbody>\n")
		for _, s := range d.Skipped {
			fmt.Fprintf(w, "<tr><td><code>%s</code></td><td class=\"num\">%s</td><td>%s</td><td>%s</td></tr>\n",
				report.Escape(s.Template), english.Number(s.Keys),
				report.Escape(strings.Join(mapKeys(s.Reasons), "; ")), report.Escape(strings.Join(s.Examples, ", ")))
		}
		io.WriteString(w, "</tbody></table></div></details>\n")
	}
	for _, n := range d.NotChecked {
		fmt.Fprintf(w, "<p class=\"note\">not checked: %s: %s</p>\n", report.Escape(strings.Join(n.Checks, ", ")), report.Escape(n.Why))
	}
	for _, u := range d.Unread {
		fmt.Fprintf(w, "<p class=\"note\"><strong>not read</strong>: slots %s (master %s): %s</p>\n", report.Escape(lock.SlotsText(u.Slots)),
			report.Escape(u.Node), report.Escape(u.Why))
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "<p class=\"note\">%s</p>\n", report.Escape(n))
	}
	return nil
}

// ttlStrip is a small inline SVG of a family's remaining-TTL buckets, each
// bar's height its share of the family, with its count as a tooltip. A
// bucket with keys is never drawn thinner than stripMinBar, and one that
// short carries its count above it, so 5 locks without a TTL among
// thousands show; an empty bucket is a faint baseline.
func ttlStrip(t lock.TTLStats) string {
	if len(t.Histogram) == 0 {
		return ""
	}
	var total int64
	for _, b := range t.Histogram {
		total += b.Count
	}
	const barW, h, top = 14, 24, 10 // top: room for a short bar's count
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="remaining TTLs: %s">`+
		`<title>remaining TTLs</title>`,
		barW*len(t.Histogram), top+h+2, barW*len(t.Histogram), top+h+2, report.Escape(histText(t.Histogram)))
	for i, bk := range t.Histogram {
		if bk.Count == 0 {
			fmt.Fprintf(&b, `<rect class="bucket empty" x="%d" y="%d" width="%d" height="1" fill="%s" data-le="%s" data-count="0">`+
				`<title>TTL up to %s: no keys</title></rect>`, i*barW+1, top+h-1, barW-2, report.Palette.Faint,
				report.Escape(bk.Le), report.Escape(bk.Le))
			continue
		}
		bh := max(int(float64(h)*float64(bk.Count)/float64(max(total, 1))), stripMinBar)
		color := report.Palette.Lease
		if bk.Le == "none" {
			color = report.Palette.Error
		}
		fmt.Fprintf(&b, `<rect class="bucket" x="%d" y="%d" width="%d" height="%d" fill="%s" data-le="%s" data-count="%d">`+
			`<title>TTL up to %s: %s keys</title></rect>`,
			i*barW+1, top+h-bh, barW-2, bh, color, report.Escape(bk.Le), bk.Count, report.Escape(bk.Le), english.Number(bk.Count))
		if bh < h/2 {
			fmt.Fprintf(&b, `<text class="count" x="%d" y="%d" text-anchor="middle" font-size="8" fill="%s" data-le="%s">%s</text>`,
				i*barW+barW/2, top+h-bh-2, color, report.Escape(bk.Le), compactCount(bk.Count))
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

// stripMinBar is the least height, in pixels, of a bucket that has keys.
const stripMinBar = 4

// compactCount fits a count in a bar's width: 5, 950, 1.2k, 34k, 2.1M.
func compactCount(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

func histText(hs []lock.Bucket) string {
	parts := make([]string, len(hs))
	for i, b := range hs {
		parts[i] = fmt.Sprintf("%s: %d", b.Le, b.Count)
	}
	return strings.Join(parts, ", ")
}

func topOf(m map[string]int64) string {
	best, n := "", int64(-1)
	for k, v := range m {
		if v > n || v == n && k < best {
			best, n = k, v
		}
	}
	return best
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// problemLinks links each finding code to the first finding of that code
// on the page.
func problemLinks(codes []string) string {
	links := make([]string, len(codes))
	for i, c := range codes {
		links[i] = fmt.Sprintf("<a href=\"%s\">%s</a>", report.Escape(report.CodeAnchor(c)), report.Escape(c))
	}
	return strings.Join(links, " ")
}
