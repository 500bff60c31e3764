package problem

import (
	"errors"
	"testing"
)

func TestInputRender(t *testing.T) {
	flag := func(f string) string { return "--" + f }
	for _, c := range []struct {
		in   *Input
		want string
	}{
		{Inputf("Listen", "must not be empty"), "--Listen: must not be empty"},
		{Inputf("Table", "not found").WithValue("x"), `--Table "x": not found`},
		// A Why that opens with its own field names it already.
		{Inputf("Runs", "{Runs} and {MaxStates} must be positive"), "--Runs and --MaxStates must be positive"},
		// Another field first keeps the prefix.
		{Inputf("EffectsLog", "{EffectsSQL} or {EffectsLog}"), "--EffectsLog: --EffectsSQL or --EffectsLog"},
		{Inputf("", "{Workers} must be 1..64"), "--Workers must be 1..64"},
	} {
		if got := c.in.Render(flag); got != c.want {
			t.Errorf("Render = %q, want %q", got, c.want)
		}
	}
}

func TestInputfKeepsWrapped(t *testing.T) {
	base := errors.New("boom")
	in := Inputf("File", "reading: %w", base)
	if !errors.Is(in, base) {
		t.Fatalf("Inputf lost the wrapped error")
	}
	if in.Field != "File" {
		t.Fatalf("Field = %q", in.Field)
	}
}
