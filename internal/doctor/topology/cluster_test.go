package topology

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestRabbitClusterTopology: on the 3-node cluster, through the URL naming
// every node and node a's management API, doctor's topology check finds a
// classic work queue and a classic DLQ (each on one node), a quorum queue
// without a delivery limit (naming its leader and members), and nothing on
// a quorum work queue with a delivery limit and a quorum DLQ.
func TestRabbitClusterTopology(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	ctx := context.Background()
	conn, err := connect.AMQP(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	mgmt, err := NewManagement(c.Management, "/")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.UniqueName("ctopo")
	declare := func(name string, args amqp.Table) {
		t.Helper()
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ch.QueueDelete(name, false, false, false) })
	}
	quorum := amqp.Table{"x-queue-type": "quorum"}
	declare(p+".dlq", quorum)
	declare(p+".classic.dlq", nil)
	toDLQ := func(extra amqp.Table) amqp.Table {
		args := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": p + ".dlq"}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	declare(p+".good", toDLQ(amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(5)}))
	declare(p+".classic", toDLQ(nil))
	declare(p+".nolimit", toDLQ(quorum))
	declare(p+".classicdlq", toDLQ(amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(5),
		"x-dead-letter-routing-key": p + ".classic.dlq"}))

	r, err := Check(ctx, Prober{conn}, mgmt, []Job{{Name: "good", Queue: p + ".good", DLQ: p + ".dlq"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 || !slices.Contains(r.Checks, RuleClassicOnCluster.Code) {
		t.Fatalf("correct stack: %v (checked %v)", codes(r), r.Checks)
	}
	r, err = Check(ctx, Prober{conn}, mgmt, []Job{
		{Name: "classic", Queue: p + ".classic", DLQ: p + ".dlq"},
		{Name: "nolimit", Queue: p + ".nolimit", DLQ: p + ".dlq"},
		{Name: "classicdlq", Queue: p + ".classicdlq", DLQ: p + ".classic.dlq"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := codes(r)
	if c := got[RuleClassicOnCluster.Code]; !slices.Equal(c, []string{p + ".classic", p + ".classic.dlq"}) {
		t.Errorf("%s: %v, want the classic work queue and the classic DLQ", RuleClassicOnCluster.Code, c)
	}
	if c := got[RuleNoDeliveryLimit.Code]; !slices.Equal(c, []string{p + ".nolimit"}) {
		t.Errorf("%s: %v", RuleNoDeliveryLimit.Code, c)
	}
	if len(r.Findings) != 3 {
		t.Errorf("findings: %v", got)
	}
	for _, f := range r.Findings {
		ev := strings.Join(f.Evidence, " ")
		switch f.Code {
		case RuleClassicOnCluster.Code:
			if !strings.Contains(f.Message, "a cluster of 3 nodes: it lives on "+c.Nodes[0].Name) || ev != "on node "+c.Nodes[0].Name {
				t.Errorf("classic queue: %s (%s), want it on %s, where it was declared", f.Message, ev, c.Nodes[0].Name)
			}
		case RuleNoDeliveryLimit.Code:
			if !strings.Contains(ev, "leader on "+c.Nodes[0].Name) || strings.Count(ev, "dupctl-") != 7 {
				t.Errorf("quorum queue: %q, want its leader on %s and 3 members, 3 online", ev, c.Nodes[0].Name)
			}
		}
	}
}
