package store

import "github.com/dupctl/dupctl/internal/idemtable"

// The table model inspect store judges is shared with audit cache and
// doctor: it lives in internal/idemtable, and these are its names in
// store's own API (Options.Statuses, Run's Querier, TableResult's columns).
type (
	Querier  = idemtable.Querier
	Table    = idemtable.Table
	Column   = idemtable.Column
	Name     = idemtable.Name
	Role     = idemtable.Role
	Statuses = idemtable.Statuses
)

// The status roles.
const (
	Processing = idemtable.Processing
	Succeeded  = idemtable.Succeeded
	Failed     = idemtable.Failed
	Retryable  = idemtable.Retryable
	Pending    = idemtable.Pending
)
