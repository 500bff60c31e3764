package logs

import (
	"context"
	"os"
	"testing"
)

// BenchmarkScanFile scans $DUPCTL_BENCH_LOG (skipped without it):
//
//	DUPCTL_BENCH_LOG=/tmp/fleet.log go test ./internal/logs -run XXX -bench ScanFile
func BenchmarkScanFile(b *testing.B) {
	p := os.Getenv("DUPCTL_BENCH_LOG")
	if p == "" {
		b.Skip("set DUPCTL_BENCH_LOG to a JSON-lines file")
	}
	src, err := File(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(src.Size())
	for b.Loop() {
		n := 0
		if _, err := Scan(context.Background(), []Source{src}, Options{}, func(e *Event) error {
			if e.Kind == KindSideEffect {
				n++
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}
