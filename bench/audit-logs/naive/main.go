// Command naive is the straightforward Go program a user would write to
// find duplicated side effects: encoding/json, one line at a time, a map
// of idempotency keys of side_effect events. It is the benchmark's
// baseline for `dupctl audit logs` (bench/audit-logs/run.sh). With
// -msg-prefix it selects side effects by the start of the message instead
// of an event field, for logs that carry the step only in "msg".
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

type line struct {
	Event          string `json:"event"`
	Msg            string `json:"msg"`
	IdempotencyKey string `json:"idempotencyKey"`
}

func main() {
	prefix := flag.String("msg-prefix", "", "a side effect is a line whose msg starts with this (default: event == side_effect)")
	flag.Parse()
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	seen := map[string]int{}
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		if (*prefix == "" && l.Event == "side_effect") || (*prefix != "" && strings.HasPrefix(l.Msg, *prefix)) {
			seen[l.IdempotencyKey]++
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dups := 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	fmt.Printf("%d duplicated side_effect keys of %d\n", dups, len(seen))
}
