package idemtable

import (
	"strings"
	"testing"
)

func TestStatuses(t *testing.T) {
	s, err := ParseStatuses([]string{"succeeded=done, Completed", "pending=QUEUED"})
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]Role{"DONE": Succeeded, "completed": Succeeded, "processing": Processing, "queued": Pending,
		"FAILED": Failed} {
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
