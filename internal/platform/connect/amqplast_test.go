package connect

import (
	"context"
	"slices"
	"testing"
)

func TestLastOfPutsTheLostNodeBehind(t *testing.T) {
	addrs := []string{"amqp://u:p@127.0.0.1:5701/", "amqp://u:p@127.0.0.1:5702/", "amqp://u:p@127.0.0.1:5703/"}
	got := lastOf(addrs, "127.0.0.1:5701")
	want := []string{addrs[1], addrs[2], addrs[0]}
	if !slices.Equal(got, want) {
		t.Fatalf("lastOf = %v, want %v", got, want)
	}
	if got := lastOf(addrs, "10.0.0.1:5672"); !slices.Equal(got, addrs) {
		t.Fatalf("an address that is not in the list changed the order: %v", got)
	}
	if hp := AMQPHostPort("amqp://guest:guest@localhost/"); hp != "localhost:5672" {
		t.Fatalf("AMQPHostPort = %q, want localhost:5672 (the default port)", hp)
	}
}

// TestAMQPDialsTheLastAddressLast: the broker first, a listener that counts
// and drops connections second; with the broker's address named last, every
// dial tries the counting listener first and still connects to the broker.
func TestAMQPDialsTheLastAddressLast(t *testing.T) {
	ui, live := liveAMQP(t)
	counting, accepted := droppingListener(t)
	ctx := WithAMQPLast(context.Background(), live)
	conn, err := AMQP(ctx, "amqp://"+ui+"@"+live+","+counting+"/")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if n := accepted.Load(); n != 1 {
		t.Errorf("the other address was tried %d times, want 1 (before the one named last)", n)
	}
	if got := conn.RemoteAddr().String(); got != live {
		t.Errorf("connected to %s, want %s", got, live)
	}
}
