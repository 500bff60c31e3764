package cmdutil

import (
	"github.com/dupctl/dupctl/internal/cacheaudit"
	"github.com/dupctl/dupctl/internal/findings"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/store"
)

// Catalog is every finding rule this build knows: the registry behind
// `dupctl explain`, JSON check titles and docs/checks.md.
func Catalog() *findings.Catalog {
	return findings.NewCatalog(sim.Rules(), store.Rules(), cacheaudit.Rules())
}
