package replay

import "github.com/dupctl/dupctl/internal/replay/internal/consume"

// NewRunID names a replay run: the UTC time (sortable, readable in a
// journal's name) and random bits.
func NewRunID() string { return consume.NewID() }
