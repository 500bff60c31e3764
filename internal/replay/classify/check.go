package classify

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Reasons are the death reasons a Filter may name (x-death's, and
// unknown for a message without one).
var Reasons = []string{"rejected", "expired", "maxlen", "delivery_limit", "republished", "unknown"}

// groupIDForm is the form of what 'dupctl dlq stats' prints as a group's id (groupID).
var groupIDForm = regexp.MustCompile(`^[0-9a-f]{8}$`)

// Validate checks the reasons and group ids a filter names.
func (f Filter) Validate() error {
	for _, r := range f.Reasons {
		if !slices.Contains(Reasons, r) {
			return problem.Inputf("Reasons", "{Reasons} %q: want rejected, expired, maxlen, delivery_limit, republished or unknown", r)
		}
	}
	for _, g := range f.Groups {
		if !groupIDForm.MatchString(g) {
			return problem.Inputf("Groups", "{Groups} %q: a group id is 8 hex digits, from 'dupctl dlq stats'", g)
		}
	}
	if f.OlderThan < 0 {
		return problem.Inputf("OlderThan", "{OlderThan} %s: want a duration like 90m, 36h or 3d", f.OlderThan)
	}
	return nil
}

// ParseAge reads a Filter's OlderThan, a duration that may use d for
// days (3d, 36h, 90m); "" is none.
func ParseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err == nil && n >= 0 {
			return time.Duration(n * float64(24*time.Hour)), nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, problem.Inputf("OlderThan", "{OlderThan} %q: want a duration like 90m, 36h or 3d", s)
	}
	return v, nil
}

// FieldsOf parses the field specs given for an option (ErrorFields,
// JobTypeFields, IdempotencyKeys): FieldList's, as bad input about it.
func FieldsOf(option string, specs []string) ([]Field, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out, err := FieldList(specs)
	if err != nil {
		return nil, problem.Inputf(option, "%v", err)
	}
	return out, nil
}

// Validate checks the routing as given: Via is ViaQueue or ViaExchange
// (a capability takes "" for ViaQueue before it checks).
func (r Router) Validate() error {
	if r.Via != ViaQueue && r.Via != ViaExchange {
		return problem.Inputf("Via", "{Via} %q: want queue or exchange", r.Via)
	}
	return nil
}
