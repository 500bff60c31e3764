// Command naive is the straightforward Go program a user would write to
// find duplicated side effects: encoding/json, one line at a time, a map
// of idempotency keys of side_effect events. It is the benchmark's
// baseline for `dupctl audit logs` (bench/audit-logs/run.sh). With
// -msg-prefix it selects side effects by the start of the message instead
// of an event field, for logs that carry the step only in "msg".
//
// With -format logfmt or text it reads those formats the way a user would
// without dupctl: a line is a side effect when -effect matches it (a
// regular expression of the service's own phrasings), its key is the first
// group of -key; logfmt lines are split into key=value pairs first.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
)

type line struct {
	Event          string `json:"event"`
	Msg            string `json:"msg"`
	IdempotencyKey string `json:"idempotencyKey"`
}

func main() {
	prefix := flag.String("msg-prefix", "", "a side effect is a line whose msg starts with this (default: event == side_effect)")
	format := flag.String("format", "json", "json, logfmt or text")
	effect := flag.String("effect", "", "with logfmt or text: regular expression a side-effect line matches")
	key := flag.String("key", `key=(\S+)`, "with text: regular expression whose first group is the idempotency key")
	flag.Parse()
	if *format != "json" {
		os.Exit(textMode(flag.Arg(0), *format, regexp.MustCompile(*effect), regexp.MustCompile(*key)))
	}
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

// textMode counts side effects per key in a logfmt or text file.
func textMode(path, format string, effect, key *regexp.Regexp) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	seen := map[string]int{}
	for sc.Scan() {
		line := sc.Text()
		if format == "logfmt" {
			pairs := logfmt(line)
			if effect.MatchString(pairs["msg"]) {
				seen[pairs["idempotency_key"]]++
			}
			continue
		}
		if effect.MatchString(line) {
			if m := key.FindStringSubmatch(line); m != nil {
				seen[m[1]]++
			}
		}
	}
	dups := 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	fmt.Printf("%d duplicated side_effect keys of %d\n", dups, len(seen))
	return 0
}

// logfmt splits key=value pairs, values quoted or not.
func logfmt(line string) map[string]string {
	out := map[string]string{}
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		k, rest, ok := strings.Cut(line, "=")
		if !ok {
			break
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && (rest[end] != '"' || rest[end-1] == '\\') {
				end++
			}
			v, line = strings.ReplaceAll(rest[1:min(end, len(rest))], `\"`, `"`), rest[min(end+1, len(rest)):]
		} else {
			v, line, _ = strings.Cut(rest, " ")
		}
		out[k] = v
	}
	return out
}
