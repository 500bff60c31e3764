package watch

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// loop runs one check on its interval until ctx is done. A run is never
// started while the last one is still going: a run that outlasts the
// interval delays the next (the ticker drops the ticks it missed).
func (w *watcher) loop(ctx context.Context, c Check) {
	first, last := true, ""
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		err := w.runOnce(ctx, c)
		if msg := errText(err); msg != last && w.o.Failed != nil && err != nil {
			w.o.Failed(c.Name, err)
		}
		last = errText(err)
		if first {
			first = false
			w.pending.Add(-1)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runOnce runs the check under its timeout and records the run; its error
// is the run's, nil when it succeeded or was cut short by the end.
func (w *watcher) runOnce(ctx context.Context, c Check) error {
	if ctx.Err() != nil {
		return nil
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = c.Interval
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	s, err := safeRun(rctx, c)
	took := time.Since(start)
	if ctx.Err() != nil {
		return nil // stopped: a run cut short by the shutdown is not a failure of the check
	}
	result := "ok"
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || rctx.Err() != nil):
		result = "timeout"
	case err != nil:
		result = "error"
	}
	w.m.runs.WithLabelValues(c.Name, result).Inc()
	w.m.duration.WithLabelValues(c.Name).Observe(took.Seconds())
	w.mu.Lock()
	w.res.Runs[c.Name]++
	if err != nil {
		w.res.Failed[c.Name]++
	}
	w.mu.Unlock()
	if err != nil {
		w.m.up.WithLabelValues(c.Name).Set(0)
		return err
	}
	w.m.up.WithLabelValues(c.Name).Set(1)
	w.m.lastSuccess.WithLabelValues(c.Name).Set(float64(w.o.Now().UnixNano()) / 1e9)
	if s != nil {
		w.m.apply(c.Name, s)
	}
	return nil
}

// safeRun turns a check's panic into a failed run: one broken check must
// not end the watch of the others.
func safeRun(ctx context.Context, c Check) (s *Sample, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("check %s panicked: %v", c.Name, r)
		}
	}()
	return c.Run(ctx)
}
