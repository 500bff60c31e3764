package cmdutil

import (
	"github.com/dupctl/dupctl/internal/audit"
	"github.com/dupctl/dupctl/internal/cacheaudit"
	"github.com/dupctl/dupctl/internal/config"
	"github.com/dupctl/dupctl/internal/findings"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/keys"
	"github.com/dupctl/dupctl/internal/replay"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/store"
	"github.com/dupctl/dupctl/internal/topology"
	"github.com/dupctl/dupctl/internal/ttl"
)

// Catalog is every finding rule this build knows: the registry behind
// `dupctl explain`, JSON check titles and docs/checks.md.
func Catalog() *findings.Catalog {
	return findings.NewCatalog(sim.Rules(), config.Rules(), topology.Rules(), audit.Rules(), keys.Rules(), ttl.Rules(), lock.Rules(), replay.Rules(), store.Rules(), cacheaudit.Rules())
}
