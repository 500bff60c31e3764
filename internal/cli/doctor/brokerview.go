package doctor

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/doctor/topology"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// The broker's map on doctor's HTML page: each node as a card (running or
// not, how many of the jobs' queues it leads and holds), then a table of
// the jobs' queues by node - the leader, the members holding a copy, the
// members offline - and how many copies are online, a queue short of
// them flagged. Every mark is a word in its cell (a glyph beside it), so
// the table reads the same to a screen reader and on paper.

// brokerNodes are the map's columns: the nodes the API listed, or, when
// it did not, those the queues name (their state unknown).
func brokerNodes(m *topology.Map) []topology.Node {
	if len(m.Nodes) > 0 || m.NodesUnknown == "" {
		return m.Nodes
	}
	var out []topology.Node
	for _, q := range m.Queues {
		for _, n := range q.Members {
			if !slices.ContainsFunc(out, func(o topology.Node) bool { return o.Name == n }) {
				out = append(out, topology.Node{Name: n})
			}
		}
	}
	slices.SortFunc(out, func(a, b topology.Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// copies says how many of a queue's copies are online, and how bad it is
// when some are not: a replicated queue without a majority online, or a
// classic queue whose node is down, cannot be used at all.
func copies(q topology.Placement) (text, class string) {
	n, off := len(q.Members), len(q.Offline)
	switch {
	case !q.Exists:
		return "does not exist", "error"
	case n == 0:
		return "node unknown", "notchecked"
	case off == 0:
		return fmt.Sprintf("%d of %d online", n, n), "pass"
	case q.Replicated() && n-off > n/2:
		return fmt.Sprintf("%d of %d online: still has a majority", n-off, n), "warn"
	case q.Replicated():
		return fmt.Sprintf("%d of %d online: no majority, the queue is unavailable", n-off, n), "error"
	}
	return "its one node is offline: the queue is unavailable", "error"
}

// writeBrokerHTML draws the broker's map; nothing when it was not read.
func writeBrokerHTML(w io.Writer, m *topology.Map) {
	if m == nil {
		return
	}
	nodes := brokerNodes(m)
	summary := brokerSummary(m)
	fmt.Fprintf(w, "<section class=\"broker\" aria-labelledby=\"broker-map\">"+
		"<h2 id=\"broker-map\">Broker: nodes and where each queue lives</h2>\n"+
		"<p>%s.</p>\n", report.Escape(summary))
	if m.NodesUnknown != "" {
		fmt.Fprintf(w, "<p class=\"note\">%s</p>\n", report.Escape(m.NodesUnknown))
	}
	writeNodeCards(w, m, nodes)
	writePlacements(w, m, nodes)
	io.WriteString(w, "</section>\n")
}

// nodeState is a node's state as a badge's class and word.
func nodeState(m *topology.Map, n topology.Node) (class, word string) {
	switch {
	case m.NodesUnknown != "":
		return "notchecked", "state unknown"
	case n.Running:
		return "pass", "running"
	}
	return "error", "not running"
}

// writeNodeCards draws one card per node.
func writeNodeCards(w io.Writer, m *topology.Map, nodes []topology.Node) {
	io.WriteString(w, "<ul class=\"nodes\" aria-label=\"nodes\">\n")
	for _, n := range nodes {
		leads, holds := 0, 0
		for _, q := range m.Queues {
			if q.Leader == n.Name {
				leads++
			}
			if slices.Contains(q.Members, n.Name) {
				holds++
			}
		}
		class, word := nodeState(m, n)
		fmt.Fprintf(w, "<li class=\"node-card %s\"><code>%s</code> <span class=\"badge %s\">%s</span><br>"+
			"<span class=\"note\">leads %s, holds a copy of %s</span></li>\n", class, report.Escape(n.Name), class, word,
			english.Count(leads, "queue", "queues"), english.Count(holds, "queue", "queues"))
	}
	io.WriteString(w, "</ul>\n")
}

// writePlacements is the table of queues by node.
func writePlacements(w io.Writer, m *topology.Map, nodes []topology.Node) {
	io.WriteString(w, "<div class=\"scroll\"><table class=\"topology\"><caption>Each queue of the jobs on the broker's nodes: "+
		"&#9733; leader, &#9679; a copy (member), &#10007; a copy on a node that is offline.</caption>\n<thead><tr>"+
		"<th scope=\"col\">queue</th><th scope=\"col\">type</th>")
	for _, n := range nodes {
		class, word := nodeState(m, n)
		fmt.Fprintf(w, "<th scope=\"col\"><code>%s</code><br><span class=\"badge %s\">%s</span></th>", report.Escape(n.Name), class, word)
	}
	io.WriteString(w, "<th scope=\"col\">copies online</th></tr></thead><tbody>\n")
	for _, q := range m.Queues {
		text, class := copies(q)
		flag := ""
		if class != "pass" {
			flag = " class=\"flagged\""
		}
		fmt.Fprintf(w, "<tr%s><th scope=\"row\"><code>%s</code><div class=\"note\">%s</div></th><td>%s</td>", flag, report.Escape(q.Queue),
			report.Escape(strings.Join(q.Uses, "; ")), report.Escape(orDash(q.Type)))
		if !q.Exists {
			fmt.Fprintf(w, "<td colspan=\"%d\" class=\"note\">not on the broker</td>", len(nodes))
		}
		for _, n := range nodes {
			if q.Exists {
				io.WriteString(w, placementCell(q, n.Name))
			}
		}
		fmt.Fprintf(w, "<td><span class=\"badge %s\">%s</span></td></tr>\n", class, report.Escape(text))
	}
	io.WriteString(w, "</tbody></table></div>\n")
}

// placementCell is what a queue has on one node, in words.
func placementCell(q topology.Placement, node string) string {
	if !slices.Contains(q.Members, node) {
		return "<td class=\"cell none\"><span class=\"note\">&ndash;</span></td>"
	}
	role := "copy"
	switch {
	case !q.Replicated():
		role = "only copy"
	case q.Leader == node:
		role = "leader"
	}
	if slices.Contains(q.Offline, node) {
		return "<td class=\"cell offline\"><span class=\"badge error\">&#10007; " + role + ", offline</span></td>"
	}
	glyph := "&#9679;"
	if q.Leader == node {
		glyph = "&#9733;"
	}
	return "<td class=\"cell " + strings.ReplaceAll(role, " ", "-") + "\">" + glyph + " " + role + "</td>"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// The broker's map in the terminal and in Markdown, for a cluster only
// (one broker's map says nothing the checklist does not): a line saying
// how many nodes run and how many queues are short of copies, the nodes
// (running or not, the queues each leads), then each queue's type,
// leader and copies online. Markdown draws the same view through
// report.TextMarkdown.

// clustered reports whether the map is of a cluster of several nodes.
func clustered(m *topology.Map) bool { return m != nil && len(brokerNodes(m)) > 1 }

// brokerSummary is the map in one sentence.
func brokerSummary(m *topology.Map) string {
	nodes, running, flagged := brokerNodes(m), 0, 0
	for _, n := range m.Nodes {
		if n.Running {
			running++
		}
	}
	for _, q := range m.Queues {
		if _, class := copies(q); class != "pass" {
			flagged++
		}
	}
	summary := english.Count(len(nodes), "node", "nodes")
	if m.NodesUnknown == "" {
		summary += fmt.Sprintf(", %d running", running)
	}
	summary += "; " + english.Count(len(m.Queues), "queue", "queues") + " of the jobs"
	if flagged > 0 {
		summary += fmt.Sprintf(", %d not fully online", flagged)
	}
	return summary
}

// writeBrokerText is the map as two tables; nothing outside a cluster.
func writeBrokerText(w io.Writer, th *report.Theme, m *topology.Map) error {
	if !clustered(m) {
		return nil
	}
	nodes := brokerNodes(m)
	fmt.Fprintf(w, "%s %s.\n", th.Strong("Broker:"), brokerSummary(m))
	if m.NodesUnknown != "" {
		fmt.Fprintln(w, th.Faint(m.NodesUnknown))
	}
	fmt.Fprintln(w)
	nt := report.NewTable("NODE", "STATE", "LEADS")
	for _, n := range nodes {
		var leads []string
		for _, q := range m.Queues {
			if q.Exists && q.Leader == n.Name {
				leads = append(leads, q.Queue)
			}
		}
		class, word := nodeState(m, n)
		nt.Row(n.Name, themed(th, class, word), orDash(strings.Join(leads, ", ")))
	}
	if err := nt.Render(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	qt := report.NewTable("QUEUE", "TYPE", "LEADER", "COPIES")
	for _, q := range m.Queues {
		text, class := copies(q)
		leader := q.Leader
		if q.Exists && leader == "" && q.Replicated() && len(q.Members) > 0 {
			leader = "none"
		}
		qt.Row(q.Queue, orDash(q.Type), orDash(leader), themed(th, class, text))
	}
	return qt.Render(w)
}

// themed styles a word by its badge class.
func themed(th *report.Theme, class, s string) string {
	switch class {
	case "pass":
		return th.Pass(s)
	case "warn":
		return th.Severity(findings.Warn, s)
	case "error":
		return th.Severity(findings.Error, s)
	}
	return th.Faint(s)
}
