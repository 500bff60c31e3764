package cache

import (
	"time"

	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/platform/config"
)

// Defaults are the options of an audit given nothing but its pattern and
// table: what `audit cache`'s flags start from, and what doctor runs with
// (liveness unknown: no live keys, none assumed).
func Defaults() Options {
	return Options{Decoder: Decoder{Kind: "string"}, Statuses: idemtable.DefaultStatuses(), Batch: 1000, Lookup: LookupAuto,
		Recheck: 2 * time.Second, Samples: 5, ReplicaKeys: DefaultReplicaKeys}
}

// Configure adds what job j of dupctl.yaml (nil: none) says to o: its
// cache_pattern and its idempotency table and columns, where the user set
// none (given: a flag; nil: none). A cache_pattern that does not parse is
// a *problem.Input about {Pattern}. `audit cache` and doctor both
// configure an audit here.
func (o *Options) Configure(j *config.Job, given func(field string) bool) error {
	if given == nil {
		given = func(string) bool { return false }
	}
	if j == nil {
		return nil
	}
	idem := j.Idempotency
	for _, s := range []struct {
		field    string
		dst      *string
		fromYAML string
	}{{"Table", &o.Table, idem.Table}, {"KeyColumn", &o.KeyColumn, idem.KeyColumn}, {"StatusColumn", &o.StatusColumn, idem.StatusColumn}} {
		if s.fromYAML != "" && !given(s.field) {
			*s.dst = s.fromYAML
		}
	}
	if j.CachePattern == "" || given("Pattern") {
		return nil
	}
	p, err := ParsePattern(j.CachePattern)
	if err != nil {
		return err
	}
	o.Pattern = p
	return nil
}
