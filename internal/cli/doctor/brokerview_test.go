package doctor

import (
	"bytes"
	"context"
	"flag"
	"html"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/doctor/topology"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden HTML of the broker's map")

// recorded is the management API recorded from a 3-node RabbitMQ 3.10.8
// cluster (.ci/rabbitmq-cluster), whole or with node c stopped.
func recorded(t *testing.T, dir string) *topology.Map {
	t.Helper()
	fixture := filepath.Join("..", "..", "doctor", "topology", "testdata", "cluster-3.10.8", dir)
	mgmt, err := topology.NewManagement(testenv.ManagementFixture(t, fixture), "/")
	if err != nil {
		t.Fatal(err)
	}
	m, err := topology.ReadMap(context.Background(), mgmt, []topology.Job{
		{Name: "payments", Queue: "payments", DLQ: "payments.dlq", RetryQueue: "payments.retry"},
		{Name: "emails", Queue: "emails", DLQ: "emails.dlq"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	tagRE  = regexp.MustCompile(`<[^>]*>`)
	rowRE  = regexp.MustCompile(`(?s)<tr[^>]*>.*?</tr>`)
	cellRE = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	cardRE = regexp.MustCompile(`(?s)<li class="node-card[^"]*">(.*?)</li>`)
)

// text is an HTML fragment's words, tags dropped, blanks folded.
func text(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(strings.ReplaceAll(s, "<br>", " "), " "))), " ")
}

// table reads the map's table back: one line per row, its cells' words
// joined by " | ".
func table(t *testing.T, page string) []string {
	t.Helper()
	i := strings.Index(page, `<table class="topology">`)
	if i < 0 {
		t.Fatalf("no topology table:\n%s", page)
	}
	var out []string
	for _, row := range rowRE.FindAllString(page[i:strings.Index(page[i:], "</table>")+i], -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(row, -1) {
			cells = append(cells, text(c[1]))
		}
		out = append(out, strings.Join(cells, " | "))
	}
	return out
}

// TestBrokerHTML draws the recorded cluster, whole and with node c down:
// the three nodes as cards saying whether each runs and what it leads and
// holds, and per queue its type, leader, members, the members offline and
// how many copies are online, a queue short of them flagged. The section
// is compared with its golden file (go test ./internal/cli/doctor -update).
func TestBrokerHTML(t *testing.T) {
	const a, b, c = "dupctl-0865e2-a@localhost", "dupctl-0865e2-b@localhost", "dupctl-0865e2-c@localhost"
	for _, tc := range []struct {
		dir     string
		cards   []string
		rows    []string
		flagged int
	}{
		{"up", []string{
			a + " running leads 2 queues, holds a copy of 4 queues",
			b + " running leads 1 queue, holds a copy of 3 queues",
			c + " running leads 2 queues, holds a copy of 4 queues",
		}, []string{
			"queue | type | " + a + " running | " + b + " running | " + c + " running | copies online",
			"payments job payments: work queue | quorum | ★ leader | ● copy | ● copy | 3 of 3 online",
			"payments.dlq job payments: DLQ | quorum | ● copy | ★ leader | ● copy | 3 of 3 online",
			"payments.retry job payments: retry queue | classic | ★ only copy | – | – | 1 of 1 online",
			"emails job emails: work queue | classic | – | – | ★ only copy | 1 of 1 online",
			"emails.dlq job emails: DLQ | quorum | ● copy | ● copy | ★ leader | 3 of 3 online",
		}, 0},
		{"node-c-down", []string{
			a + " running leads 2 queues, holds a copy of 4 queues",
			b + " running leads 2 queues, holds a copy of 3 queues",
			c + " not running leads 1 queue, holds a copy of 4 queues",
		}, []string{
			"queue | type | " + a + " running | " + b + " running | " + c + " not running | copies online",
			"payments job payments: work queue | quorum | ★ leader | ● copy | ✗ copy, offline | 2 of 3 online: still has a majority",
			"payments.dlq job payments: DLQ | quorum | ● copy | ★ leader | ✗ copy, offline | 2 of 3 online: still has a majority",
			"payments.retry job payments: retry queue | classic | ★ only copy | – | – | 1 of 1 online",
			"emails job emails: work queue | classic | – | – | ✗ only copy, offline | its one node is offline: the queue is unavailable",
			"emails.dlq job emails: DLQ | quorum | ● copy | ★ leader | ✗ copy, offline | 2 of 3 online: still has a majority",
		}, 4},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			var buf bytes.Buffer
			writeBrokerHTML(&buf, recorded(t, tc.dir))
			page := buf.String()
			var cards []string
			for _, m := range cardRE.FindAllStringSubmatch(page, -1) {
				cards = append(cards, text(m[1]))
			}
			if !slices.Equal(cards, tc.cards) {
				t.Errorf("node cards:\n%s\nwant:\n%s", strings.Join(cards, "\n"), strings.Join(tc.cards, "\n"))
			}
			if got := table(t, page); !slices.Equal(got, tc.rows) {
				t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.rows, "\n"))
			}
			if n := strings.Count(page, `<tr class="flagged">`); n != tc.flagged {
				t.Errorf("%d rows flagged, want %d", n, tc.flagged)
			}
			golden(t, filepath.Join("testdata", "broker-"+tc.dir+".html"), page)
		})
	}
}

// TestBrokerHTMLOneNode: a single broker is drawn too - one node, every
// queue's only copy on it; a queue the broker does not have says so; no
// node list (no monitoring tag) draws the nodes the queues name, their
// state unknown; no map draws nothing.
func TestBrokerHTMLOneNode(t *testing.T) {
	const n = "rabbit@localhost"
	m := &topology.Map{Nodes: []topology.Node{{Name: n, Running: true}}, Queues: []topology.Placement{
		{Queue: "work", Uses: []string{"job w: work queue"}, Exists: true, Type: "quorum", Leader: n, Members: []string{n}},
		{Queue: "work.dlq", Uses: []string{"job w: DLQ"}, Exists: true, Type: "classic", Leader: n, Members: []string{n}},
		{Queue: "gone", Uses: []string{"job g: work queue"}},
	}}
	var buf bytes.Buffer
	writeBrokerHTML(&buf, m)
	want := []string{
		"queue | type | " + n + " running | copies online",
		"work job w: work queue | quorum | ★ leader | 1 of 1 online",
		"work.dlq job w: DLQ | classic | ★ only copy | 1 of 1 online",
		"gone job g: work queue | - | not on the broker | does not exist",
	}
	if got := table(t, buf.String()); !slices.Equal(got, want) {
		t.Errorf("one node:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(buf.String(), "<p>1 node, 1 running; 3 queues of the jobs, 1 not fully online.</p>") {
		t.Errorf("summary: %s", buf.String())
	}
	m.Nodes, m.NodesUnknown = nil, "the management API did not list the nodes"
	buf.Reset()
	writeBrokerHTML(&buf, m)
	if got := table(t, buf.String()); got[0] != "queue | type | "+n+" state unknown | copies online" {
		t.Errorf("no node list: %q", got[0])
	}
	buf.Reset()
	writeBrokerHTML(&buf, nil)
	if buf.Len() != 0 {
		t.Errorf("no map drew %q", buf.String())
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	testenv.Golden(t, path, got, *update)
}

// TestBrokerText draws the recorded cluster in the terminal and in
// Markdown - whole, with node c down, and with nodes b and c down (no
// quorum queue has its majority) - each compared with its golden file:
// the nodes with the queues each leads, and per queue its type, leader
// and copies online. One node, or no map, draws nothing in either.
func TestBrokerText(t *testing.T) {
	for _, dir := range []string{"up", "node-c-down", "nodes-b-c-down"} {
		t.Run(dir, func(t *testing.T) {
			m := recorded(t, dir)
			var text bytes.Buffer
			if err := writeBrokerText(&text, report.NewTheme(&text, false), m); err != nil {
				t.Fatal(err)
			}
			var md bytes.Buffer
			if err := report.TextMarkdown(&md, func(w io.Writer, th *report.Theme) error { return writeBrokerText(w, th, m) }); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "broker-"+dir+".txt"), text.String())
			golden(t, filepath.Join("testdata", "broker-"+dir+".md"), md.String())
		})
	}
	one := &topology.Map{Nodes: []topology.Node{{Name: "rabbit@localhost", Running: true}}, Queues: []topology.Placement{
		{Queue: "work", Uses: []string{"job w: work queue"}, Exists: true, Type: "quorum", Leader: "rabbit@localhost",
			Members: []string{"rabbit@localhost"}, Offline: []string{}},
	}}
	for _, m := range []*topology.Map{one, nil} {
		var buf bytes.Buffer
		if err := writeBrokerText(&buf, report.NewTheme(&buf, false), m); err != nil || buf.Len() != 0 {
			t.Errorf("one node or no map drew %q (%v)", buf.String(), err)
		}
	}
}
