// Command loggen writes a worker fleet's log continuously, sped up, for the
// soak in bench/watch/soak.sh: every second a chunk of -jobs jobs
// (internal/testenv/loggen, one incident every -incident-every jobs)
// covering -span of log time, with job and order ids of the chunk's own so
// no key repeats across chunks. Every -rotate the file is rotated, by rename
// (path -> path.1, a new path) and by truncation in turn, as logrotate's
// create and copytruncate do.
//
//	loggen -o worker.log -jobs 50 -span 20s -rotate 5m
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

func main() {
	out := flag.String("o", "", "the log file (required)")
	jobs := flag.Int("jobs", 50, "jobs per second of wall time")
	span := flag.Duration("span", 20*time.Second, "log time one second of wall time covers")
	every := flag.Int("incident-every", 50, "one duplicate incident every N jobs")
	rotate := flag.Duration("rotate", 5*time.Minute, "rotate the file this often (by rename, then by truncation, in turn)")
	flag.Parse()
	if *out == "" {
		log.Fatal("-o is required")
	}
	open := func() *os.File {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		return f
	}
	f := open()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	start, lastRotate := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC), time.Now()
	var lines int64
	var bytesOut, incidents, renames, truncs int
	var buf bytes.Buffer
	for chunk := 0; ; chunk++ {
		buf.Reset()
		sum, err := loggen.Write(loggen.Config{
			Seed: uint64(chunk) + 1, Jobs: *jobs, IncidentEvery: *every,
			Start: start.Add(time.Duration(chunk) * *span), Gap: *span / time.Duration(*jobs),
		}, loggen.Single(&buf))
		if err != nil {
			log.Fatal(err)
		}
		// A chunk's ids of its own: loggen numbers jobs and orders from 1.
		b := bytes.ReplaceAll(buf.Bytes(), []byte(`"ord-`), []byte(fmt.Sprintf(`"ord-c%d-`, chunk)))
		b = bytes.ReplaceAll(b, []byte(`:ord-`), []byte(fmt.Sprintf(`:ord-c%d-`, chunk)))
		b = bytes.ReplaceAll(b, []byte(`"job-`), []byte(fmt.Sprintf(`"job-c%d-`, chunk)))
		if _, err := f.Write(b); err != nil {
			log.Fatal(err)
		}
		lines, bytesOut, incidents = lines+sum.Lines, bytesOut+len(b), incidents+len(sum.Incidents)
		if time.Since(lastRotate) >= *rotate {
			lastRotate = time.Now()
			if (renames+truncs)%2 == 0 {
				f.Close()
				if err := os.Rename(*out, *out+".1"); err != nil {
					log.Fatal(err)
				}
				f = open()
				renames++
			} else if err := f.Truncate(0); err != nil {
				log.Fatal(err)
			} else {
				truncs++
			}
		}
		select {
		case <-stop:
			f.Close()
			fmt.Printf("loggen: %d chunks, %d lines, %d bytes, %d incidents, %d renames, %d truncations\n",
				chunk+1, lines, bytesOut, incidents, renames, truncs)
			return
		case <-tick.C:
		}
	}
}
