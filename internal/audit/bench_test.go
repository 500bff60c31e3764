package audit

import (
	"context"
	"os"
	"testing"

	"github.com/dupctl/dupctl/internal/logs"
)

// BenchmarkAuditFile audits $DUPCTL_BENCH_LOG (skipped without it).
func BenchmarkAuditFile(b *testing.B) {
	p := os.Getenv("DUPCTL_BENCH_LOG")
	if p == "" {
		b.Skip("set DUPCTL_BENCH_LOG to a JSON-lines file")
	}
	src, err := logs.File(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(src.Size())
	for b.Loop() {
		if _, err := Run(context.Background(), []logs.Source{src}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
