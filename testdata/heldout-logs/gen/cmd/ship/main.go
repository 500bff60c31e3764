// Command ship writes what `kubectl logs --prefix` shows for a set of pods: each
// pod's log in turn (kubectl fetches the pods of a selector one after another
// when not following), every line behind "[pod/NAME/CONTAINER] ". A pod's name
// is its file's base name without ".log".
//
//	go run ./cmd/ship -container worker -out kubectl-logs.log pod-a.log pod-b.log
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"dupctl.test/heldoutlogs/script"
)

func main() {
	container := flag.String("container", "worker", "the container's name")
	out := flag.String("out", "", "the file to write")
	flag.Parse()
	files := flag.Args()
	sort.Strings(files)
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ship:", err)
			os.Exit(1)
		}
		all = append(all, script.KubectlPrefix(strings.TrimSuffix(filepath.Base(f), ".log"), *container, b)...)
	}
	if err := os.WriteFile(*out, all, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "ship:", err)
		os.Exit(1)
	}
}
