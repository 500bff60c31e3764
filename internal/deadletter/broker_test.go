package deadletter

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestExportRoundTripThroughRabbitMQ publishes every field type, reads it
// back as an export record, parses the record, publishes it again and
// checks that RabbitMQ delivers the same properties, headers and body.
func TestExportRoundTripThroughRabbitMQ(t *testing.T) {
	ch, queue := tempQueue(t)
	h := everyType()
	delete(h, "table") // a field name that is not UTF-8 is covered by the codec test
	h["table"] = amqp.Table{"nested": amqp.Table{"deep": uint8(7)}}
	pub := amqp.Publishing{
		ContentType: "application/octet-stream", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 3,
		CorrelationId: "c-1", ReplyTo: "reply.q", Expiration: "600000", MessageId: "m-typed",
		Timestamp: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Type: "payment", AppId: "billing",
		Headers: h, Body: []byte{0xff, 0x00, 'h', 'i', 0xfe},
	}
	publish := func(p amqp.Publishing) amqp.Delivery {
		must(t, ch.PublishWithContext(context.Background(), "", queue, false, false, p))
		return getOne(t, ch, queue)
	}
	first := publish(pub)
	rec, err := FromDelivery(&first).MarshalRecord(time.Now(), queue, "/")
	must(t, err)
	if !json.Valid(rec) || !bytes.Contains(rec, []byte(`"body_encoding":"base64"`)) {
		t.Fatalf("record: %s", rec)
	}
	m, err := ParseRecord(rec)
	must(t, err)
	second := publish(m.Publishing())
	a, b := FromDelivery(&first), FromDelivery(&second)
	if !reflect.DeepEqual(canon(a.Props.Headers), canon(b.Props.Headers)) {
		t.Fatalf("headers changed:\nfirst  %#v\nsecond %#v", canon(a.Props.Headers), canon(b.Props.Headers))
	}
	a.Props.Headers, b.Props.Headers = nil, nil
	a.Props.Timestamp, b.Props.Timestamp = a.Props.Timestamp.UTC(), b.Props.Timestamp.UTC()
	if !reflect.DeepEqual(a.Props, b.Props) || !bytes.Equal(a.Body, b.Body) {
		t.Fatalf("properties or body changed:\n%#v\n%#v", a.Props, b.Props)
	}
	if !reflect.DeepEqual(canon(first.Headers), canon(h)) {
		t.Fatalf("RabbitMQ changed a type on the first trip:\nsent %#v\ngot  %#v", canon(h), canon(first.Headers))
	}
}

// tempQueue declares a queue of the test's own on the shared broker.
func tempQueue(t *testing.T) (*amqp.Channel, string) {
	t.Helper()
	conn, err := amqp.Dial(testenv.Need(t, testenv.AMQP))
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	must(t, err)
	queue := testenv.UniqueName("deadletter")
	_, err = ch.QueueDeclare(queue, false, true, false, false, nil)
	must(t, err)
	return ch, queue
}

// getOne takes the one message a queue holds (publishing is asynchronous:
// it may take a moment to arrive).
func getOne(t *testing.T, ch *amqp.Channel, queue string) amqp.Delivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, ok, err := ch.Get(queue, true)
		must(t, err)
		if ok {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message arrived in %s", queue)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
