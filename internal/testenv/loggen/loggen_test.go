package loggen

import (
	"bytes"
	"context"
	"testing"

	"github.com/dupctl/dupctl/internal/logs"
)

func TestDeterministic(t *testing.T) {
	for _, d := range append(Dialects(), Formats()...) {
		var a, b bytes.Buffer
		c := Config{Seed: 9, Jobs: 300, IncidentEvery: 10, Dialect: d, Skew: 0}
		sa, err := Write(c, Single(&a))
		if err != nil {
			t.Fatal(err)
		}
		sb, err := Write(c, Single(&b))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || sa.Lines != sb.Lines || len(sa.Incidents) != 30 {
			t.Fatalf("%s: not deterministic or wrong incidents (%d)", d, len(sa.Incidents))
		}
		if int64(bytes.Count(a.Bytes(), []byte{'\n'})) != sa.Lines || int64(a.Len()) != sa.Bytes {
			t.Fatalf("%s: summary %d lines %d bytes, wrote %d bytes", d, sa.Lines, sa.Bytes, a.Len())
		}
	}
}

// TestEveryLineReadAsWritten: in every dialect and format, internal/logs
// reads each line as the step the generator wrote, with its business key
// and (for a check) its answer and source - the vocabulary covers every
// phrasing. (A batched OTLP line is several steps, read in the order
// written.)
func TestEveryLineReadAsWritten(t *testing.T) {
	for _, d := range append(Dialects(), Formats()...) {
		t.Run(string(d), func(t *testing.T) {
			var buf bytes.Buffer
			sum, err := Write(Config{Seed: 4, Jobs: 600, IncidentEvery: 10, Dialect: d, Record: true}, Single(&buf))
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			_, err = logs.Scan(context.Background(), []logs.Source{logs.ReaderSource("gen", &buf)}, logs.Options{Workers: 1},
				func(e *logs.Event) error {
					s := sum.Steps[i]
					i++
					want := map[string]logs.Kind{"idempotency_check": logs.KindCheck}[s.Kind]
					if want == logs.KindOther {
						want, _ = logs.ParseKind(s.Kind)
					}
					if e.Kind != want || e.BusinessKey() != s.Order {
						t.Errorf("line %d %q: read %s %q, written %s %q", e.Line, text(e), e.Kind, e.BusinessKey(), s.Kind, s.Order)
					}
					if s.Kind == "idempotency_check" && (e.Hit != logs.False || (e.FromCache == logs.True) != s.FromCache) {
						t.Errorf("line %d %q: check answer %d source %d, want a miss, from the cache: %v", e.Line, text(e), e.Hit, e.FromCache, s.FromCache)
					}
					return nil
				})
			if err != nil || i != len(sum.Steps) {
				t.Fatalf("%v: read %d of %d lines", err, i, len(sum.Steps))
			}
		})
	}
}

func text(e *logs.Event) string {
	if m := e.Get(logs.Message); m != "" {
		return m
	}
	return e.Name
}
