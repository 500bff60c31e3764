package topology

import (
	"context"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

func codes(r *findings.Report) map[string][]string {
	out := map[string][]string{}
	for _, f := range r.Findings {
		out[f.Code] = append(out[f.Code], f.Subject)
	}
	return out
}

// TestTopology sets up a broken and a correct stack on the real broker and
// checks that every planted problem is found with its code, and nothing on
// the correct one.
func TestTopology(t *testing.T) {
	ctx := context.Background()
	conn, err := connect.AMQP(ctx, testenv.Need(t, testenv.AMQP))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	mgmt, err := NewManagement(testenv.Need(t, testenv.Management), "/")
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.UniqueName("topo")
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	declare := func(name string, args amqp.Table) {
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ch.QueueDelete(name, false, false, false) })
	}
	exchange := func(name string) {
		if err := ch.ExchangeDeclare(name, "direct", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ch.ExchangeDelete(name, false, false) })
	}
	// Correct: work queue -> DLX -> DLQ bound; retry queue back to work.
	exchange(p + ".dlx")
	exchange(p + ".work.x")
	declare(p+".good.dlq", nil)
	if err := ch.QueueBind(p+".good.dlq", "job", p+".dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	declare(p+".good", amqp.Table{"x-dead-letter-exchange": p + ".dlx", "x-dead-letter-routing-key": "job"})
	declare(p+".good.retry", amqp.Table{"x-dead-letter-exchange": p + ".work.x", "x-message-ttl": int32(5000)})
	declare(p+".goodq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(5), "x-dead-letter-exchange": p + ".dlx",
		"x-dead-letter-routing-key": "job"})
	// Dead-lettering through the default exchange, common and right when
	// the routing key names the DLQ (issue 27: doctor stopped with exit 3
	// on it, reading "" as the list of every exchange).
	declare(p+".viadefault", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": p + ".good.dlq"})
	// Broken ones.
	declare(p+".nodlx", nil)
	declare(p+".unrouted", amqp.Table{"x-dead-letter-exchange": p + ".nowhere"})
	declare(p+".quorum", amqp.Table{"x-queue-type": "quorum", "x-dead-letter-exchange": p + ".dlx", "x-dead-letter-routing-key": "job"})
	declare(p+".noretryback", nil)
	declare(p+".defaultnokey", amqp.Table{"x-dead-letter-exchange": ""})
	declare(p+".defaultnoqueue", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": p + ".nosuchdlq"})
	declare(p+".autoack", amqp.Table{"x-dead-letter-exchange": p + ".dlx", "x-dead-letter-routing-key": "job"})
	cch, _ := conn.Channel()
	if _, err := cch.Consume(p+".autoack", "lazy-consumer", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	// The management API learns about consumers from its statistics,
	// collected every few seconds: wait until it sees this one.
	deadline := time.Now().Add(15 * time.Second)
	for {
		q, err := mgmt.Queue(ctx, p+".autoack")
		if err == nil && len(q.Details) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the management API never listed the consumer: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}

	good := []Job{
		{Name: "good", Queue: p + ".good", DLQ: p + ".good.dlq", RetryQueue: p + ".good.retry"},
		{Name: "goodq", Queue: p + ".goodq", DLQ: p + ".good.dlq"},
		{Name: "viadefault", Queue: p + ".viadefault", DLQ: p + ".good.dlq"},
	}
	r, err := Check(ctx, Prober{conn}, mgmt, good)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 {
		t.Fatalf("correct stack: %v", codes(r))
	}
	bad := []Job{
		{Name: "missing", Queue: p + ".missing"},
		{Name: "nodlx", Queue: p + ".nodlx", DLQ: p + ".nodlx.dlq"},
		{Name: "unrouted", Queue: p + ".unrouted"},
		{Name: "quorum", Queue: p + ".quorum"},
		{Name: "retry", Queue: p + ".good", RetryQueue: p + ".noretryback"},
		{Name: "autoack", Queue: p + ".autoack"},
		{Name: "defaultnokey", Queue: p + ".defaultnokey"},
		{Name: "defaultnoqueue", Queue: p + ".defaultnoqueue"},
	}
	r, err = Check(ctx, Prober{conn}, mgmt, bad)
	if err != nil {
		t.Fatal(err)
	}
	got := codes(r)
	want := map[string]string{
		RuleQueueMissing.Code:    p + ".missing",
		RuleNoDLX.Code:           p + ".nodlx",
		RuleDLQMissing.Code:      p + ".nodlx.dlq",
		RuleDLXUnrouted.Code:     p + ".unrouted",
		RuleNoDeliveryLimit.Code: p + ".quorum",
		RuleRetryMissing.Code:    p + ".noretryback",
		RuleAutoAck.Code:         p + ".autoack",
	}
	for code, subject := range want {
		if code == RuleDLXUnrouted.Code {
			continue
		}
		if len(got[code]) != 1 || got[code][0] != subject {
			t.Errorf("%s: got %v, want [%s]", code, got[code], subject)
		}
	}
	if u := got[RuleDLXUnrouted.Code]; len(u) != 3 || u[0] != p+".unrouted" || u[1] != p+".defaultnokey" || u[2] != p+".defaultnoqueue" {
		t.Errorf("%s: got %v, want the unrouted queue and the two through the default exchange", RuleDLXUnrouted.Code, u)
	}
	if len(r.Findings) != len(want)+2 {
		t.Errorf("findings: %v", got)
	}
	// Without the management API only existence is checked, and it says so.
	r, err = Check(ctx, Prober{conn}, nil, bad)
	if err != nil {
		t.Fatal(err)
	}
	got = codes(r)
	if len(got[RuleManagementUnavailable.Code]) != 1 || len(got[RuleQueueMissing.Code]) != 1 || len(got[RuleNoDLX.Code]) != 0 {
		t.Errorf("AMQP only: %v", got)
	}
}
