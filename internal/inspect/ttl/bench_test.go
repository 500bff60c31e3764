package ttl

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkReadCSV is the hot path of a large input: parse, look up the
// job type, fold into the sketch.
func BenchmarkReadCSV(b *testing.B) {
	var in bytes.Buffer
	types := []string{"payment", "settlement", "email"}
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(&in, "%s,%d\n", types[i%3], 1000+(i*7919)%300000)
	}
	b.SetBytes(int64(in.Len()))
	b.ReportAllocs()
	for b.Loop() {
		c := NewCollector(CollectOptions{})
		if err := ReadCSV(context.Background(), bytes.NewReader(in.Bytes()), "bench", TableOptions{}, c, nil); err != nil {
			b.Fatal(err)
		}
	}
}
