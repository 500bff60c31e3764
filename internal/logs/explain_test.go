package logs

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestExplainExamplesOutliveTheScan: the example text of each kind and
// unmatched template is the text of the line it names, after the scan
// has reused its buffers for later chunks (it named bytes of other lines:
// "lock_rel", "nceId\":\"worke").
func TestExplainExamplesOutliveTheScan(t *testing.T) {
	var b strings.Builder
	names := []string{"received", "lock_acquired", "side_effect", "acked", "payload archived"}
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&b, `{"ts":"2026-12-02T09:07:50.%03dZ","event":%q,"orderId":"ORD-%d","consumerInstanceId":"worker-%d"}`+"\n",
			i%1000, names[i%len(names)], i, i%7)
	}
	x, err := Explain(context.Background(), []Source{ReaderSource("x.log", strings.NewReader(b.String()))}, Options{ChunkSize: 4 << 10}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Kinds) != 4 || len(x.Other) != 1 {
		t.Fatalf("%d kinds, %d other templates", len(x.Kinds), len(x.Other))
	}
	for _, k := range x.Kinds {
		if k.Text != k.Kind || k.Phrase != k.Kind {
			t.Errorf("%s: example %q, phrase %q", k.Kind, k.Text, k.Phrase)
		}
	}
	if o := x.Other[0]; o.Text != "payload archived" {
		t.Errorf("unmatched example %q", o.Text)
	}
}
