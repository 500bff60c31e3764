package doctor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// doctorOut runs doctor on queues with the broker's map, in one format.
func doctorOut(t *testing.T, amqpURL, mgmtURL, format string, queues ...string) string {
	t.Helper()
	args := []string{"doctor", "--amqp-url", amqpURL, "--management-url", mgmtURL, "-o", format, "--fail-on", "none"}
	for _, q := range queues {
		args = append(args, "--queue", q)
	}
	ios, _, out, errOut := iostreams.Test()
	ios.Getenv = func(string) string { return "" }
	if code := cli.Run(context.Background(), args, ios); code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, errOut)
	}
	return out.String()
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr[^>]*>.*?</tr>`)
	tagRE  = regexp.MustCompile(`<[^>]*>`)
	cellRE = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
)

// brokerRows reads the broker's table back from a page: per row, its
// cells' words joined by " | ", keyed by the row's first word (the queue;
// "queue" for the header).
func brokerRows(t *testing.T, page string) map[string]string {
	t.Helper()
	i := strings.Index(page, `<table class="topology">`)
	if i < 0 {
		t.Fatalf("no broker map on the page")
	}
	out := map[string]string{}
	for _, row := range rowRE.FindAllString(page[i:i+strings.Index(page[i:], "</table>")], -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(row, -1) {
			words := html.UnescapeString(tagRE.ReplaceAllString(strings.ReplaceAll(c[1], "<br>", " "), " "))
			cells = append(cells, strings.Join(strings.Fields(words), " "))
		}
		out[strings.Fields(cells[0])[0]] = strings.Join(cells, " | ")
	}
	return out
}

func declare(t *testing.T, url, name string, args amqp.Table) {
	t.Helper()
	conn, err := connect.AMQP(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := connect.AMQP(context.Background(), url); err == nil {
			if ch, err := c.Channel(); err == nil {
				ch.QueueDelete(name, false, false, false)
			}
			c.Close()
		}
	})
}

// TestDoctorHTMLOneNode: on the one broker of the tests, doctor -o html
// draws the broker's map with its one node, running, holding every queue
// (a quorum queue it leads, a classic queue's only copy), and -o json
// carries the same map under data.broker.
func TestDoctorHTMLOneNode(t *testing.T) {
	amqpURL := testenv.Need(t, testenv.AMQP)
	mgmtURL := testenv.Need(t, testenv.Management)
	p := testenv.UniqueName("dmap")
	declare(t, amqpURL, p+".q", amqp.Table{"x-queue-type": "quorum"})
	declare(t, amqpURL, p+".c", nil)
	page := doctorOut(t, amqpURL, mgmtURL, "html", p+".q", p+".c")
	rows := brokerRows(t, page)
	head := rows["queue"]
	if strings.Count(head, "@") != 1 || !strings.HasSuffix(head, " running | copies online") {
		t.Errorf("header %q: want one node, running", head)
	}
	if !strings.Contains(rows[p+".q"], "| quorum | ★ leader | 1 of 1 online") ||
		!strings.Contains(rows[p+".c"], "| classic | ★ only copy | 1 of 1 online") {
		t.Errorf("rows:\n%s\n%s", rows[p+".q"], rows[p+".c"])
	}
	var doc struct {
		Data struct {
			Broker struct {
				Nodes  []struct{ Name string }
				Queues []struct{ Queue, Type, Leader string }
			} `json:"broker"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(doctorOut(t, amqpURL, mgmtURL, "json", p+".q", p+".c")), &doc); err != nil {
		t.Fatal(err)
	}
	b := doc.Data.Broker
	if len(b.Nodes) != 1 || len(b.Queues) != 2 || b.Queues[0].Leader != b.Nodes[0].Name || b.Queues[0].Type != "quorum" {
		t.Errorf("data.broker: %+v", b)
	}
	// One broker: the terminal and Markdown show no map (the checklist
	// says all there is).
	for _, format := range []string{"table", "markdown"} {
		if out := doctorOut(t, amqpURL, mgmtURL, format, p+".q", p+".c"); strings.Contains(out, "Broker:") || strings.Contains(out, "LEADS") {
			t.Errorf("-o %s on one node shows the broker's map:\n%s", format, out)
		}
	}
}

// brokerLines are the lines of doctor's terminal (or Markdown) broker
// view that name a queue or node of the test, blanks folded.
func brokerLines(out string, names ...string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(strings.NewReplacer("|", " ", "\\", "").Replace(line))
		if len(f) > 0 && slices.Contains(names, f[0]) {
			got[f[0]] = strings.Join(f, " ")
		}
	}
	return got
}

// TestRabbitClusterDoctorHTML: on the 3-node cluster, doctor -o html
// draws the three nodes running, a quorum queue's leader on the node it
// was declared on and a copy on each of the others, and a classic queue
// on node c alone; with node c stopped, c is not running, the quorum
// queue's copy there is offline (2 of 3 online, still a majority) and the
// classic queue is unavailable - the management API answers 404 for it
// then, and the map still places it.
func TestRabbitClusterDoctorHTML(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	a, cn := c.Nodes[0], c.Nodes[2]
	p := testenv.UniqueName("cmap")
	declare(t, a.URL, p+".q", amqp.Table{"x-queue-type": "quorum"})
	declare(t, cn.URL, p+".c", nil)
	rows := brokerRows(t, doctorOut(t, c.URL, c.Management, "html", p+".q", p+".c"))
	if h := rows["queue"]; strings.Count(h, " running") != 3 || strings.Contains(h, "not running") {
		t.Errorf("header %q: want 3 nodes running", h)
	}
	if q := rows[p+".q"]; !strings.Contains(q, "| quorum | ★ leader | ● copy | ● copy | 3 of 3 online") {
		t.Errorf("quorum queue: %q, want its leader on %s and a copy on each other node", q, a.Name)
	}
	if q := rows[p+".c"]; !strings.Contains(q, "| classic | – | – | ★ only copy | 1 of 1 online") {
		t.Errorf("classic queue: %q, want it on %s alone", q, cn.Name)
	}
	// The terminal and Markdown views say the same: each node running and
	// what it leads, each queue's leader and copies online.
	names := []string{a.Name, c.Nodes[1].Name, cn.Name, p + ".q", p + ".c"}
	for _, format := range []string{"table", "markdown"} {
		out := doctorOut(t, c.URL, c.Management, format, p+".q", p+".c")
		want := map[string]string{a.Name: a.Name + " running " + p + ".q", c.Nodes[1].Name: c.Nodes[1].Name + " running -",
			cn.Name:  cn.Name + " running " + p + ".c",
			p + ".q": p + ".q quorum " + a.Name + " 3 of 3 online", p + ".c": p + ".c classic " + cn.Name + " 1 of 1 online"}
		if got := brokerLines(out, names...); !maps.Equal(got, want) || !strings.Contains(out, "Broker:") {
			t.Errorf("-o %s, cluster up:\n%v\nwant\n%v\n%s", format, got, want, out)
		}
	}
	c.StopApp(t, cn.Name)
	// The management API sees the node down at its next tick.
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows = brokerRows(t, doctorOut(t, c.URL, c.Management, "html", p+".q", p+".c"))
		if strings.Contains(rows["queue"], "not running") || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if h := rows["queue"]; strings.Count(h, "not running") != 1 || !strings.Contains(h, cn.Name+" not running") {
		t.Errorf("header %q: want %s not running", h, cn.Name)
	}
	if q := rows[p+".q"]; !strings.Contains(q, "| ✗ copy, offline | 2 of 3 online: still has a majority") {
		t.Errorf("quorum queue with c stopped: %q", q)
	}
	if q := rows[p+".c"]; !strings.Contains(q, "| ✗ only copy, offline | its one node is offline: the queue is unavailable") {
		t.Errorf("classic queue with c stopped: %q", q)
	}
	// Through AMQP the classic queue on the stopped node is NOT_FOUND, as if
	// it did not exist: the finding says it exists and is unavailable.
	var doc struct {
		Findings []struct{ Code, Subject, Message string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(doctorOut(t, c.URL, c.Management, "json", p+".q", p+".c")), &doc); err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, f := range doc.Findings {
		codes[f.Subject] += f.Code + " "
	}
	if !strings.Contains(codes[p+".c"], "TOPO_QUEUE_UNAVAILABLE") || strings.Contains(codes[p+".c"], "TOPO_QUEUE_MISSING") {
		t.Errorf("the classic queue on the stopped node: %q, want TOPO_QUEUE_UNAVAILABLE (%+v)", codes[p+".c"], doc.Findings)
	}
	if strings.Contains(codes[p+".q"], "TOPO_QUEUE_UNAVAILABLE") {
		t.Errorf("the quorum queue with 2 of 3 online has its majority: %q", codes[p+".q"])
	}
	out := doctorOut(t, c.URL, c.Management, "table", p+".q", p+".c")
	want := map[string]string{a.Name: a.Name + " running " + p + ".q", c.Nodes[1].Name: c.Nodes[1].Name + " running -",
		cn.Name:  cn.Name + " not running " + p + ".c",
		p + ".q": p + ".q quorum " + a.Name + " 2 of 3 online: still has a majority",
		p + ".c": p + ".c classic " + cn.Name + " its one node is offline: the queue is unavailable"}
	if got := brokerLines(out, names...); !maps.Equal(got, want) {
		t.Errorf("table, %s stopped:\n%v\nwant\n%v\n%s", cn.Name, got, want, out)
	}
	c.StartApp(t, cn.Name)
}

// TestRabbitClusterDoctorNoMajority: with two of the three nodes stopped,
// a quorum queue led from the node left (whose leader the API still names,
// its state still "running") and one led from a stopped node (no leader)
// cannot accept or deliver messages - a passive declare still finds them.
// doctor says so for each, TOPO_QUEUE_UNAVAILABLE naming the one member
// online, and fails (exit 1, as for a classic queue whose node is down);
// the terminal view shows 1 of 3 online. The nodes are started again.
func TestRabbitClusterDoctorNoMajority(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	a, b, cn := c.Nodes[0], c.Nodes[1], c.Nodes[2]
	p := testenv.UniqueName("nomaj")
	quorum := amqp.Table{"x-queue-type": "quorum", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": p + ".dlq",
		"x-delivery-limit": int32(5)}
	declare(t, a.URL, p+".dlq", amqp.Table{"x-queue-type": "quorum"})
	declare(t, a.URL, p+".a", quorum)
	declare(t, b.URL, p+".b", quorum)
	run := func(format string) (int, string) {
		args := []string{"doctor", "--amqp-url", c.URL, "--management-url", c.Management, "-o", format,
			"--queue", p + ".a", "--queue", p + ".b"}
		ios, _, out, _ := iostreams.Test()
		ios.Getenv = func(string) string { return "" }
		return cli.Run(context.Background(), args, ios), out.String()
	}
	if code, out := run("json"); code != 0 {
		t.Fatalf("cluster up: exit %d\n%s", code, out)
	}
	t0 := time.Now()
	c.StopApp(t, b.Name)
	t1 := time.Now()
	c.StopApp(t, cn.Name)
	// The API drops a member from a queue's online list at its next
	// tick: time how long doctor takes to see both queues without a
	// majority (stop_app returns once the node's app is down).
	stopped := time.Now()
	t.Logf("stop_app: %s %s, %s %s", b.Name, t1.Sub(t0).Round(100*time.Millisecond), cn.Name, stopped.Sub(t1).Round(100*time.Millisecond))
	type finding struct{ Code, Subject, Message string }
	var unavailable map[string]finding
	var code int
	for {
		var out string
		code, out = run("json")
		var doc struct{ Findings []finding }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		unavailable = map[string]finding{}
		for _, f := range doc.Findings {
			if f.Code == "TOPO_QUEUE_UNAVAILABLE" {
				unavailable[f.Subject] = f
			}
		}
		if len(unavailable) == 2 || time.Since(stopped) > time.Minute {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("doctor saw both queues without a majority %s after the second node stopped", time.Since(stopped).Round(100*time.Millisecond))
	if code != 1 {
		t.Errorf("exit %d, want 1 (an error finding at --fail-on error)", code)
	}
	for _, q := range []string{p + ".a", p + ".b"} {
		want := fmt.Sprintf("job %s: quorum queue %q (work queue) has no majority: 1 of its 3 members online (%s), "+
			"so it cannot accept or deliver messages until 2 are", q, q, a.Name)
		if f, ok := unavailable[q]; !ok || f.Message != want {
			t.Errorf("%s: %+v\nwant %q", q, f, want)
		}
	}
	_, out := run("table")
	for _, q := range []string{p + ".a", p + ".b"} {
		if got := brokerLines(out, q)[q]; !strings.HasSuffix(got, " 1 of 3 online: no majority, the queue is unavailable") {
			t.Errorf("table row of %s: %q\n%s", q, got, out)
		}
	}
	c.StartApp(t, b.Name)
	c.StartApp(t, cn.Name)
}
