package idemtable

import (
	"github.com/dupctl/dupctl/internal/platform/problem"
	"slices"
	"strings"
)

// Role is what a status value means to the safe flow.
type Role string

// The roles a status can play. Pending (queued, not yet claimed) has no
// default value.
const (
	Processing Role = "processing"
	Succeeded  Role = "succeeded"
	Failed     Role = "failed"
	Retryable  Role = "retryable"
	Pending    Role = "pending"
)

// Roles lists every role in a stable order.
var Roles = []Role{Processing, Succeeded, Failed, Retryable, Pending}

// Statuses maps status values to roles. Values compare case-insensitively
// (a table that stores "succeeded" means SUCCEEDED); integer or enum
// statuses are compared as their text.
type Statuses struct {
	values map[Role][]string // upper case
}

// DefaultStatuses are the safe consumer flow's statuses: PROCESSING,
// SUCCEEDED, FAILED and RETRYABLE.
func DefaultStatuses() Statuses {
	return Statuses{values: map[Role][]string{
		Processing: {"PROCESSING"},
		Succeeded:  {"SUCCEEDED"},
		Failed:     {"FAILED"},
		Retryable:  {"RETRYABLE"},
	}}
}

// Set reads one ROLE=VALUE[,VALUE...] (--status succeeded=DONE,COMPLETED)
// and replaces that role's values.
func (s *Statuses) Set(spec string) error {
	roleText, list, ok := strings.Cut(spec, "=")
	role := Role(strings.ToLower(strings.TrimSpace(roleText)))
	if !ok || !slices.Contains(Roles, role) {
		return problem.Inputf("Statuses", "want ROLE=VALUE[,VALUE...] with ROLE one of %s", roleNames()).WithValue(spec)
	}
	var vals []string
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return problem.Inputf("Statuses", "empty status value").WithValue(spec)
		}
		vals = append(vals, strings.ToUpper(v))
	}
	if s.values == nil {
		s.values = map[Role][]string{}
	}
	s.values[role] = vals
	return nil
}

// Validate reports a value given to two roles (after every --status was
// applied, so the order of the flags does not matter).
func (s Statuses) Validate() error {
	seen := map[string]Role{}
	for _, r := range Roles {
		for _, v := range s.values[r] {
			if other, dup := seen[v]; dup {
				return problem.Inputf("Statuses", "%s is both a %s and a %s status: give each value one role", v, other, r)
			}
			seen[v] = r
		}
	}
	return nil
}

func roleNames() string {
	names := make([]string, len(Roles))
	for i, r := range Roles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// RoleOf returns the role of a status value.
func (s Statuses) RoleOf(v string) (Role, bool) {
	u := strings.ToUpper(strings.TrimSpace(v))
	for _, r := range Roles {
		if slices.Contains(s.values[r], u) {
			return r, true
		}
	}
	return "", false
}

// Values returns a role's values, upper case: the parameter of
// `upper(status::text) = ANY($n)`.
func (s Statuses) Values(r Role) []string {
	return append([]string{}, s.values[r]...)
}

// Describe is the mapping as one line, for reports.
func (s Statuses) Describe() string {
	var parts []string
	for _, r := range Roles {
		if v := s.values[r]; len(v) > 0 {
			parts = append(parts, string(r)+"="+strings.Join(v, ","))
		}
	}
	return strings.Join(parts, " ")
}

// ParseStatuses applies --status specs over the default set.
func ParseStatuses(specs []string) (Statuses, error) {
	s := DefaultStatuses()
	for _, spec := range specs {
		if err := s.Set(spec); err != nil {
			return s, err
		}
	}
	return s, s.Validate()
}
