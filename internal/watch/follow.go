package watch

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dupctl/dupctl/internal/cause"
)

func promhttpHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// follow runs the follower until ctx is done; when it stops on an error
// (a source gone unreadable) it is counted and started again after a
// pause, as a check's failed run would be. When every source ended (stdin
// closed) the follow is over: the counters stay served as they are.
func (w *watcher) follow(ctx context.Context, f Follower) {
	// Every cause starts at 0, so the first duplicate of a cause is an
	// increase Prometheus sees (a series born at 1 has none).
	for _, r := range cause.Rules() {
		w.m.duplicates.WithLabelValues(w.m.bounds.value("cause", r.Code))
	}
	for _, outcome := range []string{"acquired", "busy", "lost", "released"} {
		w.m.logLocks.WithLabelValues(outcome)
	}
	for ctx.Err() == nil {
		err := f(ctx, w.seen, w.duplicate)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			return
		}
		w.m.followErrors.Inc()
		select {
		case <-ctx.Done():
			return
		case <-time.After(cmp.Or(w.o.followPause, 5*time.Second)):
		}
	}
}

// seen counts one followed line by its step; job types are bounded.
func (w *watcher) seen(r LogRecord) {
	m := w.m
	m.logEvents.WithLabelValues(r.Kind).Inc()
	jobType := func() string { return m.bounds.value("job_type", r.JobType) }
	switch r.Kind {
	case "received":
		m.logReceived.WithLabelValues(jobType()).Inc()
	case "lock_acquired":
		m.logLocks.WithLabelValues("acquired").Inc()
	case "lock_failed":
		m.logLocks.WithLabelValues("busy").Inc()
	case "lock_lost":
		m.logLocks.WithLabelValues("lost").Inc()
	case "lock_released":
		m.logLocks.WithLabelValues("released").Inc()
	case "side_effect":
		m.logEffects.WithLabelValues(jobType()).Inc()
	case "retry":
		m.logRetries.WithLabelValues(jobType()).Inc()
	case "crash":
		m.logCrashes.Inc()
	}
	if r.Duration > 0 {
		m.jobDuration.WithLabelValues(jobType()).Observe(r.Duration.Seconds())
	}
}

// duplicate counts one duplicate by its cause code (a bounded set).
func (w *watcher) duplicate(cause string) {
	w.m.duplicates.WithLabelValues(w.m.bounds.value("cause", cause)).Inc()
}
