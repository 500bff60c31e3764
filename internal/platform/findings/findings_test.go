package findings

import (
	"encoding/json"
	"testing"
)

func TestThreshold(t *testing.T) {
	tests := []struct {
		in   string
		sev  Severity
		want bool
	}{
		{"error", Error, true}, {"error", Warn, false},
		{"warn", Warn, true}, {"warn", Info, false}, {"warn", Error, true},
		{"info", Info, true}, {"none", Error, false}, {"NONE", Error, false},
	}
	for _, tt := range tests {
		th, err := ParseThreshold(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Fails(tt.sev); got != tt.want {
			t.Errorf("%s.Fails(%s) = %v, want %v", tt.in, tt.sev, got, tt.want)
		}
	}
	if _, err := ParseThreshold("fatal"); err == nil {
		t.Error("ParseThreshold(fatal) accepted")
	}
}

func TestSeverityJSON(t *testing.T) {
	b, err := json.Marshal(Finding{Code: "X", Severity: Warn})
	if err != nil {
		t.Fatal(err)
	}
	var back Finding
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Severity != Warn {
		t.Fatalf("round trip: %s", b)
	}
	if _, err := json.Marshal(Finding{Code: "X"}); err == nil {
		t.Fatal("zero severity marshalled")
	}
}

func TestCatalogRejectsDuplicates(t *testing.T) {
	r := Rule{Code: "A_B", Title: "t", Severity: Warn, Fix: "f"}
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate code accepted")
		}
	}()
	NewCatalog([]Rule{r}, []Rule{r})
}

func TestSortAndSummarize(t *testing.T) {
	r := &Report{Checks: []string{"A", "B", "C"}}
	r.Add(
		Finding{Code: "B", Severity: Info, Subject: "z"},
		Finding{Code: "C", Severity: Error, Subject: "b"},
		Finding{Code: "A", Severity: Warn, Subject: "a"},
		Finding{Code: "C", Severity: Error, Subject: "a"},
	)
	r.Sort()
	order := ""
	for _, f := range r.Findings {
		order += f.Code + f.Subject + " "
	}
	if order != "Ca Cb Aa Bz " {
		t.Fatalf("order = %q", order)
	}
	s := Summarize(r, FailWarn)
	if s.Errors != 2 || s.Warnings != 1 || s.Infos != 1 || !s.Failed || s.FailedChecks != 2 {
		t.Fatalf("summary = %+v", s)
	}
	if s := Summarize(r, None); s.Failed || s.FailedChecks != 0 {
		t.Fatalf("none summary = %+v", s)
	}
}
