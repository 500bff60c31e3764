package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

func TestOptionsValidate(t *testing.T) {
	ok := Defaults()
	ok.Table = "payments"
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	word := func(f string) string { return "--" + f }
	for _, c := range []struct {
		change      func(*Options)
		field, want string
	}{
		{func(o *Options) { o.Checks = []string{CheckCatalog, "bogus"} }, "Checks", `--Checks: unknown check "bogus": want catalog, `},
		{func(o *Options) { o.StuckAfter = -time.Minute }, "StuckAfter", "--StuckAfter must be positive, got -1m0s"},
		{func(o *Options) { o.Samples = 1001 }, "Samples", "--Samples must be 1..1000, got 1001"},
		{func(o *Options) { o.ReplicaRows = 1_000_001 }, "ReplicaRows", "--ReplicaRows must be 1..1000000, got 1000001"},
		{func(o *Options) { o.Schema = "app" }, "Schema", "--Schema limits discovery: qualify --Table instead (--Table app.payments)"},
	} {
		o := ok
		c.change(&o)
		var in *problem.Input
		err := o.Validate()
		if !errors.As(err, &in) || in.Field != c.field || len(in.Render(word)) < len(c.want) || in.Render(word)[:len(c.want)] != c.want {
			t.Errorf("got %v, want %q about %s", err, c.want, c.field)
			continue
		}
		// Run refuses it before it opens a snapshot: db is nil here.
		if _, err := Run(context.Background(), nil, o); !errors.As(err, &in) || in.Field != c.field {
			t.Errorf("Run: %v, want bad input about %s", err, c.field)
		}
	}
}
