package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

type streamInner struct {
	A   string            `json:"a"`
	B   []int             `json:"b"`
	C   map[string]int    `json:"c"`
	D   *streamInner      `json:"d,omitempty"`
	E   time.Time         `json:"e,omitzero"`
	F   json.RawMessage   `json:"f,omitempty"`
	G   []string          `json:"g,omitempty"`
	H   any               `json:"h"`
	I   [2]int            `json:"i"`
	J   []byte            `json:"j"`
	K   float64           `json:"k"`
	L   string            `json:"-"`
	M   int               `json:"m,string"`
	N   struct{}          `json:"n"`
	O   []struct{}        `json:"o"`
	P   map[string][]bool `json:"p,omitempty"`
	low string
}

// scalars are the leaves streamJSON writes without an Encoder, beside the
// strings it must hand to one.
type scalars struct {
	S  []string          `json:"s"`
	B  bool              `json:"b"`
	I8 int8              `json:"i8"`
	I  int64             `json:"i"`
	U  uint32            `json:"u"`
	V  findings.Severity `json:"v"`
	T  textKey           `json:"t"`
	P  *string           `json:"p"`
}

type textKey string

func (k textKey) MarshalText() ([]byte, error) { return []byte("key:" + string(k)), nil }

type withEmbedded struct {
	streamInner
	X int `json:"x"`
}

// TestStreamJSONMatchesEncoding: the streamed document is byte for byte
// what encoding/json's indenting Encoder writes.
func TestStreamJSONMatchesEncoding(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	deep := &streamInner{A: "<&>\u2028", B: []int{}, C: map[string]int{"z": 1, "a": 2}, E: at, F: json.RawMessage(`{"x":[1,2]}`),
		H: []any{1, "s", nil}}
	values := []any{
		nil, 1, "x", []int(nil), []int{}, map[string]any{},
		streamInner{},
		streamInner{A: "a", B: []int{1, 2}, D: deep, G: []string{"q"}, H: map[string]any{"k": []int{1}}, J: []byte("hi"),
			K: 1.5, L: "hidden", M: 7, O: []struct{}{{}, {}}},
		withEmbedded{X: 3},
		[]streamInner{{A: "1"}, {A: "2", D: deep}},
		JSONReport{SchemaVersion: 1, Checks: []JSONCheck{{Code: "A", Status: "pass"}},
			Findings: []findings.Finding{{Code: "A", Severity: findings.Warn, Subject: "s", Evidence: []string{"e1", "e2"}}},
			Data:     []withEmbedded{{X: 1}}},
		&JSONReport{Data: deep},
		scalars{S: []string{"", "plain ascii ~!", `q"uote`, `back\\slash`, "tab\t", "nl\n", "\x7f", "\x01", "é", "\xff\xfe", "<&>", "\u2028"},
			B: true, I8: -128, I: -1 << 62, U: 1 << 31, V: findings.Error, T: "k"},
	}
	for i, v := range values {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := streamJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("value %d:\n got %s\nwant %s", i, got.String(), want.String())
		}
	}
}
