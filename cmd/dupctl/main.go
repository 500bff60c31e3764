// Command dupctl audits and debugs duplicate processing in queue + worker
// systems. All of it lives in internal/cli; main only exits.
package main

import (
	"os"

	"github.com/dupctl/dupctl/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
