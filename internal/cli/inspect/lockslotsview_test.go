package inspect

import (
	"bytes"
	"flag"
	"html"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden HTML of the slot map")

// clusterScan is a scan of three masters as the failover test sees one
// (internal/inspect/lock TestClusterMasterKilledMidScan): 7000 went down
// mid-scan and its keys were read on the replica promoted in its place;
// 7002 and its replica were killed, so its slots were not read; and slots
// 16001-16383 had no master.
func clusterScan() *lock.Data {
	return &lock.Data{
		Target: lock.Target{URL: "redis://127.0.0.1:7000", Cluster: true, Nodes: []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}},
		Servers: []lock.Server{{Node: "127.0.0.1:7000", Keys: 2011, Info: "ok"}, {Node: "127.0.0.1:7001", Keys: 1990, Info: "ok"},
			{Node: "127.0.0.1:7002", Keys: 1999, Info: "ok"}},
		SlotMap: []lock.SlotsRead{
			{Master: "127.0.0.1:7000", Slots: []lock.SlotRange{{Start: 0, End: 5460}}, ReadOn: []string{"127.0.0.1:7000", "127.0.0.1:7004"},
				Read: true},
			{Master: "127.0.0.1:7001", Slots: []lock.SlotRange{{Start: 5461, End: 10922}}, ReadOn: []string{"127.0.0.1:7001"}, Read: true},
			{Master: "127.0.0.1:7002", Slots: []lock.SlotRange{{Start: 10923, End: 16000}}, ReadOn: []string{"127.0.0.1:7002"},
				Why: "read keys on 127.0.0.1:7002: connection reset by peer; after waiting 3s: connection refused"},
			{Slots: []lock.SlotRange{{Start: 16001, End: 16383}}, ReadOn: []string{},
				Why: "no master served them when the scan began (the cluster does not cover every slot): no key there could be read"},
		},
	}
}

var (
	rectRE = regexp.MustCompile(`<rect class="slots (\w+)" x="([0-9.]+)" y="[0-9]+" width="([0-9.]+)"[^>]* ` +
		`data-start="(\d+)" data-end="(\d+)"><title>([^<]*)</title>`)
	slotRow = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE  = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	tagRE   = regexp.MustCompile(`<[^>]*>`)
)

// TestSlotMapHTML draws a cluster scan's slot map: one bar per master
// along 0-16383, each range where its slots say and in the state the
// data gives it (read, or not read), with a title in words; a table with
// the same in words (master, slots, keys, read on, state and why). Golden:
// testdata/slotmap.html (go test ./internal/cli/inspect -run TestSlotMapHTML -update).
func TestSlotMapHTML(t *testing.T) {
	var buf bytes.Buffer
	writeSlotMapHTML(&buf, clusterScan())
	page := buf.String()
	if !strings.Contains(page, "<p>3 masters scanned; 10,923 of 16,384 hash slots read, 5,461 not read.</p>") {
		t.Errorf("summary missing:\n%s", page)
	}
	want := []string{
		"read 0 5460 slots 0-5460 of 127.0.0.1:7000: read after a failover",
		"read 5461 10922 slots 5461-10922 of 127.0.0.1:7001: read",
		"unread 10923 16000 slots 10923-16000 of 127.0.0.1:7002: not read",
		"unread 16001 16383 slots 16001-16383 of no master: not read",
	}
	var got []string
	for _, m := range rectRE.FindAllStringSubmatch(page, -1) {
		got = append(got, strings.Join([]string{m[1], m[4], m[5], html.UnescapeString(m[6])}, " "))
		x, _ := strconv.ParseFloat(m[2], 64)
		w, _ := strconv.ParseFloat(m[3], 64)
		start, _ := strconv.ParseInt(m[4], 10, 64)
		end, _ := strconv.ParseInt(m[5], 10, 64)
		if math.Abs(x-slotX(start)) > 0.06 || math.Abs(x+w-slotX(end+1)) > 0.11 {
			t.Errorf("slots %d-%d drawn at x=%.1f..%.1f, they belong at %.1f..%.1f", start, end, x, x+w, slotX(start), slotX(end+1))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("bars:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rows := []string{
		"127.0.0.1:7000 | 0-5460 | 2,011 | 127.0.0.1:7000 then 127.0.0.1:7004 | read after a failover",
		"127.0.0.1:7001 | 5461-10922 | 1,990 | 127.0.0.1:7001 | read",
		"127.0.0.1:7002 | 10923-16000 | 1,999 | 127.0.0.1:7002 | not read read keys on 127.0.0.1:7002: connection reset by peer; " +
			"after waiting 3s: connection refused",
		"no master | 16001-16383 | - | - | not read no master served them when the scan began (the cluster does not cover every slot): " +
			"no key there could be read",
	}
	var table []string
	for _, r := range slotRow.FindAllStringSubmatch(page[strings.Index(page, "<tbody>"):], -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(r[1], -1) {
			cells = append(cells, strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(c[1], " "))), " "))
		}
		table = append(table, strings.Join(cells, " | "))
	}
	if !slices.Equal(table, rows) {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(table, "\n"), strings.Join(rows, "\n"))
	}
	golden(t, filepath.Join("testdata", "slotmap.html"), page)

	// One server: no slot map.
	buf.Reset()
	writeSlotMapHTML(&buf, &lock.Data{Target: lock.Target{Nodes: []string{"127.0.0.1:6379"}}})
	if buf.Len() != 0 {
		t.Errorf("one server drew a slot map: %s", buf.String())
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	testenv.Golden(t, path, got, *update)
}

// TestSlotText: the same scan in the terminal and in Markdown - the
// summary, then per master its slots, read or not and on which nodes
// (the failover's two, none where nothing was read). Golden:
// testdata/slotmap.txt and slotmap.md. One server: nothing.
func TestSlotText(t *testing.T) {
	d := clusterScan()
	var text bytes.Buffer
	if err := writeSlotText(&text, report.NewTheme(&text, false), d); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"hash slots: 3 masters scanned; 10,923 of 16,384 hash slots read, 5,461 not read",
		"MASTER          SLOTS        STATE                  READ ON",
		"127.0.0.1:7000  0-5460       read after a failover  127.0.0.1:7000 then 127.0.0.1:7004",
		"127.0.0.1:7001  5461-10922   read                   127.0.0.1:7001",
		"127.0.0.1:7002  10923-16000  not read               127.0.0.1:7002",
		"no master       16001-16383  not read               -",
	}
	if got := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("slot text:\n%s\nwant:\n%s", text.String(), strings.Join(want, "\n"))
	}
	var md bytes.Buffer
	if err := report.TextMarkdown(&md, func(w io.Writer, th *report.Theme) error { return writeSlotText(w, th, d) }); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "slotmap.txt"), text.String())
	golden(t, filepath.Join("testdata", "slotmap.md"), md.String())
	text.Reset()
	one := &lock.Data{Target: lock.Target{Nodes: []string{"127.0.0.1:6379"}}}
	if err := writeSlotText(&text, report.NewTheme(&text, false), one); err != nil || text.Len() != 0 {
		t.Errorf("one server drew %q (%v)", text.String(), err)
	}
}
