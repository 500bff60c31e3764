package cache

import "github.com/dupctl/dupctl/internal/platform/problem"

// Validate checks the options as given: a pattern and a table, and the
// bounds of the numbers. A zero Batch, Samples or ReplicaKeys and an
// empty Lookup are refused here, though Run takes them for its defaults
// before it checks.
func (o Options) Validate() error {
	if o.Pattern.Raw == "" || o.Table == "" {
		return problem.Inputf("Pattern", "{Pattern} and {Table} are required, e.g. {Pattern} 'job:status:{key}' {Table} jobs")
	}
	if _, err := ParsePattern(o.Pattern.Raw); err != nil {
		return err
	}
	switch {
	case o.Batch < 1 || o.Batch > 100_000:
		return problem.Inputf("Batch", "{Batch} must be 1..100000, got %d", o.Batch)
	case o.Recheck < 0:
		return problem.Inputf("Recheck", "{Recheck} must not be negative, got %s", o.Recheck)
	case o.Samples < 1 || o.Samples > 1000:
		return problem.Inputf("Samples", "{Samples} must be 1..1000, got %d", o.Samples)
	case o.Lookup != LookupAuto && o.Lookup != LookupBatch && o.Lookup != LookupScan:
		return problem.Inputf("Lookup", "{Lookup} %q: want auto, batch or scan", o.Lookup)
	case o.ReplicaKeys < 1 || o.ReplicaKeys > 1_000_000:
		return problem.Inputf("ReplicaKeys", "{ReplicaKeys} must be 1..1000000, got %d", o.ReplicaKeys)
	}
	return nil
}
