package loggen

import (
	"bytes"
	"testing"
)

func TestDeterministic(t *testing.T) {
	for _, d := range Dialects() {
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
