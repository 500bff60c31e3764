package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Counting side effects in logs (Options.EffectsLog), for effects that
// leave no row to query - an HTTP call, an email - or a worker whose
// database dupctl cannot read: the lines are read with audit logs'
// mapping, and each side_effect line counts for the run's business key
// it names.

// WorkerOutput is the EffectsLog value that reads the workers' own
// stdout and stderr.
const WorkerOutput = "-"

// effectsLog is where one run's log lines come from: the workers' output
// as it arrives, or what a file gains during the run.
type effectsLog struct {
	path   string
	start  os.FileInfo // nil: no file yet
	offset int64
	out    bytes.Buffer // WorkerOutput; guarded by run.logMu
	// arrived are, for WorkerOutput, each line's arrival (ms from the
	// run's start) and the copy that wrote it, by line number - 1.
	arrived []lineArrival
}

// lineArrival is when a line of a worker's output reached dupctl, and
// from which copy.
type lineArrival struct {
	ms   int64
	lane string
}

// startEffectsLog notes where the run's lines will start.
func startEffectsLog(where string) (*effectsLog, error) {
	l := &effectsLog{path: where}
	if where == WorkerOutput {
		return l, nil
	}
	st, err := os.Stat(where)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, problem.Inputf("EffectsLog", "%w", err)
	case st.IsDir():
		return nil, problem.Inputf("EffectsLog", "%s is a directory: give the file the workers log to", where)
	default:
		l.start, l.offset = st, st.Size()
	}
	return l, nil
}

// lines returns what the run logged.
func (l *effectsLog) lines(r *run) (io.Reader, error) {
	if l.path == WorkerOutput {
		r.logMu.Lock()
		defer r.logMu.Unlock()
		return bytes.NewReader(bytes.Clone(l.out.Bytes())), nil
	}
	f, err := os.Open(l.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, problem.Inputf("EffectsLog", "%s: the workers wrote no such file during the run", l.path)
	case err != nil:
		return nil, problem.Inputf("EffectsLog", "%w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, problem.Inputf("EffectsLog", "%w", err)
	}
	from := l.offset
	if l.start == nil || !os.SameFile(l.start, st) || st.Size() < from {
		from = 0 // created, rotated or truncated during the run: all of it is new
	}
	b, err := io.ReadAll(io.NewSectionReader(f, from, st.Size()-from))
	if err != nil {
		return nil, problem.Inputf("EffectsLog", "%w", err)
	}
	return bytes.NewReader(b), nil
}

// logTally is what the run's log held, for the errors and the report.
type logTally struct {
	lines, malformed, effects, unkeyed int64
	// hits are the effect lines of the run's keys, for the picture.
	hits []effectHit
}

// effectHit is one side-effect line of a business key of the run: its
// line number in what was read, its own time (zero when it has none) and
// the worker it names (Consumer: "" when none).
type effectHit struct {
	key, consumer string
	line          int64
	at            time.Time
}

// logEffects counts side_effect lines per business key of the run. A line
// names its key in the business key field or, failing that, in the
// idempotency key, job id or message id (which often embed it). The
// distinct idempotency keys per business key are counted when every
// effect line of that key carries one.
func logEffects(
	ctx context.Context, name string, in io.Reader, m *logs.Mapping, keyRe *regexp.Regexp,
) (map[string]effectRow, logTally, error) {
	var t logTally
	type seen struct {
		n      int
		idem   map[string]bool
		noIdem bool // an effect line of the key carried no idempotency key
	}
	keys := map[string]*seen{}
	st, err := logs.Scan(ctx, []logs.Source{logs.ReaderSource(name, in)}, logs.Options{Mapping: m, Workers: 1}, func(e *logs.Event) error {
		if e.Kind != logs.KindSideEffect {
			return nil
		}
		t.effects++
		key := ""
		for _, f := range []string{e.BusinessKey(), e.IdempotencyKey(), e.JobID(), e.MessageID()} {
			if key = keyRe.FindString(f); key != "" {
				break
			}
		}
		if key == "" {
			t.unkeyed++
			return nil
		}
		k := keys[key]
		if k == nil {
			k = &seen{idem: map[string]bool{}}
			keys[key] = k
		}
		k.n++
		t.hits = append(t.hits, effectHit{key: key, consumer: e.Consumer(), line: e.Line, at: e.Time})
		if ik := e.IdempotencyKey(); ik != "" {
			k.idem[ik] = true
		} else {
			k.noIdem = true
		}
		return nil
	})
	if err != nil {
		return nil, t, fmt.Errorf("read %s: %w", name, err)
	}
	t.lines, t.malformed = st.Lines, st.Malformed
	out := make(map[string]effectRow, len(keys))
	for key, k := range keys {
		row := effectRow{n: k.n}
		if !k.noIdem {
			d := len(k.idem)
			row.idem = &d
		}
		out[key] = row
	}
	return out, t, nil
}

// noEffectsRead is the error of a run whose log held no side effect of
// its keys: a mapping that does not know the workers' phrasing would
// otherwise read as every message lost.
func noEffectsRead(where string, t logTally) error {
	src := "the workers' output"
	if where != WorkerOutput {
		src = where
	}
	switch {
	case t.lines == 0:
		return problem.Inputf("EffectsLog",
			"%s held no line during the run: point it at what the workers log (- for their stdout and stderr)", src)
	case t.effects == 0 && t.malformed == t.lines:
		return problem.Inputf("EffectsLog", "none of the %d lines of %s could be read as log lines: "+
			"effects are counted in JSON lines, logfmt, CLEF, "+
			"GELF, OTLP/JSON or a common console layout (Spring Boot, logback, Python logging, ...); check what the worker writes with "+
			"`dupctl audit logs --explain-mapping` on a saved copy ({WorkerLog} FILE)", t.lines, src)
	case t.effects == 0:
		return problem.Inputf("EffectsLog", "none of the %d lines of %s was read as a side effect: "+
			"check the mapping with `dupctl audit logs --explain-mapping` on a saved copy ({WorkerLog} FILE) "+
			"and name the phrase with {Events} side_effect='...'", t.lines, src)
	default:
		return problem.Inputf("EffectsLog", "the %d side-effect lines of %s name none of the run's business keys: "+
			"map the field that holds the key with {Fields} businessKey=PATH", t.effects, src)
	}
}

// countEffects counts the run's side effects: by the effects query, or
// in the lines of the effects log.
func (r *run) countEffects() (map[string]effectRow, error) {
	if r.effectsLog == nil {
		return countEffects(r.ctx, r.d.Postgres, r.o.EffectsSQL, r.keys)
	}
	in, err := r.effectsLog.lines(r)
	if err != nil {
		return nil, err
	}
	name := r.effectsLog.path
	if name == WorkerOutput {
		name = "workers"
	}
	rows, t, err := logEffects(r.ctx, name, in, r.o.LogMapping, r.keyRe)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 && (t.effects > 0 || !r.allLogBlind()) {
		// No effect of any key of the run: the mapping, not the run -
		// unless every key's effect may have gone unlogged by the fault
		// (the after-write point on a run of one key), which the verdict
		// says.
		return nil, noEffectsRead(r.effectsLog.path, t)
	}
	r.unkeyed = t.unkeyed
	r.effectLines = r.placeEffects(t.hits)
	return rows, nil
}

// placeEffects places each effect line in time and on a worker copy, as
// far as what was read shows it: a line of the workers' output reached
// dupctl at a known time from a known copy; a line of a file carries its
// own timestamp (the worker's clock) and the copy only when its worker
// field names one (W1); otherwise its time or copy is left unknown.
func (r *run) placeEffects(hits []effectHit) []EffectLine {
	el := r.effectsLog
	out := make([]EffectLine, 0, len(hits))
	for _, h := range hits {
		e := EffectLine{Key: h.key, Line: h.line}
		if el.path == WorkerOutput {
			r.logMu.Lock()
			if i := int(h.line) - 1; i >= 0 && i < len(el.arrived) {
				a := el.arrived[i]
				e.T, e.When, e.Lane = &a.ms, WhenOutput, a.lane
			}
			r.logMu.Unlock()
		} else {
			if !h.at.IsZero() {
				ms := h.at.Sub(r.start).Milliseconds()
				e.T, e.When = &ms, WhenTimestamp
			}
			for _, s := range r.slots {
				if h.consumer == s.lane(1) {
					e.Lane = h.consumer
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// allLogBlind reports whether the fault may have kept every key's effect
// out of the log.
func (r *run) allLogBlind() bool {
	for _, k := range r.keys {
		if !r.logBlind(k) {
			return false
		}
	}
	return true
}
