// Command testsummary reads `go test -json` on stdin and prints what a CI
// log needs: each package's result as it ends, the whole output of every
// test that failed (and of a package that failed outside its tests), and at
// the end the slowest packages and tests - where CI's minutes go. It exits
// 1 when anything failed, so a pipeline without pipefail still fails.
//
//	go test -json ./... | go run ./.ci/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action     string
	Package    string
	ImportPath string // of a build event
	Test       string
	Elapsed    float64
	Output     string
}

type timing struct {
	name    string
	elapsed float64
}

func main() {
	out := map[string][]string{} // package + "\x00" + test -> its output lines
	var pkgs, tests []timing
	var failed []string
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Println(string(line)) // a build error or anything else not JSON
			continue
		}
		id := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			fmt.Print(e.Output)
		case "build-fail":
			failed = append(failed, "build of "+e.ImportPath)
		case "output":
			out[id] = append(out[id], e.Output)
		case "pass", "skip":
			if e.Test == "" {
				fmt.Printf("%-4s %s %.1fs\n", e.Action, e.Package, e.Elapsed)
				pkgs = append(pkgs, timing{e.Package, e.Elapsed})
			} else if !strings.Contains(e.Test, "/") {
				tests = append(tests, timing{short(e.Package) + " " + e.Test, e.Elapsed})
			}
			delete(out, id)
		case "fail":
			fmt.Printf("FAIL %s %s %.1fs\n", e.Package, e.Test, e.Elapsed)
			fmt.Print(strings.Join(out[id], ""))
			delete(out, id)
			failed = append(failed, strings.TrimSpace(e.Package+" "+e.Test))
			if e.Test == "" {
				pkgs = append(pkgs, timing{e.Package, e.Elapsed})
			}
		}
	}
	top("slowest packages", pkgs, 12)
	top("slowest tests", tests, 25)
	if len(failed) > 0 {
		fmt.Printf("\n%d failed:\n  %s\n", len(failed), strings.Join(failed, "\n  "))
		os.Exit(1)
	}
}

func short(pkg string) string { return strings.TrimPrefix(pkg, "github.com/dupctl/dupctl/") }

func top(title string, ts []timing, n int) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].elapsed > ts[j].elapsed })
	fmt.Printf("\n%s:\n", title)
	for i := 0; i < n && i < len(ts); i++ {
		fmt.Printf("  %7.1fs  %s\n", ts[i].elapsed, short(ts[i].name))
	}
}
