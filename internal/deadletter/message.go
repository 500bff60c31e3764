// Package deadletter is a dead-lettered AMQP message as dupctl carries it
// between a queue, a file and a replay: every basic property, the headers
// with their AMQP types, the body and how it was delivered (Message); what
// its headers say about where it came from and why it died (Origin); and
// its line in an export file, JSON Lines of format dupctl-dlq/1 (Record),
// whose typed value codec keeps an int16 an int16 and a timestamp a
// timestamp through export and replay (value.go).
//
// dupctl dlq (internal/replay) writes and reads these files; keys unstable
// (internal/keys) reads them as one of its inputs.
package deadletter

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Message is one dead-lettered message as read from a queue or an export
// file: every basic property, the headers with their AMQP types, the body,
// and how it was delivered.
type Message struct {
	Props       Properties
	Body        []byte
	Exchange    string // the exchange it was delivered through (the DLX)
	RoutingKey  string // the routing key it was delivered with
	Redelivered bool
	// Tag is the delivery tag on the reading channel (0 for a file).
	Tag uint64
	// Line is the 1-based line of an export file (0 for a queue).
	Line int

	fp string
}

// Properties are the AMQP basic properties.
type Properties struct {
	ContentType     string
	ContentEncoding string
	DeliveryMode    uint8
	Priority        uint8
	CorrelationID   string
	ReplyTo         string
	Expiration      string
	MessageID       string
	Timestamp       time.Time
	Type            string
	UserID          string
	AppID           string
	Headers         amqp.Table
}

// FromDelivery copies what a replay and an export need out of a delivery.
func FromDelivery(d *amqp.Delivery) *Message {
	return &Message{
		Props: Properties{
			ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
			DeliveryMode: d.DeliveryMode, Priority: d.Priority,
			CorrelationID: d.CorrelationId, ReplyTo: d.ReplyTo, Expiration: d.Expiration,
			MessageID: d.MessageId, Timestamp: d.Timestamp, Type: d.Type,
			UserID: d.UserId, AppID: d.AppId, Headers: d.Headers,
		},
		Body: d.Body, Exchange: d.Exchange, RoutingKey: d.RoutingKey,
		Redelivered: d.Redelivered, Tag: d.DeliveryTag,
	}
}

// Publishing is the message as it would be published unchanged.
func (m *Message) Publishing() amqp.Publishing {
	p := m.Props
	return amqp.Publishing{
		ContentType: p.ContentType, ContentEncoding: p.ContentEncoding,
		DeliveryMode: p.DeliveryMode, Priority: p.Priority,
		CorrelationId: p.CorrelationID, ReplyTo: p.ReplyTo, Expiration: p.Expiration,
		MessageId: p.MessageID, Timestamp: p.Timestamp, Type: p.Type,
		UserId: p.UserID, AppId: p.AppID, Headers: p.Headers, Body: m.Body,
	}
}

// readingHeaders change when a message is only read (requeued), so they
// are left out of its fingerprint.
var readingHeaders = []string{"x-delivery-count", "x-acquired-count"}

// Fingerprint identifies the message's content: properties, headers (but
// those that reading changes) and body. Two dead letterings of one job
// differ (their x-death differs); reading a message does not change it.
// It hashes a typed binary walk of the message (cheap enough to run on
// every message of a replay).
func (m *Message) Fingerprint() string {
	if m.fp != "" {
		return m.fp
	}
	h := sha256.New()
	p := &m.Props
	for _, s := range []string{p.ContentType, p.ContentEncoding, p.CorrelationID, p.ReplyTo, p.Expiration,
		p.MessageID, p.Type, p.UserID, p.AppID} {
		hashBytes(h, 'S', []byte(s))
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(p.Timestamp.Unix()))
	h.Write([]byte{p.DeliveryMode, p.Priority})
	if !p.Timestamp.IsZero() {
		h.Write(b[:])
	}
	hashTable(h, p.Headers, readingHeaders)
	hashBytes(h, 'x', m.Body)
	m.fp = hex.EncodeToString(h.Sum(nil))[:32]
	return m.fp
}

func hashBytes(h hash.Hash, tag byte, s []byte) {
	var n [9]byte
	n[0] = tag
	binary.BigEndian.PutUint64(n[1:], uint64(len(s)))
	h.Write(n[:])
	h.Write(s)
}

func hashTable(h hash.Hash, t amqp.Table, skip []string) {
	keys := sortedKeys(t)
	hashBytes(h, 'F', nil)
	for _, k := range keys {
		if slices.Contains(skip, k) {
			continue
		}
		hashBytes(h, 'k', []byte(k))
		hashValue(h, t[k])
	}
	h.Write([]byte{'}'})
}

// hashValue writes a value with its type, so int32(1) and int64(1) differ.
func hashValue(h hash.Hash, v any) {
	var b [9]byte
	num := func(tag byte, u uint64) {
		b[0] = tag
		binary.BigEndian.PutUint64(b[1:], u)
		h.Write(b[:])
	}
	switch x := v.(type) {
	case nil:
		h.Write([]byte{'V'})
	case bool:
		if x {
			num('t', 1)
		} else {
			num('t', 0)
		}
	case int8:
		num('b', uint64(x))
	case uint8:
		num('B', uint64(x))
	case int16:
		num('s', uint64(x))
	case uint16:
		num('u', uint64(x))
	case int:
		num('I', uint64(int32(x)))
	case int32:
		num('I', uint64(x))
	case uint32:
		num('i', uint64(x))
	case int64:
		num('l', uint64(x))
	case float32:
		num('f', uint64(math.Float32bits(x)))
	case float64:
		num('d', math.Float64bits(x))
	case amqp.Decimal:
		num('D', uint64(x.Scale)<<32|uint64(uint32(x.Value)))
	case string:
		hashBytes(h, 'S', []byte(x))
	case []byte:
		hashBytes(h, 'x', x)
	case time.Time:
		num('T', uint64(x.Unix()))
	case []any:
		hashBytes(h, 'A', nil)
		for _, e := range x {
			hashValue(h, e)
		}
		h.Write([]byte{']'})
	case amqp.Table:
		hashTable(h, x, nil)
	case map[string]any:
		hashTable(h, amqp.Table(x), nil)
	default:
		hashBytes(h, '?', []byte(fmt.Sprintf("%T %v", v, v)))
	}
}
