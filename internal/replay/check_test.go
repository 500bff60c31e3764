package replay

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/journal"
)

func TestReplayOptionsValidate(t *testing.T) {
	ok := ReplayOptions{Queue: "q", Window: 1, Router: classify.Router{Via: classify.ViaQueue}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	word := func(f string) string { return "--" + f }
	for _, c := range []struct {
		change      func(*ReplayOptions)
		field, want string
	}{
		{func(o *ReplayOptions) { o.Queue = "" }, "", "give exactly one of --Queue or --File"},
		{func(o *ReplayOptions) { o.File = "f" }, "", "give exactly one of --Queue or --File"},
		{func(o *ReplayOptions) { o.Window = 0 }, "Window",
			"--Window must be positive; --Max, --Rate, --MaxReplays and --MaxBounces must not be negative"},
		{func(o *ReplayOptions) { o.MaxBounces = -1 }, "Window",
			"--Window must be positive; --Max, --Rate, --MaxReplays and --MaxBounces must not be negative"},
		{func(o *ReplayOptions) { o.Rate = math.NaN() }, "Rate", "--Rate NaN: want a finite number of messages per second (0: no limit)"},
		{func(o *ReplayOptions) { o.Rate = math.Inf(1) }, "Rate", "--Rate +Inf: want a finite number of messages per second (0: no limit)"},
		{func(o *ReplayOptions) { o.Router.Via = "x" }, "Via", `--Via "x": want queue or exchange`},
		{func(o *ReplayOptions) { o.RetryInDoubt = true }, "RetryInDoubt", "--RetryInDoubt needs --Resume JOURNAL"},
		{func(o *ReplayOptions) { o.Rewrite.Run = "a b" }, "Run", `--Run "a b": at most 100 characters, no spaces`},
		{func(o *ReplayOptions) { o.Rewrite.Run = strings.Repeat("x", 101) }, "Run",
			`--Run "` + strings.Repeat("x", 101) + `": at most 100 characters, no spaces`},
		{func(o *ReplayOptions) { o.Filter = classify.Filter{Groups: []string{"xyz"}} }, "Groups",
			`--Groups "xyz": a group id is 8 hex digits, from 'dupctl dlq stats'`},
	} {
		o := ok
		c.change(&o)
		var in *problem.Input
		err := o.Validate()
		if !errors.As(err, &in) || in.Field != c.field || in.Render(word) != c.want {
			t.Errorf("got %v (field %q), want %q about %q", err, fieldOf(in), c.want, c.field)
		}
		// Replay refuses them as its first step, before any dialling
		// (ReplayDeps is empty here).
		if c.field != "Window" || o.Window != 0 {
			if _, err := Replay(context.Background(), ReplayDeps{}, o); !errors.As(err, new(*problem.Input)) {
				t.Errorf("Replay took %+v: %v", o, err)
			}
		}
	}
	o := ok
	o.RetryInDoubt, o.Resume = true, &journal.State{}
	if err := o.Validate(); err != nil {
		t.Errorf("retry in doubt with a resumed journal: %v", err)
	}
}

func fieldOf(in *problem.Input) string {
	if in == nil {
		return "<none>"
	}
	return in.Field
}

func TestParseSucceeded(t *testing.T) {
	if park, err := ParseSucceeded("park"); !park || err != nil {
		t.Errorf("park: %v %v", park, err)
	}
	if park, err := ParseSucceeded("leave"); park || err != nil {
		t.Errorf("leave: %v %v", park, err)
	}
	_, err := ParseSucceeded("maybe")
	var in *problem.Input
	if !errors.As(err, &in) || in.Render(func(f string) string { return "--" + f }) != `--ParkSucceeded "maybe": want leave or park` {
		t.Errorf("maybe: %v", err)
	}
}
