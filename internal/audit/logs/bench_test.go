package logs

import (
	"context"
	"os"
	"testing"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// BenchmarkAuditFile audits $DUPCTL_BENCH_LOG (skipped without it).
func BenchmarkAuditFile(b *testing.B) {
	p := os.Getenv("DUPCTL_BENCH_LOG")
	if p == "" {
		b.Skip("set DUPCTL_BENCH_LOG to a JSON-lines file")
	}
	src, err := logread.File(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(src.Size())
	for b.Loop() {
		if _, err := Run(context.Background(), []logread.Source{src}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
