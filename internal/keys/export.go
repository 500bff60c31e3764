package keys

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/logs"
	amqp "github.com/rabbitmq/amqp091-go"
)

// exportAware reads a `dupctl dlq export` file (JSON lines of
// deadletter.Record, format dupctl-dlq/1) as one flat JSON object per message,
// so the usual field names find the keys wherever the producer put them:
// the body's fields (a JSON body), the headers (typed in the record,
// plain here), and the message id, correlation id and redelivered flag.
// Any other input passes through unchanged. Line numbers stay the file's.
func exportAware(src logs.Source, maxLine int) logs.Source {
	return &exportSource{Source: src, maxLine: maxLine}
}

type exportSource struct {
	logs.Source
	maxLine int
}

// exportPrefix is how every export record begins (encoding/json writes
// the Record's fields in order, format first).
var exportPrefix = []byte(`{"format":"` + deadletter.Format + `"`)

func (s *exportSource) Open(ctx context.Context) (io.ReadCloser, error) {
	rc, err := s.Source.Open(ctx)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(rc, 1<<20)
	head, _ := br.Peek(len(exportPrefix) + 3)
	if !bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n\ufeff"), exportPrefix) {
		return struct {
			io.Reader
			io.Closer
		}{br, rc}, nil
	}
	pr, pw := io.Pipe()
	go func() {
		err := flattenExport(ctx, logs.NewLineReader(br, s.Name(), s.maxLine), pw)
		rc.Close()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// flattenExport writes one line per record line: the flat object, or a
// line that is not JSON (so the scanner counts and samples it) saying why
// the record could not be read. A record longer than a line may be is the
// scan's input error.
func flattenExport(ctx context.Context, lr *logs.LineReader, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for n := 0; ; n++ {
		if n&0x3ff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return bw.Flush()
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			m, perr := deadletter.ParseRecord(line)
			if perr != nil {
				fmt.Fprintf(bw, "dlq export record: %v", perr)
			} else {
				bw.Write(flatten(m)) //nolint:errcheck // the flush reports it
			}
		}
		if werr := bw.WriteByte('\n'); werr != nil {
			return werr
		}
	}
}

// flatten is a message as one JSON object: its ids and delivery flag, its
// headers as plain values, and a JSON body's own fields (a body that is
// not a JSON object is kept as "body").
func flatten(m *deadletter.Message) []byte {
	obj := map[string]any{}
	for k, v := range m.Props.Headers {
		obj[k] = plain(v)
	}
	set := func(k, v string) {
		if v != "" {
			obj[k] = v
		}
	}
	set("messageId", m.Props.MessageID)
	set("correlationId", m.Props.CorrelationID)
	set("queue", m.RoutingKey)
	if !m.Props.Timestamp.IsZero() {
		obj["timestamp"] = m.Props.Timestamp.UTC().Format(time.RFC3339)
	}
	obj["redelivered"] = m.Redelivered
	if o := deadletter.ReadOrigin(m.Props.Headers); o.DeathCount() > 0 {
		d := o.DeathCount()
		obj["deaths"] = d
	}
	body := bytes.TrimSpace(m.Body)
	isObject := len(body) > 1 && body[0] == '{' && json.Valid(body)
	if !isObject && len(body) > 0 {
		obj["body"] = string(m.Body)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return []byte(fmt.Sprintf("dlq export record: %v", err))
	}
	if isObject {
		// The body's fields before the transport's: the first of a name
		// wins, so a header does not hide the payload's own.
		if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
			joined := append([]byte{'{'}, inner...)
			out = append(append(joined, ','), out[1:]...)
		}
	}
	return out
}

// plain turns a header value of any AMQP type into a JSON value.
func plain(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, float32, float64:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case amqp.Decimal:
		r := new(big.Rat).SetFrac(big.NewInt(int64(x.Value)), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		return json.Number(r.FloatString(int(x.Scale)))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case amqp.Table:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	}
	return fmt.Sprint(v)
}
