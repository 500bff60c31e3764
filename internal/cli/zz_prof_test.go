package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

func TestZZProf(t *testing.T) {
	var out, errb bytes.Buffer
	ios := &iostreams.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errb}
	Run(context.Background(), []string{"audit", "logs", "/tmp/perf/dup10.log", "--fail-on", "none", "-o", "json"}, ios)
	t.Log(out.Len(), errb.String())
}
