package cli

import "github.com/dupctl/dupctl/internal/findings"

// Catalog is every finding rule this build knows: the registry behind
// `dupctl explain`, JSON check titles and docs/checks.md.
func Catalog() *findings.Catalog {
	return findings.NewCatalog()
}
