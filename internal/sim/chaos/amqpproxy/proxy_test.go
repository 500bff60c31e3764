package amqpproxy_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/sim/chaos/amqpproxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

type recorder struct {
	mu       sync.Mutex
	events   []string
	withhold bool
	conns    []*amqpproxy.Conn

	// After for a delivery closes entered and waits for release.
	entered, release chan struct{}
	// seen, when set, is told every event recorded.
	seen chan string
}

// note records an event; the caller holds r.mu.
func (r *recorder) note(e string) {
	r.events = append(r.events, e)
	if r.seen != nil {
		r.seen <- e
	}
}

// waitFor waits until the recorder has recorded the event want.
func (r *recorder) waitFor(t *testing.T, want string) {
	t.Helper()
	for {
		select {
		case e := <-r.seen:
			if e == want {
				return
			}
		case <-time.After(time.Minute):
			t.Fatalf("the proxy never recorded %q", want)
		}
	}
}

func (r *recorder) Before(c *amqpproxy.Conn, ev *amqpproxy.Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Kind == amqpproxy.KindAck && r.withhold {
		r.note("withheld ack")
		r.conns = append(r.conns, c)
		return false
	}
	return true
}

func (r *recorder) After(c *amqpproxy.Conn, ev *amqpproxy.Event) {
	if ev.Kind == amqpproxy.KindDeliver && r.entered != nil {
		close(r.entered)
		<-r.release
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Kind {
	case amqpproxy.KindDeliver:
		body := string(ev.Content)
		r.note("deliver " + body[strings.Index(body, "order-"):] + map[bool]string{true: " redelivered"}[ev.Redelivered])
	case amqpproxy.KindAck, amqpproxy.KindConsume, amqpproxy.KindQueueDeclare:
		r.note(ev.Kind.String())
	}
}

func (r *recorder) Closed(*amqpproxy.Conn) {}

// listen starts a proxy to the broker at raw with rec as its handler,
// closed when the test ends, and returns the URL that reaches it.
func listen(t *testing.T, raw string, rec *recorder) url.URL {
	t.Helper()
	u, _ := url.Parse(raw)
	gate := proxy.NewGate()
	ln, err := proxy.Listen(proxy.Config{Dial: proxy.DialTCP(u.Host), Gate: func() *proxy.Gate { return gate }, Pumps: amqpproxy.Pumps(rec)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	pu := *u
	pu.Host = ln.Addr()
	return pu
}

// TestWithheldAckIsRedelivered consumes through the proxy, withholds the
// ack of the first delivery and closes the connection the way a broker
// does: the broker must redeliver the message, flagged redelivered, to the
// next consumer.
func TestWithheldAckIsRedelivered(t *testing.T) {
	raw := testenv.Need(t, testenv.AMQP)
	rec := &recorder{withhold: true, seen: make(chan string, 64)}
	pu := listen(t, raw, rec)
	queue := testenv.UniqueName("chaos_q")
	admin, err := amqp.Dial(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ach, _ := admin.Channel()
	defer ach.QueueDelete(queue, false, false, false)

	consume := func() (*amqp.Connection, <-chan amqp.Delivery) {
		conn, err := amqp.Dial(pu.String())
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := conn.Channel()
		if _, err := ch.QueueDeclare(queue, false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		ch.Qos(1, 0, false)
		ds, err := ch.Consume(queue, "", false, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return conn, ds
	}
	conn, ds := consume()
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	ctx := context.Background()
	body := strings.Repeat("x", 200_000) + "order-1" // spans several body frames
	if err := ach.PublishWithContext(ctx, "", queue, false, false, amqp.Publishing{Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	d := <-ds
	d.Ack(false)
	rec.waitFor(t, "withheld ack")
	rec.mu.Lock()
	c := rec.conns[0]
	rec.mu.Unlock()
	c.CloseAsServer(320, "CONNECTION_FORCED - dupctl")
	select {
	case e := <-closed:
		if e == nil || e.Code != 320 {
			t.Fatalf("client saw close %v, want code 320", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client never saw the broker-side close")
	}
	rec.mu.Lock()
	rec.withhold = false
	rec.mu.Unlock()
	conn2, ds2 := consume()
	defer conn2.Close()
	select {
	case d := <-ds2:
		if !d.Redelivered {
			t.Fatal("not flagged redelivered")
		}
		d.Ack(false)
	case <-time.After(5 * time.Second):
		t.Fatal("no redelivery")
	}
	rec.waitFor(t, "basic.ack")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := strings.Join(rec.events, "; ")
	want := "queue.declare; basic.consume; deliver order-1; withheld ack; " +
		"queue.declare; basic.consume; deliver order-1 redelivered; basic.ack"
	if got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
}

// TestDeliveryIsToldBeforeTheClientHasIt: the handler learns of a delivery
// before the client can, so nothing the client does on it (a lock or a
// write through another proxy) is recorded before it.
func TestDeliveryIsToldBeforeTheClientHasIt(t *testing.T) {
	rec := &recorder{entered: make(chan struct{}), release: make(chan struct{})}
	pu := listen(t, testenv.Need(t, testenv.AMQP), rec)
	queue := testenv.UniqueName("chaos_q")
	conn, err := amqp.Dial(pu.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	defer ch.QueueDelete(queue, false, false, false)
	if _, err := ch.QueueDeclare(queue, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.PublishWithContext(context.Background(), "", queue, false, false, amqp.Publishing{Body: []byte("order-1")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rec.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was never told of the delivery")
	}
	// Forwarded first (the old order), the delivery reaches the client
	// well within this wait; the handler now holds it.
	select {
	case <-ds:
		close(rec.release)
		t.Fatal("the client had the delivery while the handler was still being told of it")
	case <-time.After(100 * time.Millisecond):
	}
	close(rec.release)
	select {
	case d := <-ds:
		if string(d.Body) != "order-1" {
			t.Fatalf("delivered %q, want order-1", d.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the delivery never reached the client")
	}
}
