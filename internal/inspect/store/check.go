package store

import (
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Validate checks the options as given: the check groups named, the
// bounds of the numbers, and a table given with a schema. A zero Samples
// or ReplicaRows is refused here, though Run takes it for its default
// before it checks.
func (o Options) Validate() error {
	for _, c := range o.Checks {
		if !slices.Contains(CheckGroups, c) {
			return problem.Inputf("Checks", "unknown check %q: want %s", c, strings.Join(CheckGroups, ", "))
		}
	}
	switch {
	case o.StuckAfter <= 0:
		return problem.Inputf("StuckAfter", "{StuckAfter} must be positive, got %s", o.StuckAfter)
	case o.Samples < 1 || o.Samples > 1000:
		return problem.Inputf("Samples", "{Samples} must be 1..1000, got %d", o.Samples)
	case o.ReplicaRows < 1 || o.ReplicaRows > 1_000_000:
		return problem.Inputf("ReplicaRows", "{ReplicaRows} must be 1..1000000, got %d", o.ReplicaRows)
	}
	return o.checkSchema()
}

// checkSchema refuses a schema beside a table: the schema limits
// discovery, a table names its own.
func (o Options) checkSchema() error {
	if o.Table != "" && o.Schema != "" {
		return problem.Inputf("Schema", "{Schema} limits discovery: qualify {Table} instead ({Table} %s.%s)", o.Schema, o.Table)
	}
	return nil
}
