package sentinelask

import (
	"errors"
	"strings"
	"testing"
)

// Agreed names a master only when every Sentinel answers with the same
// one, and otherwise says what each said.
func TestAgreed(t *testing.T) {
	answers := func(said map[string]string) func(string) (string, error) {
		return func(a string) (string, error) {
			if m, ok := strings.CutPrefix(said[a], "err "); ok {
				return "", errors.New(m)
			}
			return said[a], nil
		}
	}
	sentinels := []string{"s1", "s2", "s3"}
	cases := []struct {
		said       map[string]string
		want, errs string
	}{
		{map[string]string{"s1": "m:1", "s2": "m:1", "s3": "m:1"}, "m:1", ""},
		{map[string]string{"s1": "m:1", "s2": "m:2", "s3": "m:1"}, "", "the Sentinels do not name one master (s1: m:1; s2: m:2; s3: m:1)"},
		{map[string]string{"s1": "m:1", "s2": "m:1", "s3": "err refused"}, "", "(s1: m:1; s2: m:1; s3: refused)"},
		{map[string]string{"s1": "err refused", "s2": "m:1", "s3": "m:1"}, "", "(s1: refused; s2: m:1; s3: m:1)"},
	}
	for _, c := range cases {
		got, err := Agreed(sentinels, answers(c.said))
		if got != c.want || (c.errs == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.errs) {
			t.Errorf("%v: %q %v, want %q %q", c.said, got, err, c.want, c.errs)
		}
	}
}
