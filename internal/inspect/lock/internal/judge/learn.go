package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/platform/english"
)

// Certainty where the server allows it (inspect lock --learn): the
// commands seen while watching say how a family's keys are written and
// released, which no reading of the keys can. A key taken with SET ... NX
// (PX/EX or none), SETNX, or by a script that does so, or released by a
// script that compares its value before deleting it, is a lock; a key
// written with a plain SET (or SETEX) and never with NX is data. What was
// seen is kept per raw template (the key with its varying parts replaced
// by their shape), so it speaks for the keys of the template the scan
// reads afterwards, held by other owners.

// maxLearned bounds the templates kept while learning.
const maxLearned = 65536

// Learned is what the commands seen said of one template.
type Learned struct {
	LockWrites, Releases, DataWrites int64
}

// Lock reports a template whose keys were taken or released as locks are.
func (l *Learned) Lock() bool {
	return l.LockWrites+l.Releases > 0 && l.DataWrites <= l.LockWrites
}

// Data reports a template whose keys were only written as data is.
func (l *Learned) Data() bool { return l.DataWrites > 0 && l.LockWrites+l.Releases == 0 }

// Why says what was seen.
func (l *Learned) Why() string {
	var parts []string
	if l.LockWrites > 0 {
		parts = append(parts, english.Count(l.LockWrites, "write", "writes")+" with SET NX (or SETNX, or in a script)")
	}
	if l.Releases > 0 {
		parts = append(parts, english.Count(l.Releases, "release", "releases")+" by compare-and-delete")
	}
	if l.DataWrites > 0 {
		parts = append(parts, english.Count(l.DataWrites, "write", "writes")+" without NX")
	}
	return "seen while learning: " + strings.Join(parts, ", ")
}

// Learner folds the commands MONITOR reported into what each template's
// keys are. A script's commands come as one run of lines from "lua".
type Learner struct {
	now     time.Time
	byTmpl  map[string]*Learned
	script  []keyspace.Command // the run of script commands being read
	Dropped int64              // templates not kept (maxLearned)
	Seen    int64              // commands read
}

func NewLearner(now time.Time) *Learner { return &Learner{now: now, byTmpl: map[string]*Learned{}} }

// Add folds one command in.
func (l *Learner) Add(c keyspace.Command) {
	l.Seen++
	if c.Lua {
		l.script = append(l.script, c)
		return
	}
	l.endScript()
	l.command(c.Args, false)
}

// Finish ends the last script and returns what was learned, per raw
// template.
func (l *Learner) Finish() map[string]*Learned {
	l.endScript()
	return l.byTmpl
}

func (l *Learner) endScript() {
	if len(l.script) == 0 {
		return
	}
	// GET key, then DEL (or UNLINK) of the same key in the same script:
	// a compare-and-delete release.
	got := map[string]bool{}
	for _, c := range l.script {
		if len(c.Args) < 2 {
			continue
		}
		switch strings.ToUpper(c.Args[0]) {
		case "GET", "HGET", "HEXISTS":
			got[c.Args[1]] = true
		case "DEL", "UNLINK":
			for _, k := range c.Args[1:] {
				if got[k] {
					l.at(k).Releases++
				}
			}
		default:
			l.command(c.Args, true)
		}
	}
	l.script = l.script[:0]
}

// command judges one write: SET NX and SETNX take a lock; a plain SET
// or SETEX outside a script writes data (inside one it may be a lock's
// extension, and says nothing).
func (l *Learner) command(args []string, lua bool) {
	if len(args) < 2 {
		return
	}
	switch strings.ToUpper(args[0]) {
	case "SET":
		nx, xx := false, false
		for _, a := range args[3:] {
			switch strings.ToUpper(a) {
			case "NX":
				nx = true
			case "XX":
				xx = true
			}
		}
		switch {
		case nx:
			l.at(args[1]).LockWrites++
		case !lua && !xx:
			l.at(args[1]).DataWrites++
		}
	case "SETNX":
		l.at(args[1]).LockWrites++
	case "SETEX", "PSETEX":
		if !lua {
			l.at(args[1]).DataWrites++
		}
	}
}

func (l *Learner) at(key string) *Learned {
	tmpl := keyshape.Template(keyshape.Split(key, l.now))
	if x, ok := l.byTmpl[tmpl]; ok {
		return x
	}
	if len(l.byTmpl) >= maxLearned {
		l.Dropped++
		return &Learned{}
	}
	x := &Learned{}
	l.byTmpl[tmpl] = x
	return x
}

// learned is what learning said of a judged key's raw template.
func (c *Config) learned(j *Judged) *Learned {
	if len(c.Learned) == 0 {
		return nil
	}
	return c.Learned[keyshape.Template(j.Segs)]
}

// LearnedSummary says what learning saw, for the report's notes.
func LearnedSummary(l *Learner, d time.Duration, learned map[string]*Learned) string {
	var locks, data int
	for _, x := range learned {
		switch {
		case x.Lock():
			locks++
		case x.Data():
			data++
		}
	}
	s := fmt.Sprintf("learned for %s (MONITOR): %s read; %s of keys written or released as locks, %s written as data",
		FormatMs(d.Milliseconds()), english.Count(l.Seen, "command", "commands"), english.Count(int64(locks), "template", "templates"),
		english.Number(int64(data)))
	if l.Dropped > 0 {
		s += fmt.Sprintf(" (%s writes to further templates not kept)", english.Number(l.Dropped))
	}
	return s
}
