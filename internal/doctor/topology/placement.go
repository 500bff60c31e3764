package topology

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/redact"
)

// Map is the broker as the management API shows it: its nodes, running
// or not, and where each queue the jobs name lives - a replicated
// (quorum or stream) queue's leader and members, a classic queue's one
// node. Doctor's HTML report draws it; it is read, never judged here
// (the findings say what is wrong).
type Map struct {
	Nodes []Node `json:"nodes"`
	// NodesUnknown says why the node list could not be read (it needs
	// the management user's monitoring tag): Nodes is empty then, and
	// the nodes known are those the queues name.
	NodesUnknown string      `json:"nodes_unknown,omitempty"`
	Queues       []Placement `json:"queues"`
}

// Placement is where one queue lives.
type Placement struct {
	Queue string `json:"queue"`
	// Uses are what the jobs use it for: "job payments: work queue".
	Uses []string `json:"uses"`
	// Exists is false for a queue the broker does not have.
	Exists bool   `json:"exists"`
	Type   string `json:"type"`
	// State is the broker's word for the queue (running, down, ...).
	State string `json:"state"`
	// Leader is a replicated queue's leader, or a classic queue's node.
	Leader string `json:"leader"`
	// Members are the nodes holding a copy: a replicated queue's members,
	// a classic queue's one node.
	Members []string `json:"members"`
	// Offline are members not online: absent from a replicated queue's
	// online list, or a classic queue's node when it is not running.
	Offline []string `json:"offline"`
}

// Replicated reports whether the queue keeps copies on several nodes
// (quorum queues and streams elect a leader among their members).
func (p Placement) Replicated() bool { return p.Type == "quorum" || p.Type == "stream" }

// Result is a topology check: its findings, and the broker's map when the
// management API was given.
type Result struct {
	report *findings.Report
	Map    *Map
}

// Report is the check's findings.
func (r *Result) Report() *findings.Report { return r.report }

// Run checks the jobs' queues (Check) and, with the management API, maps
// where each of them lives.
func Run(ctx context.Context, p Prober, mgmt *Management, jobs []Job) (*Result, error) {
	r, err := Check(ctx, p, mgmt, jobs)
	if err != nil || mgmt == nil {
		return &Result{report: r}, err
	}
	m, err := ReadMap(ctx, mgmt, jobs)
	if err != nil {
		return nil, err
	}
	return &Result{report: r, Map: m}, nil
}

// queueUse is a queue a job names, and what for.
type queueUse struct{ queue, use string }

func uses(jobs []Job) []queueUse {
	var out []queueUse
	for _, j := range jobs {
		for _, u := range []queueUse{{j.Queue, "work queue"}, {j.DLQ, "DLQ"}, {j.RetryQueue, "retry queue"}} {
			if u.queue != "" {
				out = append(out, queueUse{u.queue, "job " + j.Name + ": " + u.use})
			}
		}
	}
	return out
}

// ReadMap reads the cluster's nodes and where each queue the jobs name
// lives, each queue once, in the jobs' order.
func ReadMap(ctx context.Context, m *Management, jobs []Job) (*Map, error) {
	out := &Map{Nodes: []Node{}, Queues: []Placement{}}
	nodes, err := m.Nodes(ctx)
	if err != nil {
		out.NodesUnknown = "the management API did not list the nodes (the management user needs the monitoring tag): " +
			redact.String(err.Error())
	} else {
		out.Nodes = nodes
		slices.SortFunc(out.Nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	}
	at := map[string]int{}
	var listed queueList
	for _, u := range uses(jobs) {
		if i, ok := at[u.queue]; ok {
			out.Queues[i].Uses = append(out.Queues[i].Uses, u.use)
			continue
		}
		q, err := m.Queue(ctx, u.queue)
		if errors.Is(err, ErrNotFound) {
			q, err = listed.find(ctx, m, u.queue)
		}
		pl := Placement{Queue: u.queue, Uses: []string{u.use}, Members: []string{}, Offline: []string{}}
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("queue %s: %w", u.queue, err)
		default:
			pl = place(pl, q, out.Nodes)
		}
		at[u.queue] = len(out.Queues)
		out.Queues = append(out.Queues, pl)
	}
	return out, nil
}

// place fills where a queue lives from what the API said of it.
func place(pl Placement, q *QueueInfo, nodes []Node) Placement {
	pl.Exists, pl.Type, pl.State = true, q.Type, q.State
	if pl.Type == "" {
		pl.Type = "classic" // 3.x before 3.8 names no type
	}
	if pl.Replicated() && len(q.Members) > 0 {
		pl.Leader, pl.Members, pl.Offline = q.Leader, q.Members, offline(q, nodes)
		return pl
	}
	pl.Leader = q.Node
	if q.Node != "" {
		pl.Members = []string{q.Node}
		if i := slices.IndexFunc(nodes, func(n Node) bool { return n.Name == q.Node }); i >= 0 && !nodes[i].Running || q.State == "down" {
			pl.Offline = []string{q.Node}
		}
	}
	return pl
}

// queueList is the vhost's queues as the list endpoint shows them, read
// once when a queue's own endpoint says 404: RabbitMQ (3.10 measured)
// answers 404 for a classic queue whose node is down, and lists it there
// with state "down".
type queueList struct {
	read   bool
	queues []QueueInfo
}

// find is the queue named name in the list, or ErrNotFound.
func (l *queueList) find(ctx context.Context, m *Management, name string) (*QueueInfo, error) {
	if !l.read {
		err := m.get(ctx, "/api/queues/"+m.vh()+"?columns=name,type,node,leader,members,online,state", &l.queues)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		l.read = true
	}
	i := slices.IndexFunc(l.queues, func(q QueueInfo) bool { return q.Name == name })
	if i < 0 {
		return nil, ErrNotFound
	}
	return &l.queues[i], nil
}

// downQueues tells a queue the broker refuses because its node is down
// from one that does not exist: through AMQP both are NOT_FOUND, and the
// management API lists the first (queueList).
type downQueues struct{ list queueList }

// add reports a queue AMQP did not find that the management API lists on
// a node that is down (TOPO_QUEUE_UNAVAILABLE), and whether it did.
func (d *downQueues) add(ctx context.Context, r *findings.Report, m *Management, j Job, name, what string) bool {
	if m == nil {
		return false
	}
	q, err := d.list.find(ctx, m, name)
	if err != nil || q.State == "running" {
		return false // not listed (or the list failed, or it runs): missing, as AMQP says
	}
	r.Add(RuleQueueUnavailable.New(name, fmt.Sprintf("job %s: %s %q exists but is unavailable (state %s): %s", j.Name, what, name,
		orUnknown(q.State), placement(q))))
	return true
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
