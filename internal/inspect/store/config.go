package store

import (
	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/platform/config"
)

// Defaults are the options of a run given nothing but the database: what
// `inspect store`'s flags start from, and what doctor runs with.
func Defaults() Options {
	return Options{Statuses: idemtable.DefaultStatuses(), StuckAfter: DefaultStuckAfter, Samples: 5, ReplicaRows: DefaultReplicaRows}
}

// Configure adds what job j of dupctl.yaml (nil: none) says to o: its
// idempotency table and columns, where the user set none (given: a flag;
// nil: none) and did not ask for discovery in a {Schema}. `inspect store`
// and doctor both configure a run here.
func (o *Options) Configure(j *config.Job, given func(field string) bool) {
	if given == nil {
		given = func(string) bool { return false }
	}
	if j == nil || given("Schema") {
		return
	}
	idem := j.Idempotency
	for _, s := range []struct {
		field    string
		dst      *string
		fromYAML string
	}{{"Table", &o.Table, idem.Table}, {"KeyColumns", &o.KeyColumns, idem.KeyColumn}, {"StatusColumn", &o.StatusColumn, idem.StatusColumn},
		{"BusinessColumns", &o.BusinessColumns, idem.BusinessKeyColumn}} {
		if s.fromYAML != "" && !given(s.field) {
			*s.dst = s.fromYAML
		}
	}
}
