package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

func TestOptionsValidate(t *testing.T) {
	ok := Defaults()
	ok.Pattern, ok.Table = Pattern{Raw: "job:{key}"}, "jobs"
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	word := func(f string) string { return "--" + f }
	for _, c := range []struct {
		change      func(*Options)
		field, want string
	}{
		{func(o *Options) { o.Table = "" }, "Pattern",
			"--Pattern and --Table are required, e.g. --Pattern 'job:status:{key}' --Table jobs"},
		{func(o *Options) { o.Pattern = Pattern{} }, "Pattern",
			"--Pattern and --Table are required, e.g. --Pattern 'job:status:{key}' --Table jobs"},
		{func(o *Options) { o.Pattern.Raw = "job" }, "Pattern",
			`--Pattern "job": want exactly one {key} where the database key goes, e.g. job:status:{key} (found 0)`},
		{func(o *Options) { o.Batch = 0 }, "Batch", "--Batch must be 1..100000, got 0"},
		{func(o *Options) { o.Batch = 100_001 }, "Batch", "--Batch must be 1..100000, got 100001"},
		{func(o *Options) { o.Recheck = -time.Second }, "Recheck", "--Recheck must not be negative, got -1s"},
		{func(o *Options) { o.Samples = 1001 }, "Samples", "--Samples must be 1..1000, got 1001"},
		{func(o *Options) { o.Lookup = "fast" }, "Lookup", `--Lookup "fast": want auto, batch or scan`},
		{func(o *Options) { o.ReplicaKeys = 1_000_001 }, "ReplicaKeys", "--ReplicaKeys must be 1..1000000, got 1000001"},
	} {
		o := ok
		c.change(&o)
		var in *problem.Input
		err := o.Validate()
		if !errors.As(err, &in) || in.Field != c.field || in.Render(word) != c.want {
			t.Errorf("got %v, want %q about %s", err, c.want, c.field)
			continue
		}
		// Run refuses it first: Deps has no Redis or database here. Its
		// zero-value defaults are not refusals.
		if o.Batch == 0 {
			continue
		}
		if _, err := Run(context.Background(), Deps{}, o); !errors.As(err, &in) || in.Field != c.field {
			t.Errorf("Run: %v, want bad input about %s", err, c.field)
		}
	}
}
