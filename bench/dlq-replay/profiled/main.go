// Command profiled is dupctl with a CPU profile: cli.Main as cmd/dupctl
// runs it, under runtime/pprof when DUPCTL_CPUPROFILE names a file. It is
// for finding where a replay's client time goes (bench/dlq-replay's
// -dupctl can point at it); the replay code itself is unchanged.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/dupctl/dupctl/internal/cli"
)

func main() {
	path := os.Getenv("DUPCTL_CPUPROFILE")
	if path == "" {
		os.Exit(cli.Main())
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile: %v\n", err)
		os.Exit(2)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile: %v\n", err)
		os.Exit(2)
	}
	code := cli.Main()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile: %v\n", err)
	}
	os.Exit(code)
}
