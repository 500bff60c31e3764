package ttl

import (
	"errors"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// TestFlagValuesAreBadInput: what the command line gives inspect ttl as
// text is read here, as bad input naming its option.
func TestFlagValuesAreBadInput(t *testing.T) {
	word := func(f string) string { return "--" + strings.ToLower(f) }
	_, tzErr := ParseTZ("Mars/Base")
	_, unitErr := ParseUnit("parsecs")
	_, specErr := ParseTTLSpec("=2m")
	_, durErr := ParseTTLSpec("payment=soon")
	_, profErr := ParseProfiles([]string{"safe", "nope"})
	for _, c := range []struct {
		err         error
		field, want string
	}{
		{tzErr, "TZ", `--tz "Mars/Base": unknown time zone: want an IANA name such as Europe/Berlin, or UTC`},
		{unitErr, "Unit", `--unit: unknown unit "parsecs": want ns, us, ms, s, m or h`},
		{specErr, "TTLs", `--ttls "=2m": "=2m" names no job type`},
		{durErr, "TTLs", `--ttls "payment=soon": TTL "soon": want a positive duration with a unit, such as 90s or 2m`},
		{profErr, "Profiles", `--profiles: unknown profile "nope": want one of `},
	} {
		var in *problem.Input
		if !errors.As(c.err, &in) || in.Field != c.field || !strings.HasPrefix(in.Render(word), c.want) {
			t.Errorf("%v: want %q about %s", c.err, c.want, c.field)
		}
	}
	if loc, err := ParseTZ("Europe/Berlin"); err != nil || loc.String() != "Europe/Berlin" {
		t.Errorf("Europe/Berlin: %v %v", loc, err)
	}
	if ps, err := ParseProfiles([]string{"safe", "naive"}); err != nil || len(ps) != 2 {
		t.Errorf("safe,naive: %v %v", ps, err)
	}
}
