package amqpproxy

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// wire builds method arguments: shorts (uint16), longs (uint32), longlongs (uint64),
// octets (byte) and shortstrs (string), in order.
func wire(fields ...any) []byte {
	var b []byte
	for _, f := range fields {
		switch v := f.(type) {
		case byte:
			b = append(b, v)
		case uint16:
			b = binary.BigEndian.AppendUint16(b, v)
		case uint32:
			b = binary.BigEndian.AppendUint32(b, v)
		case uint64:
			b = binary.BigEndian.AppendUint64(b, v)
		case string:
			b = append(append(b, byte(len(v))), v...)
		}
	}
	return b
}

// TestDecode: every method the proxy reads, its fields in amqp0-9-1.xml's
// order; a method cut short is an error naming it; others are KindNone.
func TestDecode(t *testing.T) {
	cases := []struct {
		name      string
		class, id uint16
		args      []byte
		want      Event
	}{
		{"deliver", classBasic, basicDeliver, wire("ctag", uint64(7), byte(1), "ex", "rk"),
			Event{Kind: KindDeliver, Tag: 7, Redelivered: true, Exchange: "ex", RoutingKey: "rk"}},
		{"get-ok", classBasic, basicGetOk, wire(uint64(9), byte(0), "ex", "rk", uint32(3)),
			Event{Kind: KindDeliver, Tag: 9, Exchange: "ex", RoutingKey: "rk"}},
		{"ack", classBasic, basicAck, wire(uint64(5), byte(1)), Event{Kind: KindAck, Tag: 5, Multiple: true}},
		{"nack", classBasic, basicNack, wire(uint64(6), byte(2)), Event{Kind: KindNack, Tag: 6, Requeue: true}},
		{"nack multiple", classBasic, basicNack, wire(uint64(6), byte(3)),
			Event{Kind: KindNack, Tag: 6, Multiple: true, Requeue: true}},
		{"reject", classBasic, basicReject, wire(uint64(4), byte(1)), Event{Kind: KindReject, Tag: 4, Requeue: true}},
		{"publish", classBasic, basicPublish, wire(uint16(0), "ex", "rk", byte(0)),
			Event{Kind: KindPublish, Exchange: "ex", RoutingKey: "rk"}},
		{"consume", classBasic, basicConsume, wire(uint16(0), "q", "ctag", byte(2)), Event{Kind: KindConsume, Queue: "q", NoAck: true}},
		{"consume-ok", classBasic, basicConsumeOk, wire("ctag"), Event{Kind: KindConsumeOk}},
		{"queue.declare", classQueue, queueDeclare, wire(uint16(0), "q", byte(0)), Event{Kind: KindQueueDeclare, Queue: "q"}},
		{"queue.declare-ok", classQueue, queueDeclareOk, wire("q", uint32(1), uint32(0)), Event{Kind: KindDeclareOk, Queue: "q"}},
		{"exchange.declare", classExchange, exchangeDeclare, wire(uint16(0), "ex", "topic"),
			Event{Kind: KindExchangeDeclare, Exchange: "ex"}},
		{"connection.close", classConnection, connectionClose, wire(uint16(320), "forced", uint16(0), uint16(0)),
			Event{Kind: KindConnectionClose, ReplyCode: 320, ReplyText: "forced"}},
		{"channel.close", classChannel, channelClose, wire(uint16(406), "precondition", uint16(0), uint16(0)),
			Event{Kind: KindChannelClose, ReplyCode: 406, ReplyText: "precondition"}},
		{"basic.qos", classBasic, 10, wire(uint16(1)), Event{}},
		{"connection.start", classConnection, 10, nil, Event{}},
	}
	for _, c := range cases {
		c.want.Channel = 3
		got, err := Decode(3, Method{Class: c.class, ID: c.id, Args: c.args})
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
		if c.want.Kind == KindNone || c.want.Kind == KindConsumeOk {
			continue
		}
		// Every field read: cut before the last one it needs.
		for n := range c.args {
			got, err := Decode(3, Method{Class: c.class, ID: c.id, Args: c.args[:n]})
			if err == nil {
				// A prefix can hold every field read (trailing ones are skipped).
				continue
			}
			if !errors.Is(err, errShort) || err.Error() != c.want.Kind.String()+": "+errShort.Error() ||
				!reflect.DeepEqual(got, Event{}) {
				t.Errorf("%s cut to %d bytes: got %+v, %v", c.name, n, got, err)
			}
		}
		if _, err := Decode(3, Method{Class: c.class, ID: c.id}); err == nil {
			t.Errorf("%s with no arguments: no error", c.name)
		}
	}
}
