// Command load writes the keyspace of bench/inspect-lock (package
// lockbench: locks of every maker dupctl recognises beside non-lock keys
// of mixed types) as Redis protocol for `redis-cli --pipe`.
//
//	go run ./bench/inspect-lock/load -locks 1000000 -others 200000 | redis-cli -n 14 --pipe
//
// With -check FILE it reads `dupctl inspect lock -o json` output instead
// and checks it against the keyspace it would write: every lock family
// found with all its keys, no non-lock key among the lock candidates, and
// no warn or error finding about anything but locks.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/dupctl/dupctl/internal/inspect/lock/lockbench"
)

// resp writes commands in the Redis protocol.
type resp struct{ w *bufio.Writer }

func (p *resp) Cmd(args ...string) {
	fmt.Fprintf(p.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(p.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

func main() {
	nLocks := flag.Int("locks", 1_000_000, "lock keys")
	nOthers := flag.Int("others", 200_000, "non-lock keys")
	check := flag.String("check", "", "check this `dupctl inspect lock -o json` output instead of writing")
	flag.Parse()
	if *check != "" {
		if err := checkReport(*check, *nLocks, *nOthers); err != nil {
			fmt.Fprintln(os.Stderr, "check:", err)
			os.Exit(1)
		}
		return
	}
	w := &resp{bufio.NewWriterSize(os.Stdout, 1<<20)}
	lockbench.Write(w, *nLocks, *nOthers)
	if err := w.w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// report is what -check reads of dupctl's JSON.
type report struct {
	Findings []struct {
		Code, Severity, Subject string
		Evidence                []string
	} `json:"findings"`
	Data struct {
		Scan struct {
			KeysScanned int64 `json:"keys_scanned"`
			Candidates  int64 `json:"candidates"`
			Locks       int64 `json:"locks"`
			Skipped     int64 `json:"skipped_by_shape"`
		} `json:"scan"`
		Families []family `json:"families"`
		Possible []family `json:"possible"`
		Skipped  []family `json:"skipped"`
	} `json:"data"`
}

// family is a key family of dupctl's JSON.
type family struct {
	Template string   `json:"template"`
	Keys     int64    `json:"keys"`
	Examples []string `json:"examples"`
}

func checkReport(path string, nLocks, nOthers int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	d := rep.Data
	c := &checker{}
	if d.Scan.KeysScanned != int64(nLocks+nOthers) {
		c.fail("%d keys scanned, want %d", d.Scan.KeysScanned, nLocks+nOthers)
	}
	found, famKind := c.candidateFamilies(d.Families)
	possibleLocks, possibleOthers := possibleFamilies(d.Possible, found)
	// A family is found when its keys are among the candidates; a lock
	// whose value cannot be told from other data (a redislock token with
	// no upper case letter followed by "worker-7": where does the token
	// end?) may be skipped, and is counted - at most one in a thousand.
	lc := lockbench.Split(lockbench.Locks, nLocks)
	var missed int64
	var misses []string
	for i, k := range lockbench.Locks {
		want := int64(lc[i])
		if n := found[k.Name]; n != want {
			missed += want - n
			misses = append(misses, fmt.Sprintf("%s %d", k.Name, want-n))
		}
		if 1000*found[k.Name] < 999*want {
			c.fail("lock family %s: %d keys found among the candidates, want %d", k.Name, found[k.Name], want)
		}
	}
	if d.Scan.Candidates+d.Scan.Skipped != int64(nLocks+nOthers) || d.Scan.Candidates > int64(nLocks) {
		c.fail("%d candidates and %d skipped by shape, want at most %d and %d in all", d.Scan.Candidates, d.Scan.Skipped, nLocks, nLocks+nOthers)
	}
	// No warn or error finding about a non-lock key.
	warned := 0
	for _, f := range rep.Findings {
		if f.Severity != "warn" && f.Severity != "error" || strings.HasPrefix(f.Subject, "redis ") {
			continue
		}
		warned++
		k, ok := famKind[f.Subject]
		if !ok || !k.Lock {
			c.fail("%s %s about %s, which is not a lock family", f.Severity, f.Code, f.Subject)
		}
	}
	if len(c.problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(c.problems), strings.Join(c.problems, "\n  "))
	}
	fmt.Printf("check: %d keys scanned; all %d lock families found, %d of %d locks among the candidates "+
		"(%d of them possible, info only; %d missed: %v); no non-lock key among the confirmed and likely locks, "+
		"%d among the possible ones; %d warn/error findings, all about lock families\n",
		d.Scan.KeysScanned, len(lockbench.Locks), int64(nLocks)-missed, nLocks, possibleLocks, missed, misses, possibleOthers, warned)
	return nil
}

// checker collects what -check finds wrong.
type checker struct{ problems []string }

func (c *checker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// candidateFamilies checks that no candidate family is made of non-lock
// keys or keys from elsewhere; it returns the keys found per lock kind and
// each family's kind.
func (c *checker) candidateFamilies(fams []family) (found map[string]int64, famKind map[string]lockbench.Kind) {
	found, famKind = map[string]int64{}, map[string]lockbench.Kind{}
	for _, f := range fams {
		for _, ex := range f.Examples {
			k, ok := lockbench.KindOf(ex)
			switch {
			case !ok:
				c.fail("candidate family %s: example %s is not from this keyspace", f.Template, ex)
			case !k.Lock:
				c.fail("candidate family %s holds the non-lock key %s (%s)", f.Template, ex, k.Name)
			default:
				famKind[f.Template] = k
			}
		}
		found[famKind[f.Template].Name] += f.Keys
	}
	return found, famKind
}

// possibleFamilies counts the possible lock families, one info line each:
// a lock family found there is found (and said to be unconfirmed); a
// non-lock one is counted, and allowed (info only).
func possibleFamilies(fams []family, found map[string]int64) (lockKeys, otherKeys int64) {
	for _, f := range fams {
		k, ok := lockbench.KindOf(f.Examples[0])
		if !ok || !k.Lock {
			otherKeys += f.Keys
			continue
		}
		found[k.Name] += f.Keys
		lockKeys += f.Keys
	}
	return lockKeys, otherKeys
}
