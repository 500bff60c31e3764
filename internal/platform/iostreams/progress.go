package iostreams

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/progress"
)

// StartProgress returns a meter that draws "label: done/total (rate/s, ETA)"
// on stderr, redrawn at most ten times a second, or progress.Nop when
// progress is not allowed (not a terminal, CI, machine output).
func (s *IOStreams) StartProgress(label, unit string) progress.Meter {
	if !s.ProgressEnabled() {
		return progress.Nop
	}
	return newLine(s.ErrOut, label, unit, time.Now)
}

type line struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	unit    string
	now     func() time.Time
	start   time.Time
	last    time.Time
	done    int64
	total   int64
	drawn   bool
	stopped bool
}

func newLine(w io.Writer, label, unit string, now func() time.Time) *line {
	t := now()
	return &line{w: w, label: label, unit: unit, now: now, start: t}
}

func (l *line) SetTotal(total int64) {
	l.mu.Lock()
	l.total = total
	l.mu.Unlock()
}

func (l *line) Add(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.done += n
	if t := l.now(); t.Sub(l.last) >= 100*time.Millisecond {
		l.last = t
		l.draw(t)
	}
}

func (l *line) draw(t time.Time) {
	elapsed := t.Sub(l.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(l.done) / elapsed
	}
	msg := fmt.Sprintf("%s: %s %s", l.label, english.Number(l.done), l.unit)
	if l.total > 0 {
		msg = fmt.Sprintf("%s: %s/%s %s", l.label, english.Number(l.done), english.Number(l.total), l.unit)
	}
	msg += fmt.Sprintf(" (%s/s", english.Number(int64(rate)))
	if l.total > 0 && rate > 0 && l.done < l.total {
		eta := time.Duration(float64(l.total-l.done) / rate * float64(time.Second))
		msg += ", ETA " + eta.Round(time.Second).String()
	}
	msg += ")"
	// \r + clear-to-end keeps one line however the width changes.
	fmt.Fprintf(l.w, "\r\x1b[K%s", msg)
	l.drawn = true
}

func (l *line) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
	l.stopped = true
}
