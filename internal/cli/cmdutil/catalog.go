package cmdutil

import (
	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/doctor/topology"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/keys"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/replay"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

// Catalog is every finding rule this build knows: the registry behind
// `dupctl explain`, JSON check titles and docs/checks.md.
func Catalog() *findings.Catalog {
	return findings.NewCatalog(sim.Rules(), config.Rules(), topology.Rules(), logs.Rules(), auditlogs.Rules(), keys.Rules(), ttl.Rules(), lock.Rules(), replay.Rules(), store.Rules(), auditcache.Rules(), chaos.Rules())
}
