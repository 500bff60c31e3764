package connect

import (
	"context"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestRabbitClusterFailover: on a real 3-node cluster, the node a dial
// reached stops (stop_app: its listener closes, its connections drop);
// the next dial with the same URL reaches the next node, and once the node
// is back the dial goes to it again (in order, not sticky).
func TestRabbitClusterFailover(t *testing.T) {
	c := testenv.NeedRabbitCluster(t)
	ctx := context.Background()
	conn, err := AMQP(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := conn.RemoteAddr().String(); got != c.Nodes[0].Addr {
		t.Fatalf("connected to %s, want the first address %s", got, c.Nodes[0].Addr)
	}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	c.StopApp(t, c.Nodes[0].Name)
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the connection to the stopped node is still open")
	}
	start := time.Now()
	next, err := AMQP(ctx, c.URL)
	if err != nil {
		t.Fatalf("with %s stopped: %v", c.Nodes[0].Name, err)
	}
	t.Logf("with %s stopped, the dial reached %s in %s", c.Nodes[0].Name, next.RemoteAddr(), time.Since(start).Round(time.Millisecond))
	if got := next.RemoteAddr().String(); got != c.Nodes[1].Addr {
		t.Errorf("connected to %s, want the next address %s", got, c.Nodes[1].Addr)
	}
	next.Close()
	c.StartApp(t, c.Nodes[0].Name)
	back, err := AMQP(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if got := back.RemoteAddr().String(); got != c.Nodes[0].Addr {
		t.Errorf("after the restart: connected to %s, want %s again", got, c.Nodes[0].Addr)
	}
}
