package logs

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// TestFollowLearnsFromTheFiles: a follow of files a stranger's logger
// wrote learns from what they hold when it starts, as a batch audit does,
// so it names the same workers for the same duplicates (issue 41: under
// --follow nothing was learned, and logback's MDC value in brackets - the
// order id - was named as the worker).
func TestFollowLearnsFromTheFiles(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/heldout-logs/logs/logback/*.log")
	if err != nil || len(files) == 0 {
		t.Fatalf("the logback held-out set: %v (%d files)", err, len(files))
	}
	srcs, err := logread.Expand(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	learning := logread.Default().LearnFromInput(logread.LearnOptions{})
	batch, err := Run(context.Background(), srcs, Options{Mapping: learning})
	if err != nil {
		t.Fatal(err)
	}
	want := workersByKey(batch.Duplicates)
	if len(want) == 0 {
		t.Fatal("the batch audit found no duplicate: nothing to compare")
	}

	for _, learn := range []bool{true, false} {
		m := logread.Default()
		if learn {
			m = m.LearnFromInput(logread.LearnOptions{})
		}
		got := followAll(t, srcs, m, len(want))
		differ := 0
		for k, w := range want {
			if got[k] != w {
				differ++
				if learn {
					t.Errorf("key %s: followed workers %q, batch %q", k, got[k], w)
				}
			}
		}
		if !learn && differ == 0 {
			t.Errorf("without learning the follow named the same workers on all %d keys: this set does not show learning", len(want))
		}
	}
}

// followAll follows srcs until n keys were found duplicated (or a minute
// passed) and returns each one's workers as its last finding named them.
func followAll(t *testing.T, srcs []logread.Source, m *logread.Mapping, n int) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := map[string]string{}
	_, err := Follow(ctx, srcs, FollowOptions{Options: Options{Mapping: m}, Window: 24 * time.Hour, Poll: 10 * time.Millisecond,
		Settle: 10 * time.Millisecond,
		Found: func(f Finding) error {
			got[f.Key] = workerList(f.Workers)
			if len(got) >= n {
				cancel()
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("the follow found %d of the %d duplicated keys in a minute", len(got), n)
	}
	return got
}

func workersByKey(ds []Duplicate) map[string]string {
	out := map[string]string{}
	for _, d := range ds {
		out[d.Key] = workerList(d.Workers)
	}
	return out
}

func workerList(ws []string) string {
	ws = slices.Clone(ws)
	slices.Sort(ws)
	return strings.Join(ws, ",")
}
