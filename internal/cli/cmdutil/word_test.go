package cmdutil

import (
	"errors"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/spf13/cobra"
)

type wordNote struct {
	Text  string
	Notes []string
	ByKey map[string]string
	Any   any
	inner string
}

func TestWordReport(t *testing.T) {
	cmd := &cobra.Command{Use: "cache"}
	cmd.Flags().String("live-keys", "", "")
	cmd.Flags().String("value", "", "")
	FieldFlags(cmd, map[string]string{"Decoder": "value"})
	rule := func(code string) Namer {
		return func(field string) (string, bool) { return "<" + field + ">", code == "R_1" }
	}
	data := &wordNote{Text: "no {LiveKeys}", Notes: []string{"read with {Decoder}", "key {Order123}"},
		ByKey: map[string]string{"a": "give {LiveKeys}"}, Any: wordNote{Text: "{Decoder} again"}, inner: "{LiveKeys}"}
	rep := &findings.Report{Command: "audit cache {LiveKeys}", Data: data, Findings: []findings.Finding{
		{Code: "R_1", Message: "{Decoder} x", Evidence: []string{"{LiveKeys}", "{Other}"}, Fix: "use {Decoder} or {Shard}"},
		{Code: "R_2", Message: "{Shard} stays"},
	}}
	WordReport(rep, Flags(cmd), rule)
	f := rep.Findings
	for _, c := range []struct{ got, want string }{
		{rep.Command, "audit cache --live-keys"},
		{f[0].Message, "--value x"}, {f[0].Evidence[0], "--live-keys"}, {f[0].Evidence[1], "<Other>"},
		{f[0].Fix, "use --value or <Shard>"}, {f[1].Message, "{Shard} stays"},
		{data.Text, "no --live-keys"}, {data.Notes[0], "read with --value"}, {data.Notes[1], "key {Order123}"},
		{data.ByKey["a"], "give --live-keys"}, {data.Any.(wordNote).Text, "--value again"}, {data.inner, "{LiveKeys}"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestWordErrorKeepsWhatItWraps(t *testing.T) {
	in := problem.Inputf("Pattern", "want one {key}").WithValue("job")
	err := WordError(in, Namer(func(f string) (string, bool) { return "cache_pattern", f == "Pattern" }))
	if got, want := err.Error(), `cache_pattern "job": want one {key}`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	var back *problem.Input
	if !errors.As(err, &back) || ExitCode(err, 3) != 2 {
		t.Fatal("the worded error lost its type")
	}
}
