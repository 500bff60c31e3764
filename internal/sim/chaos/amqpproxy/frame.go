// Package amqpproxy is a proxy that speaks just enough AMQP 0-9-1 to see a
// worker's deliveries, acks, nacks, rejects, publishes, consumers and
// declared queues, to withhold one frame, and to close a connection the
// way a broker does.
//
// The framing follows the AMQP 0-9-1 specification, section 4.2.3 "General
// Frame Format": every frame after the 8-byte protocol header
// "AMQP\x00\x00\x09\x01" is type (octet: 1 method, 2 content header,
// 3 content body, 8 heartbeat), channel (short), size (long), size octets
// of payload and the frame-end octet 0xCE (206). A method payload starts
// with class-id and method-id (shorts); a content header with class-id,
// weight (shorts), body size (longlong) and property flags; content bodies
// follow until body size octets were sent (sections 4.2.5 and 4.2.6). The
// class and method numbers are those of amqp0-9-1.xml, as shipped in
// rabbitmq/amqp091-go:spec/amqp0-9-1.stripped.extended.xml (basic = 60,
// deliver 60, ack 80, reject 90, nack 120, publish 40, consume 20, get-ok
// 71; queue = 50, declare 10, declare-ok 11; connection = 10, close 50).
package amqpproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Frame types (amqp0-9-1.xml constants frame-method .. frame-heartbeat).
const (
	FrameMethod    = 1
	FrameHeader    = 2
	FrameBody      = 3
	FrameHeartbeat = 8
	frameEnd       = 0xCE
	// maxFrame bounds a frame's size: far above any negotiated frame_max
	// (RabbitMQ's default is 128 KiB), small enough that garbage on the
	// wire cannot make the proxy allocate gigabytes.
	maxFrame = 1 << 27
)

// ProtocolHeader is what an AMQP 0-9-1 client sends first.
var ProtocolHeader = []byte("AMQP\x00\x00\x09\x01")

// Frame is one frame off the wire.
type Frame struct {
	Type    byte
	Channel uint16
	Payload []byte
}

// ErrFrameEnd is a frame that does not end with 0xCE: the stream is not
// AMQP 0-9-1 or lost its framing.
var ErrFrameEnd = errors.New("amqp: frame does not end with 0xCE")

// ReadFrame reads one frame.
func ReadFrame(r *bufio.Reader) (Frame, error) {
	var h [7]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Frame{}, err
	}
	size := binary.BigEndian.Uint32(h[3:7])
	if size > maxFrame {
		return Frame{}, fmt.Errorf("amqp: frame of %d bytes exceeds the proxy's limit", size)
	}
	buf := make([]byte, int(size)+1)
	if _, err := io.ReadFull(r, buf); err != nil {
		return Frame{}, noEOF(err)
	}
	if buf[size] != frameEnd {
		return Frame{}, ErrFrameEnd
	}
	return Frame{Type: h[0], Channel: binary.BigEndian.Uint16(h[1:3]), Payload: buf[:size]}, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Append writes the frame's wire form to b.
func (f Frame) Append(b []byte) []byte {
	b = append(b, f.Type)
	b = binary.BigEndian.AppendUint16(b, f.Channel)
	b = binary.BigEndian.AppendUint32(b, uint32(len(f.Payload)))
	b = append(b, f.Payload...)
	return append(b, frameEnd)
}

// Method is a method frame's class, method and arguments.
type Method struct {
	Class, ID uint16
	Args      []byte
}

// Method decodes a method frame's payload.
func (f Frame) Method() (Method, bool) {
	if f.Type != FrameMethod || len(f.Payload) < 4 {
		return Method{}, false
	}
	return Method{Class: binary.BigEndian.Uint16(f.Payload), ID: binary.BigEndian.Uint16(f.Payload[2:]), Args: f.Payload[4:]}, true
}

// Class and method ids this proxy reads.
const (
	classConnection = 10
	classChannel    = 20
	classExchange   = 40
	classQueue      = 50
	classBasic      = 60

	connectionClose   = 50
	connectionCloseOk = 51
	channelClose      = 40
	exchangeDeclare   = 10
	queueDeclare      = 10
	queueDeclareOk    = 11
	basicConsume      = 20
	basicConsumeOk    = 21
	basicPublish      = 40
	basicDeliver      = 60
	basicGetOk        = 71
	basicAck          = 80
	basicReject       = 90
	basicNack         = 120
)

// args reads a method's arguments in order; the first error sticks.
type args struct {
	b   []byte
	err error
}

var errShort = errors.New("amqp: method arguments too short")

func (a *args) need(n int) bool {
	if a.err != nil {
		return false
	}
	if len(a.b) < n {
		a.err = errShort
		return false
	}
	return true
}

func (a *args) octet() byte {
	if !a.need(1) {
		return 0
	}
	v := a.b[0]
	a.b = a.b[1:]
	return v
}

func (a *args) short() uint16 {
	if !a.need(2) {
		return 0
	}
	v := binary.BigEndian.Uint16(a.b)
	a.b = a.b[2:]
	return v
}

func (a *args) long() uint32 {
	if !a.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(a.b)
	a.b = a.b[4:]
	return v
}

func (a *args) longlong() uint64 {
	if !a.need(8) {
		return 0
	}
	v := binary.BigEndian.Uint64(a.b)
	a.b = a.b[8:]
	return v
}

func (a *args) shortstr() string {
	n := int(a.octet())
	if !a.need(n) {
		return ""
	}
	s := string(a.b[:n])
	a.b = a.b[n:]
	return s
}

// Event is what one method (with its content, when it carries one) says.
type Event struct {
	Kind        Kind
	Channel     uint16
	Tag         uint64 // delivery tag
	Multiple    bool
	Requeue     bool
	Redelivered bool
	NoAck       bool
	Exchange    string
	RoutingKey  string
	Queue       string
	ReplyCode   uint16
	ReplyText   string
	// Content is the content header's payload followed by the body (the
	// first MaxContent bytes), for deliveries, get-oks and publishes.
	Content  []byte
	BodySize uint64
	// At is when the proxy had the event whole, before forwarding it (set
	// on every event a Handler's After sees): a client's ack is stamped
	// before the broker can answer it (with the next delivery), so the two
	// keep their causal order however the proxy's two directions are
	// scheduled.
	At time.Time
}

// MaxContent bounds how much of a message the proxy keeps to read.
const MaxContent = 1 << 20

// Kind names an event.
type Kind uint8

// The events the proxy reports.
const (
	KindNone Kind = iota
	KindDeliver
	KindAck
	KindNack
	KindReject
	KindPublish
	KindConsume
	KindConsumeOk
	KindQueueDeclare
	KindDeclareOk
	KindExchangeDeclare
	KindConnectionClose
	KindChannelClose
)

var kindNames = [...]string{"none", "basic.deliver", "basic.ack", "basic.nack", "basic.reject", "basic.publish", "basic.consume",
	"basic.consume-ok", "queue.declare", "queue.declare-ok", "exchange.declare", "connection.close", "channel.close"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// HasContent reports whether the event's method is followed by content.
func (k Kind) HasContent() bool { return k == KindDeliver || k == KindPublish }

// Decode reads the methods this proxy cares about; other methods give
// KindNone. Field order per amqp0-9-1.xml.
func Decode(channel uint16, m Method) (Event, error) {
	ev := Event{Channel: channel}
	d, ok := decoders[methodKey{m.Class, m.ID}]
	if !ok {
		return ev, nil
	}
	a := &args{b: m.Args}
	ev.Kind = d.kind
	if d.read != nil {
		d.read(a, &ev)
	}
	if a.err != nil {
		return Event{}, fmt.Errorf("%s: %w", ev.Kind, a.err)
	}
	return ev, nil
}

type methodKey struct{ class, id uint16 }

// decoder is one method's event kind and the reader of its arguments
// (nil: none are read).
type decoder struct {
	kind Kind
	read func(*args, *Event)
}

var decoders = map[methodKey]decoder{
	{classBasic, basicDeliver}:         {KindDeliver, readDeliver},
	{classBasic, basicGetOk}:           {KindDeliver, readGetOk},
	{classBasic, basicAck}:             {KindAck, readAck},
	{classBasic, basicNack}:            {KindNack, readNack},
	{classBasic, basicReject}:          {KindReject, readReject},
	{classBasic, basicPublish}:         {KindPublish, readPublish},
	{classBasic, basicConsume}:         {KindConsume, readConsume},
	{classBasic, basicConsumeOk}:       {KindConsumeOk, nil},
	{classQueue, queueDeclare}:         {KindQueueDeclare, readQueueDeclare},
	{classQueue, queueDeclareOk}:       {KindDeclareOk, readDeclareOk},
	{classExchange, exchangeDeclare}:   {KindExchangeDeclare, readExchangeDeclare},
	{classConnection, connectionClose}: {KindConnectionClose, readClose},
	{classChannel, channelClose}:       {KindChannelClose, readClose},
}

func readDeliver(a *args, ev *Event) {
	a.shortstr() // consumer-tag
	readGetOk(a, ev)
}

// readGetOk reads basic.get-ok, which is basic.deliver without the
// consumer tag.
func readGetOk(a *args, ev *Event) {
	ev.Tag = a.longlong()
	ev.Redelivered = a.octet()&1 != 0
	ev.Exchange = a.shortstr()
	ev.RoutingKey = a.shortstr()
}

func readAck(a *args, ev *Event) {
	ev.Tag = a.longlong()
	ev.Multiple = a.octet()&1 != 0
}

func readNack(a *args, ev *Event) {
	ev.Tag = a.longlong()
	bits := a.octet()
	ev.Multiple, ev.Requeue = bits&1 != 0, bits&2 != 0
}

func readReject(a *args, ev *Event) {
	ev.Tag = a.longlong()
	ev.Requeue = a.octet()&1 != 0
}

func readPublish(a *args, ev *Event) {
	a.short() // reserved-1
	ev.Exchange = a.shortstr()
	ev.RoutingKey = a.shortstr()
}

func readConsume(a *args, ev *Event) {
	a.short() // reserved-1
	ev.Queue = a.shortstr()
	a.shortstr()                     // consumer-tag
	ev.NoAck = a.octet()&(1<<1) != 0 // no-local, no-ack, exclusive, no-wait
}

func readQueueDeclare(a *args, ev *Event) {
	a.short() // reserved-1
	ev.Queue = a.shortstr()
}

func readDeclareOk(a *args, ev *Event) { ev.Queue = a.shortstr() }

func readExchangeDeclare(a *args, ev *Event) {
	a.short() // reserved-1
	ev.Exchange = a.shortstr()
}

// readClose reads connection.close and channel.close (the same arguments).
func readClose(a *args, ev *Event) {
	ev.ReplyCode = a.short()
	ev.ReplyText = a.shortstr()
}

// BodySize reads a content header's body size (class-id, weight, then the
// longlong body size).
func BodySize(header []byte) (uint64, error) {
	if len(header) < 12 {
		return 0, errors.New("amqp: content header too short")
	}
	return binary.BigEndian.Uint64(header[4:12]), nil
}

// isCloseOk reports whether the frame is connection.close-ok.
func (f Frame) isCloseOk() bool {
	m, ok := f.Method()
	return ok && m.Class == classConnection && m.ID == connectionCloseOk
}

// CloseFrame is connection.close with a reply code and text, as a broker
// sends it (320 is CONNECTION_FORCED, "an operator intervened").
func CloseFrame(code uint16, text string) Frame {
	p := binary.BigEndian.AppendUint16(nil, classConnection)
	p = binary.BigEndian.AppendUint16(p, connectionClose)
	p = binary.BigEndian.AppendUint16(p, code)
	if len(text) > 255 {
		text = text[:255]
	}
	p = append(p, byte(len(text)))
	p = append(p, text...)
	p = binary.BigEndian.AppendUint16(p, 0)
	p = binary.BigEndian.AppendUint16(p, 0)
	return Frame{Type: FrameMethod, Channel: 0, Payload: p}
}
