package judge

import (
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// FuzzClassifyOwner: any value gets a class and never panics; splitting and
// classifying any key never panics and keeps the key's bytes.
func FuzzClassifyOwner(f *testing.F) {
	for _, s := range []string{"1", "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local", "MCiQIxzoyJVISKvLAwhztw==",
		"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "\xff\xfe", "a:b{c}d/e|f.g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if c := classifyOwner(v, "k", testNow); c.Class == "" || c.Bits < 0 {
			t.Fatalf("classifyOwner(%q) = %+v", v, c)
		}
		segs := keyshape.Split(v, testNow)
		var b strings.Builder
		for _, s := range segs {
			b.WriteString(s.Text + s.Sep)
		}
		if b.String() != v {
			t.Fatalf("splitKey(%q, testNow) lost bytes: %q", v, b.String())
		}
		_ = keyshape.Template(segs)
		for _, typ := range []string{"string", "hash"} {
			j := Judged{Observed: keyspace.Key{Key: v, Type: typ, Read: true, Value: v, Fields: []string{v, v}, PTTL: 1}, Segs: segs}
			judgeKey(&j, testNow)
			if c := j.Verdict.Confidence(); !(c >= 0 && c <= 1) {
				t.Fatalf("%s %q: confidence %v", typ, v, c)
			}
		}
	})
}
