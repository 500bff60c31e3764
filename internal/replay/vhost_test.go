package replay

import (
	"context"
	"net/url"
	"os/exec"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	"github.com/dupctl/dupctl/internal/replay/journal"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestReplayInAVhost replays inside a vhost of its own (created and
// deleted with rabbitmqctl): the URL's vhost is where everything happens.
func TestReplayInAVhost(t *testing.T) {
	base := testenv.Need(t, testenv.AMQP)
	ctl := rabbitmqctl(t)
	vhost := testenv.UniqueName("vhost")
	if out, err := exec.Command(ctl, "add_vhost", vhost).CombinedOutput(); err != nil {
		t.Fatalf("add_vhost: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(ctl, "delete_vhost", vhost).Run() })
	if out, err := exec.Command(ctl, "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*").CombinedOutput(); err != nil {
		t.Fatalf("set_permissions: %v %s", err, out)
	}
	u, err := url.Parse(base)
	must(t, err)
	u.Path = "/" + vhost
	vurl := u.String()
	conn, err := amqp.Dial(vurl)
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	must(t, err)
	for _, q := range []string{"dlq", "work"} {
		_, err := ch.QueueDeclare(q, true, false, false, false, nil)
		must(t, err)
	}
	must(t, ch.PublishWithContext(context.Background(), "", "dlq", false, false, amqp.Publishing{MessageId: "v-1",
		Headers: amqp.Table{"x-death": []any{amqp.Table{"queue": "work", "reason": "rejected", "count": int64(1), "time": time.Now()}}}}))

	run := NewRunID()
	res, err := Replay(context.Background(), ReplayDeps{Journal: journal.New(&dlqtest.MemFile{}, run, time.Now),
		Dial: func(context.Context, string) (*amqp.Connection, error) { return amqp.Dial(vurl) }},
		ReplayOptions{Queue: "dlq", Vhost: vhost, Yes: true, Window: 10, Rewrite: Rewrite{Run: run, User: "guest"}})
	must(t, err)
	if res.Counts.Replayed != 1 {
		t.Fatalf("counts: %+v", res.Counts)
	}
	q, err := ch.QueueDeclarePassive("work", true, false, false, false, nil)
	must(t, err)
	if q.Messages != 1 {
		t.Fatalf("work queue in the vhost has %d", q.Messages)
	}
}
