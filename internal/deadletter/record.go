package deadletter

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Format names the export file format; it is the "format" field of every
// record so a file says what it is.
const Format = "dupctl-dlq/1"

// Record is one line of an export file (JSON Lines). Its field names are a
// public contract (docs/dlq.md).
type Record struct {
	Format     string          `json:"format"`
	Queue      string          `json:"queue,omitempty"`
	Vhost      string          `json:"vhost,omitempty"`
	CapturedAt string          `json:"captured_at,omitempty"`
	Delivery   *RecordDelivery `json:"delivery,omitempty"`
	Properties RecordProps     `json:"properties"`
	// Body is the text when the body is valid UTF-8 (BodyEncoding "text"),
	// else its base64 (BodyEncoding "base64").
	Body         string `json:"body"`
	BodyEncoding string `json:"body_encoding"`
	BodyBytes    int    `json:"body_bytes"`

	headers amqp.Table
}

// RecordDelivery is how the message was delivered when captured.
type RecordDelivery struct {
	Exchange    Str  `json:"exchange"`
	RoutingKey  Str  `json:"routing_key"`
	Redelivered bool `json:"redelivered"`
}

// RecordProps are the basic properties; headers in the typed form.
type RecordProps struct {
	ContentType     Str             `json:"content_type,omitempty"`
	ContentEncoding Str             `json:"content_encoding,omitempty"`
	DeliveryMode    uint8           `json:"delivery_mode,omitempty"`
	Priority        uint8           `json:"priority,omitempty"`
	CorrelationID   Str             `json:"correlation_id,omitempty"`
	ReplyTo         Str             `json:"reply_to,omitempty"`
	Expiration      Str             `json:"expiration,omitempty"`
	MessageID       Str             `json:"message_id,omitempty"`
	Timestamp       string          `json:"timestamp,omitempty"`
	Type            Str             `json:"type,omitempty"`
	UserID          Str             `json:"user_id,omitempty"`
	AppID           Str             `json:"app_id,omitempty"`
	Headers         json.RawMessage `json:"headers,omitempty"`
}

func (m *Message) record(at time.Time, queue, vhost string) *Record {
	p := m.Props
	r := &Record{
		Format: Format, Queue: queue, Vhost: vhost,
		Delivery: &RecordDelivery{Exchange: Str(m.Exchange), RoutingKey: Str(m.RoutingKey), Redelivered: m.Redelivered},
		Properties: RecordProps{
			ContentType: Str(p.ContentType), ContentEncoding: Str(p.ContentEncoding),
			DeliveryMode: p.DeliveryMode, Priority: p.Priority,
			CorrelationID: Str(p.CorrelationID), ReplyTo: Str(p.ReplyTo), Expiration: Str(p.Expiration),
			MessageID: Str(p.MessageID), Type: Str(p.Type), UserID: Str(p.UserID), AppID: Str(p.AppID),
		},
		BodyBytes: len(m.Body),
		headers:   p.Headers,
	}
	if !at.IsZero() {
		r.CapturedAt = at.UTC().Format(time.RFC3339Nano)
	}
	if !p.Timestamp.IsZero() {
		r.Properties.Timestamp = p.Timestamp.UTC().Format(time.RFC3339)
	}
	if utf8.Valid(m.Body) {
		r.Body, r.BodyEncoding = string(m.Body), "text"
	} else {
		r.Body, r.BodyEncoding = base64.StdEncoding.EncodeToString(m.Body), "base64"
	}
	return r
}

func encodeRecordFields(r *Record) ([]byte, error) {
	if len(r.headers) > 0 {
		h, err := EncodeTable(r.headers)
		if err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		r.Properties.Headers = h
	}
	return json.Marshal(r)
}

// MarshalRecord is the export line of a message (without the newline).
func (m *Message) MarshalRecord(at time.Time, queue, vhost string) ([]byte, error) {
	return encodeRecordFields(m.record(at, queue, vhost))
}

// ParseRecord reads one export line back into a message.
func ParseRecord(line []byte) (*Message, error) {
	if !utf8.Valid(line) {
		// encoding/json would read each bad byte as U+FFFD and the replay
		// publish a message id or header that never was.
		return nil, errors.New("not valid UTF-8: dupctl export writes binary ids, headers and bodies as base64; " +
			"a raw byte would be published rewritten")
	}
	var r Record
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a dupctl export record: %w", err)
	}
	if r.Format != Format {
		return nil, fmt.Errorf("format %q: want %q", r.Format, Format)
	}
	p := r.Properties
	m := &Message{Props: Properties{
		ContentType: string(p.ContentType), ContentEncoding: string(p.ContentEncoding),
		DeliveryMode: p.DeliveryMode, Priority: p.Priority,
		CorrelationID: string(p.CorrelationID), ReplyTo: string(p.ReplyTo), Expiration: string(p.Expiration),
		MessageID: string(p.MessageID), Type: string(p.Type), UserID: string(p.UserID), AppID: string(p.AppID),
	}}
	if p.Timestamp != "" {
		t, err := time.Parse(time.RFC3339, p.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("timestamp: %w", err)
		}
		m.Props.Timestamp = t
	}
	if len(p.Headers) > 0 && string(p.Headers) != "null" {
		h, err := DecodeTable(p.Headers)
		if err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		m.Props.Headers = h
	}
	switch r.BodyEncoding {
	case "text":
		m.Body = []byte(r.Body)
	case "base64":
		b, err := base64.StdEncoding.DecodeString(r.Body)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		m.Body = b
	default:
		return nil, fmt.Errorf("body_encoding %q: want text or base64", r.BodyEncoding)
	}
	if r.BodyBytes != len(m.Body) {
		return nil, fmt.Errorf("body_bytes says %d, body has %d (truncated file?)", r.BodyBytes, len(m.Body))
	}
	if r.Delivery != nil {
		m.Exchange, m.RoutingKey, m.Redelivered = string(r.Delivery.Exchange), string(r.Delivery.RoutingKey), r.Delivery.Redelivered
	}
	return m, nil
}

// maxRecordBytes bounds one export line (a 128 MiB message, base64'd, fits).
const maxRecordBytes = 192 << 20

// ReadRecords calls fn for every record of an export file, in order.
// Blank lines are skipped; a malformed line stops with its line number.
func ReadRecords(r io.Reader, fn func(*Message) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, err := readLine(br)
		if errors.Is(err, io.EOF) && len(b) == 0 {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if len(trimSpace(b)) == 0 {
			continue
		}
		m, perr := ParseRecord(b)
		if perr != nil {
			return fmt.Errorf("line %d: %w", line, perr)
		}
		m.Line = line
		if err := fn(m); err != nil {
			return err
		}
	}
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxRecordBytes {
			return nil, fmt.Errorf("record longer than %d bytes", maxRecordBytes)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			out = out[:len(out)-1]
		}
		return out, err
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && slices.Contains([]byte(" \t\r"), b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
