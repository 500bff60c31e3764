package topology

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// ClusterJobs are the jobs of the queues recorded in
// testdata/cluster-3.10.8 (a 3-node RabbitMQ 3.10.8 cluster started by
// .ci/rabbitmq-cluster): payments on quorum queues with a classic retry
// queue on node a, emails on a classic queue on node c with a quorum DLQ.
var ClusterJobs = []Job{
	{Name: "payments", Queue: "payments", DLQ: "payments.dlq", RetryQueue: "payments.retry"},
	{Name: "emails", Queue: "emails", DLQ: "emails.dlq"},
}

// FixtureServer is the management API recorded in dir.
func FixtureServer(t testing.TB, dir string) *Management {
	t.Helper()
	m, err := NewManagement(testenv.ManagementFixture(t, dir), "/")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// placementsText is a map in one line per queue, for comparing.
func placementsText(m *Map) []string {
	var out []string
	for _, q := range m.Queues {
		out = append(out, fmt.Sprintf("%s %s exists=%v leader=%s members=%s offline=%s uses=%s", q.Queue, q.Type, q.Exists, short(q.Leader),
			shorts(q.Members), shorts(q.Offline), strings.Join(q.Uses, "; ")))
	}
	return out
}

// short is a recorded node's letter: dupctl-0865e2-b@localhost is b.
func short(n string) string {
	if i := strings.Index(n, "@"); i > 0 {
		return n[i-1 : i]
	}
	return n
}

func shorts(ns []string) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = short(n)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestReadMapRecorded reads the recorded cluster, whole and with node c
// stopped: the nodes and whether they run, each quorum queue's leader and
// members, the members not online, and a classic queue on node c, which
// the queue's own endpoint answers 404 for while c is down (the list
// still shows it, state down).
func TestReadMapRecorded(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		running string
		want    []string
	}{
		{"up", "a b c", []string{
			"payments quorum exists=true leader=a members=a,b,c offline= uses=job payments: work queue",
			"payments.dlq quorum exists=true leader=b members=a,b,c offline= uses=job payments: DLQ",
			"payments.retry classic exists=true leader=a members=a offline= uses=job payments: retry queue",
			"emails classic exists=true leader=c members=c offline= uses=job emails: work queue",
			"emails.dlq quorum exists=true leader=c members=a,b,c offline= uses=job emails: DLQ",
		}},
		{"node-c-down", "a b", []string{
			"payments quorum exists=true leader=a members=a,b,c offline=c uses=job payments: work queue",
			"payments.dlq quorum exists=true leader=b members=a,b,c offline=c uses=job payments: DLQ",
			"payments.retry classic exists=true leader=a members=a offline= uses=job payments: retry queue",
			"emails classic exists=true leader=c members=c offline=c uses=job emails: work queue",
			// Its leader was on c: b was elected.
			"emails.dlq quorum exists=true leader=b members=a,b,c offline=c uses=job emails: DLQ",
		}},
		// Recorded from another cluster of the same shape (its own node
		// names): b stopped, then c. The quorum queues led from a or
		// moved to a keep a leader; emails.dlq, led from c, has none.
		{"nodes-b-c-down", "a", []string{
			"payments quorum exists=true leader=a members=a,b,c offline=b,c uses=job payments: work queue",
			"payments.dlq quorum exists=true leader=a members=a,b,c offline=b,c uses=job payments: DLQ",
			"payments.retry classic exists=true leader=a members=a offline= uses=job payments: retry queue",
			"emails classic exists=true leader=c members=c offline=c uses=job emails: work queue",
			"emails.dlq quorum exists=true leader= members=a,b,c offline=b,c uses=job emails: DLQ",
		}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			m, err := ReadMap(context.Background(), FixtureServer(t, filepath.Join("testdata", "cluster-3.10.8", tc.dir)), ClusterJobs)
			if err != nil {
				t.Fatal(err)
			}
			var running []string
			for _, n := range m.Nodes {
				if n.Running {
					running = append(running, short(n.Name))
				}
			}
			if len(m.Nodes) != 3 || strings.Join(running, " ") != tc.running || m.NodesUnknown != "" {
				t.Errorf("nodes %+v (%s), want 3 with %s running", m.Nodes, m.NodesUnknown, tc.running)
			}
			if got := placementsText(m); !slices.Equal(got, tc.want) {
				t.Errorf("placements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestReadMapMissingAndShared: a queue the broker does not have is in the
// map as not existing; a DLQ two jobs share is one queue with both uses;
// without the node list the map says why.
func TestReadMapMissingAndShared(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"queue-payments.json", "queue-payments.dlq.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "cluster-3.10.8", "up", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	m, err := ReadMap(context.Background(), FixtureServer(t, dir), []Job{
		{Name: "payments", Queue: "payments", DLQ: "payments.dlq"}, {Name: "refunds", Queue: "refunds", DLQ: "payments.dlq"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"payments quorum exists=true leader=a members=a,b,c offline= uses=job payments: work queue",
		"payments.dlq quorum exists=true leader=b members=a,b,c offline= uses=job payments: DLQ; job refunds: DLQ",
		"refunds  exists=false leader= members= offline= uses=job refunds: work queue",
	}
	if got := placementsText(m); !slices.Equal(got, want) {
		t.Errorf("placements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(m.Nodes) != 0 || !strings.Contains(m.NodesUnknown, "monitoring tag") {
		t.Errorf("no node list: nodes %v, why %q", m.Nodes, m.NodesUnknown)
	}
}

// TestReadMapSingleNode: on the one broker of the integration tests, the
// map has one running node and every queue on it, quorum or classic.
func TestReadMapSingleNode(t *testing.T) {
	ctx := context.Background()
	conn, err := amqp.Dial(testenv.Need(t, testenv.AMQP))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	mgmt, err := NewManagement(testenv.Need(t, testenv.Management), "/")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.UniqueName("tmap")
	for name, args := range map[string]amqp.Table{p: {"x-queue-type": "quorum"}, p + ".dlq": nil} {
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ch.QueueDelete(name, false, false, false) })
	}
	r, err := Run(ctx, Prober{conn}, mgmt, []Job{{Name: "one", Queue: p, DLQ: p + ".dlq"}})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Map
	if m == nil || len(m.Nodes) != 1 || !m.Nodes[0].Running || len(m.Queues) != 2 {
		t.Fatalf("single node: %+v", m)
	}
	node := m.Nodes[0].Name
	for _, q := range m.Queues {
		if !q.Exists || q.Leader != node || !slices.Equal(q.Members, []string{node}) || len(q.Offline) != 0 {
			t.Errorf("%s (%s): leader %s members %v offline %v, want all on %s", q.Queue, q.Type, q.Leader, q.Members, q.Offline, node)
		}
	}
	if m.Queues[0].Type != "quorum" || m.Queues[1].Type != "classic" {
		t.Errorf("types %s %s", m.Queues[0].Type, m.Queues[1].Type)
	}
}

// TestQueueUnavailable: a queue AMQP does not find (NOT_FOUND, as RabbitMQ
// answers for a classic queue whose node is down) that the management API
// lists with state down is TOPO_QUEUE_UNAVAILABLE, naming its node, not
// TOPO_QUEUE_MISSING; one it lists running, or does not list, is missing.
// The queues are asked of the test broker (which has none of them), the
// list is the one recorded with node c down.
func TestQueueUnavailable(t *testing.T) {
	conn, err := amqp.Dial(testenv.Need(t, testenv.AMQP))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	mgmt := FixtureServer(t, filepath.Join("testdata", "cluster-3.10.8", "node-c-down"))
	p := testenv.UniqueName("tdown")
	r, err := Check(context.Background(), Prober{conn}, mgmt, []Job{
		{Name: "emails", Queue: "emails"}, {Name: "payments", Queue: "payments"}, {Name: "other", Queue: p}})
	if err != nil {
		t.Fatal(err)
	}
	got := codes(r)
	if !slices.Equal(got[RuleQueueUnavailable.Code], []string{"emails"}) ||
		!slices.Equal(got[RuleQueueMissing.Code], []string{"payments", p}) {
		t.Fatalf("findings %v", got)
	}
	for _, f := range r.Findings {
		if f.Code == RuleQueueUnavailable.Code && !strings.Contains(f.Message, "(state down): on node dupctl-0865e2-c@localhost") {
			t.Errorf("message %q: want the state and the node", f.Message)
		}
	}
	if !slices.Contains(r.Checks, RuleQueueUnavailable.Code) {
		t.Errorf("checks %v", r.Checks)
	}
}

// TestNoMajorityRecorded: with two of the three nodes stopped (the API
// recorded so), each quorum work queue or DLQ is TOPO_QUEUE_UNAVAILABLE:
// no majority, one member of three online, named - whether the API still
// names a leader and says running (payments, payments.dlq) or names none
// (emails.dlq). The classic queue on c is not read here (its endpoint
// answers 404: Check reports it through AMQP and the queue list).
func TestNoMajorityRecorded(t *testing.T) {
	ctx := context.Background()
	m := FixtureServer(t, filepath.Join("testdata", "cluster-3.10.8", "nodes-b-c-down"))
	nodes, err := m.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &findings.Report{}
	for _, j := range ClusterJobs {
		if err := checkCluster(ctx, r, m, j, nodes); err != nil {
			t.Fatal(err)
		}
	}
	got := codes(r)
	if !slices.Equal(got[RuleQueueUnavailable.Code], []string{"payments", "payments.dlq", "emails.dlq"}) {
		t.Fatalf("findings %v", got)
	}
	const a = "dupctl-fcfedc-a@localhost"
	want := map[string]string{
		"payments": `job payments: quorum queue "payments" (work queue) has no majority: 1 of its 3 members online (` + a +
			"), so it cannot accept or deliver messages until 2 are",
		"payments.dlq": `job payments: quorum queue "payments.dlq" (DLQ) has no majority: 1 of its 3 members online (` + a +
			"), so it cannot accept or deliver messages until 2 are",
		"emails.dlq": `job emails: quorum queue "emails.dlq" (DLQ) has no majority: 1 of its 3 members online (` + a +
			"), so it cannot accept or deliver messages until 2 are",
	}
	for _, f := range r.Findings {
		if f.Code != RuleQueueUnavailable.Code {
			continue
		}
		if f.Message != want[f.Subject] {
			t.Errorf("%s: %q\nwant %q", f.Subject, f.Message, want[f.Subject])
		}
		ev := strings.Join(f.Evidence, "; ")
		leader := "leader: " + a + " as the API reports it"
		if f.Subject == "emails.dlq" {
			leader = "leader: none elected"
		}
		if !strings.Contains(ev, "offline: dupctl-fcfedc-") || strings.Count(strings.SplitAfter(ev, "offline: ")[1], "@") < 2 ||
			!strings.Contains(ev, leader) {
			t.Errorf("%s evidence: %s", f.Subject, ev)
		}
	}
	// The whole cluster recorded up: no finding.
	up := FixtureServer(t, filepath.Join("testdata", "cluster-3.10.8", "up"))
	if nodes, err = up.Nodes(ctx); err != nil {
		t.Fatal(err)
	}
	r = &findings.Report{}
	for _, j := range ClusterJobs {
		if err := checkCluster(ctx, r, up, j, nodes); err != nil {
			t.Fatal(err)
		}
	}
	if got := codes(r); len(got[RuleQueueUnavailable.Code]) != 0 {
		t.Errorf("cluster up: %v", got)
	}
}
