// Command gen writes a synthetic worker-fleet log with internal/testenv/loggen,
// for the benchmark in bench/audit-logs/run.sh and for trying dupctl:
//
//	go run ./bench/audit-logs/gen -jobs 1000 -incident-every 50 -o fleet.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

func main() {
	var c loggen.Config
	var out, dialect string
	flag.Uint64Var(&c.Seed, "seed", 1, "seed")
	flag.IntVar(&c.Jobs, "jobs", 1000, "jobs (business operations)")
	flag.IntVar(&c.Workers, "workers", 8, "workers")
	flag.IntVar(&c.IncidentEvery, "incident-every", 0, "inject one duplicate incident every N jobs (0: clean)")
	flag.BoolVar(&c.Lean, "lean", false, "fewer lines per job (receive, lock, check, effect, commit, ack)")
	flag.IntVar(&c.Pad, "pad", 0, "filler bytes per line")
	flag.DurationVar(&c.Skew, "skew", 0, "per-worker clock skew bound")
	flag.DurationVar(&c.Gap, "gap", 0, "time between two jobs' starts (default 20ms): -jobs 302400 -gap 2s is a week")
	flag.StringVar(&dialect, "dialect", "camel", "camel, snake, logstash or slog")
	flag.StringVar(&out, "o", "-", "output file")
	flag.Parse()
	c.Dialect = loggen.Dialect(dialect)
	w := os.Stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	sum, err := loggen.Write(c, loggen.Single(bw))
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "%d lines, %d bytes, %d incidents\n", sum.Lines, sum.Bytes, len(sum.Incidents))
}
