package dlqread

import (
	"context"
	"errors"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

func TestOptionsValidate(t *testing.T) {
	if err := (Options{Queue: "q", Window: 1}).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Limit: -1, Window: 1}, {Window: 0}, {Window: -5}} {
		var in *problem.Input
		err := o.Validate()
		if !errors.As(err, &in) || in.Field != "Limit" ||
			in.Render(func(f string) string { return "--" + f }) != "--Limit must not be negative and --Window must be positive" {
			t.Errorf("%+v: %v", o, err)
		}
	}
	// A verb takes Window 0 for its default, and refuses the rest before
	// it dials anything: Deps has no dialer here.
	if err := (Options{}).check(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	ctx := context.Background()
	if _, err := Stats(ctx, Deps{}, StatsOptions{Read: Options{Queue: "q", Limit: -1}}); !errors.As(err, new(*problem.Input)) {
		t.Errorf("Stats: %v", err)
	}
	if _, err := Peek(ctx, Deps{}, PeekOptions{Read: Options{Queue: "q", Window: -1}}); !errors.As(err, new(*problem.Input)) {
		t.Errorf("Peek: %v", err)
	}
	if _, err := Export(ctx, ExportDeps{}, ExportOptions{Read: Options{Queue: "q", Limit: -2}}); !errors.As(err, new(*problem.Input)) {
		t.Errorf("Export: %v", err)
	}
}
