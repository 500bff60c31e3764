package audit

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
)

// TestDecidedIncidentsFirst: the HTML index and the drawn timelines list
// the incidents whose cause the logs decide before the undetermined, the
// unexplained and keys without a duplicate, each group in the order it came.
func TestDecidedIncidentsFirst(t *testing.T) {
	r := &auditlogs.Result{}
	for _, d := range []struct{ key, cause string }{
		{"ord-1", "DUP_EFFECT_UNDETERMINED"}, {"ord-2", "DUP_EFFECT_REDELIVERY"}, {"ord-3", ""},
		{"ord-4", "DUP_EFFECT_UNEXPLAINED"}, {"ord-5", "DUP_EFFECT_UNDETERMINED"}, {"ord-6", "DUP_EFFECT_LOCK_EXPIRY"},
	} {
		r.Timelines = append(r.Timelines, auditlogs.Timeline{Key: d.key, Workers: []string{"w1"}})
		if d.cause != "" {
			r.Duplicates = append(r.Duplicates, auditlogs.Duplicate{Key: d.key, Cause: d.cause, Effects: 2})
		}
	}
	var keys []string
	for _, tl := range decidedFirst(r) {
		keys = append(keys, tl.Key)
	}
	want := []string{"ord-2", "ord-6", "ord-1", "ord-5", "ord-4", "ord-3"}
	if !slices.Equal(keys, want) {
		t.Fatalf("order %v, want %v", keys, want)
	}
	var page bytes.Buffer
	if err := writeLogsHTML(&page, r, ""); err != nil {
		t.Fatal(err)
	}
	index, _, _ := strings.Cut(page.String(), "</nav>")
	var listed []string
	for _, m := range regexp.MustCompile(`<a href="#incident-\d+">([^<]+)</a>`).FindAllStringSubmatch(index, -1) {
		listed = append(listed, m[1])
	}
	if !slices.Equal(listed, want) {
		t.Fatalf("index lists %v, want %v", listed, want)
	}
}
