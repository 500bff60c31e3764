package consume

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestPrefetchFor(t *testing.T) {
	for _, tc := range []struct {
		window      int
		budget, avg int64
		want        int
	}{
		{1000, 0, 1 << 20, 1000},         // no budget: the window
		{1000, 64 << 20, 1 << 10, 1000},  // small messages: the window
		{1000, 64 << 20, 100 << 10, 655}, // 100 KiB
		{1000, 64 << 20, 8 << 20, 8},     // 8 MiB
		{1000, 64 << 20, 128 << 20, 1},   // larger than the budget: one at a time
		{1000, 64 << 20, 0, 1000},        // empty bodies
		{1, 64 << 20, 1 << 10, 1},        // never above the window
	} {
		if got := prefetchFor(tc.window, tc.budget, tc.avg); got != tc.want {
			t.Errorf("prefetchFor(%d, %d, %d) = %d, want %d", tc.window, tc.budget, tc.avg, got, tc.want)
		}
	}
}

// With a byte budget the broker pushes about budget bytes ahead, whatever
// the message count window says: a 100-message window of 1 MiB messages
// under a 4 MiB budget holds 1 (the probe) + 4, not 20.
func TestConsumerPrefetchFollowsMessageSize(t *testing.T) {
	r := dlqtest.NewRig(t, "")
	body := bytes.Repeat([]byte("x"), 1<<20)
	must(t, r.Ch.Confirm(false))
	for i := 0; i < 20; i++ {
		dc, err := r.Ch.PublishWithDeferredConfirmWithContext(context.Background(), "", r.DLQ, false, false, amqp.Publishing{Body: body})
		must(t, err)
		if !dc.Wait() {
			t.Fatal("publish nacked")
		}
	}
	conn, err := r.Dial(context.Background(), "consume")
	must(t, err)
	t.Cleanup(func() { conn.Close() })

	// unacked reads what the broker sends without acking anything, until
	// it stops sending.
	unacked := func(c *Consumer) int {
		n := 0
		for {
			select {
			case si, ok := <-c.Deliveries():
				if !ok {
					t.Fatal("consumer closed")
				}
				must(t, c.Seen(si.Delivery))
				n++
			case <-time.After(time.Second):
				return n
			}
		}
	}

	c, err := New(conn, r.DLQ, 100, 4<<20, false, "test-budget")
	must(t, err)
	if n := unacked(c); n != 5 || c.prefetchWindow() != 4 {
		t.Errorf("with a 4 MiB budget: %d unacked, prefetch %d; want 5 and 4", n, c.prefetchWindow())
	}
	must(t, c.Close()) // everything unacked goes back

	c, err = New(conn, r.DLQ, 100, -1, false, "test-nobudget")
	must(t, err)
	if n := unacked(c); n != 20 || c.prefetchWindow() != 100 {
		t.Errorf("without a budget: %d unacked, prefetch %d; want 20 and 100", n, c.prefetchWindow())
	}
	must(t, c.Close())
}

func must(t testing.TB, err error) {
	t.Helper()
	dlqtest.Must(t, err)
}
