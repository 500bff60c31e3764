package store

import (
	"strings"
	"testing"
	"time"
)

func TestStatuses(t *testing.T) {
	s, err := ParseStatuses([]string{"succeeded=done, Completed", "pending=QUEUED"})
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]Role{"DONE": Succeeded, "completed": Succeeded, "processing": Processing, "queued": Pending, "FAILED": Failed} {
		if got, ok := s.RoleOf(v); !ok || got != want {
			t.Errorf("RoleOf(%q) = %q, %v; want %q", v, got, ok, want)
		}
	}
	if _, ok := s.RoleOf("SUCCEEDED"); ok {
		t.Error("--status succeeded=... should replace the default SUCCEEDED")
	}
	if got := s.Describe(); got != "processing=PROCESSING succeeded=DONE,COMPLETED failed=FAILED retryable=RETRYABLE pending=QUEUED" {
		t.Errorf("Describe = %s", got)
	}
	// the order of the flags does not matter: only the final mapping is checked
	if _, err := ParseStatuses([]string{"succeeded=FAILED", "failed=ERROR"}); err != nil {
		t.Errorf("remapping in either order: %v", err)
	}
	for spec, want := range map[string]string{
		"done":                 "want ROLE=VALUE",
		"finished=DONE":        "want ROLE=VALUE",
		"succeeded=":           "empty status value",
		"succeeded=DONE,,X":    "empty status value",
		"succeeded=PROCESSING": "both a processing and a succeeded status",
	} {
		if _, err := ParseStatuses([]string{spec}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseStatuses(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}

func FuzzStatusesSet(f *testing.F) {
	for _, s := range []string{"succeeded=DONE", "pending=a,b", "=", "processing=,", "FAILED=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s := DefaultStatuses()
		if err := s.Set(spec); err != nil {
			return
		}
		// Every value given now has the role given, unless Validate
		// rejects the mapping as a whole.
		role, list, _ := strings.Cut(spec, "=")
		for _, v := range strings.Split(list, ",") {
			got, ok := s.RoleOf(v)
			if s.Validate() == nil && (!ok || !strings.EqualFold(string(got), strings.TrimSpace(role))) {
				t.Fatalf("Set(%q): value %q has role %q, %v", spec, v, got, ok)
			}
		}
	})
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Minute:                   "15m",
		time.Hour:                          "1h",
		90 * time.Minute:                   "1h30m",
		3*time.Hour + 20*time.Second:       "3h0m20s",
		45 * time.Second:                   "45s",
		1500 * time.Millisecond:            "2s",
		250 * time.Millisecond:             "250ms",
		50*time.Hour + 10*time.Minute:      "2d2h",
		time.Minute + 500*time.Millisecond: "1m1s",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestTopN(t *testing.T) {
	top := &topN{n: 2}
	for _, g := range []Group{{Key: "b", Rows: 2}, {Key: "a", Rows: 2}, {Key: "c", Rows: 5}, {Key: "d", Rows: 3}} {
		top.add(g)
	}
	r := top.result()
	if r.Groups != 4 || r.Rows != 12 || len(r.Samples) != 2 || r.Samples[0].Key != "c" || r.Samples[1].Key != "d" {
		t.Errorf("topN = %+v", r)
	}
}
