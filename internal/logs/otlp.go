package logs

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// OTLP/JSON logs as the OpenTelemetry Collector's file exporter writes
// them (opentelemetry.io/docs/specs/otel/protocol/file-exporter/): one
// LogsData per line, {"resourceLogs":[{"resource":{"attributes":[...]},
// "scopeLogs":[{"scope":{...},"logRecords":[{"timeUnixNano":"...",
// "severityText":"INFO","body":{"stringValue":"..."},"attributes":[{"key":
// "order.id","value":{"stringValue":"ORD-1"}}],"traceId":"..."}]}]}]}, one
// ResourceLogs a line (OpenTelemetry Java's logging-otlp exporter), or one
// LogRecord a line. Attributes are key/value lists, 64-bit integers
// strings. Every record is one event; resource and scope attributes are
// read as the record's own where it has none.

type otlpData struct {
	ResourceLogs []otlpResourceLogs `json:"resourceLogs"`
	// One ResourceLogs a line, as OpenTelemetry Java's logging-otlp
	// exporter writes them: its resource and scopeLogs at the top.
	otlpResourceLogs
	// One record a line: the record's own fields at the top.
	otlpRecord
}

type otlpResourceLogs struct {
	Resource  otlpAttrs `json:"resource"`
	ScopeLogs []struct {
		Scope      otlpAttrs    `json:"scope"`
		LogRecords []otlpRecord `json:"logRecords"`
	} `json:"scopeLogs"`
}

type otlpAttrs struct {
	Attributes []otlpKV `json:"attributes"`
}

type otlpRecord struct {
	TimeUnixNano         json.RawMessage `json:"timeUnixNano"`
	ObservedTimeUnixNano json.RawMessage `json:"observedTimeUnixNano"`
	SeverityText         string          `json:"severityText"`
	EventName            string          `json:"eventName"`
	Body                 *otlpValue      `json:"body"`
	Attributes           []otlpKV        `json:"attributes"`
	TraceID              string          `json:"traceId"`
}

type otlpKV struct {
	Key   string    `json:"key"`
	Value otlpValue `json:"value"`
}

type otlpValue struct {
	StringValue *string         `json:"stringValue"`
	IntValue    json.RawMessage `json:"intValue"`
	DoubleValue json.RawMessage `json:"doubleValue"`
	BoolValue   *bool           `json:"boolValue"`
	KvlistValue *struct {
		Values []otlpKV `json:"values"`
	} `json:"kvlistValue"`
	ArrayValue *struct {
		Values []otlpValue `json:"values"`
	} `json:"arrayValue"`
}

// scalar is a value's text ("" for a list or a map).
func (v *otlpValue) scalar() []byte {
	switch {
	case v.StringValue != nil:
		return []byte(*v.StringValue)
	case len(v.IntValue) > 0:
		return bytes.Trim(v.IntValue, `"`)
	case len(v.DoubleValue) > 0:
		return bytes.Trim(v.DoubleValue, `"`)
	case v.BoolValue != nil:
		return []byte(strconv.FormatBool(*v.BoolValue))
	}
	return nil
}

// otlp reads one line of OTLP/JSON: a batch, or one record.
func (x *extractor) otlp(l []byte, add func() *Event) error {
	var d otlpData
	if err := json.Unmarshal(l, &d); err != nil {
		return &syntaxError{0, "OTLP/JSON: " + err.Error()}
	}
	if len(d.ResourceLogs) == 0 && len(d.ScopeLogs) > 0 {
		d.ResourceLogs = []otlpResourceLogs{d.otlpResourceLogs}
	}
	if len(d.ResourceLogs) == 0 {
		if d.Body == nil && len(d.TimeUnixNano) == 0 && len(d.Attributes) == 0 {
			return &syntaxError{0, "OTLP/JSON: neither resourceLogs, scopeLogs nor a log record"}
		}
		x.otlpRecord(&d.otlpRecord, nil, nil, add)
		return nil
	}
	for _, rl := range d.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for i := range sl.LogRecords {
				x.otlpRecord(&sl.LogRecords[i], rl.Resource.Attributes, sl.Scope.Attributes, add)
			}
		}
	}
	return nil
}

func (x *extractor) otlpRecord(r *otlpRecord, resource, scope []otlpKV, add func() *Event) {
	x.begin()
	x.otlpAttrs("attributes.", r.Attributes)
	if r.Body != nil {
		if s := r.Body.scalar(); s != nil {
			x.emit([]byte("body"), s)
		} else if r.Body.KvlistValue != nil {
			// A structured body: its keys as fields.
			x.otlpAttrs("", r.Body.KvlistValue.Values)
		}
	}
	if r.EventName != "" {
		x.emit([]byte("eventName"), []byte(r.EventName))
	}
	x.emit([]byte("timeUnixNano"), bytes.Trim(r.TimeUnixNano, `"`))
	if ts := bytes.Trim(r.TimeUnixNano, `"`); len(ts) == 0 || bytes.Equal(ts, []byte("0")) {
		x.emit([]byte("observedTimeUnixNano"), bytes.Trim(r.ObservedTimeUnixNano, `"`))
	}
	if r.SeverityText != "" {
		x.emit([]byte("severityText"), []byte(r.SeverityText))
	}
	x.otlpAttrs("scope.attributes.", scope)
	x.otlpAttrs("resource.attributes.", resource)
	x.finish(add())
}

func (x *extractor) otlpAttrs(prefix string, kvs []otlpKV) {
	for i := range kvs {
		kv := &kvs[i]
		if v := kv.Value.scalar(); v != nil {
			x.emit([]byte(prefix+kv.Key), v)
			continue
		}
		if kv.Value.KvlistValue != nil {
			x.otlpAttrs(prefix+kv.Key+".", kv.Value.KvlistValue.Values)
		}
	}
}
