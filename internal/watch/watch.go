// Package watch runs dupctl's read-only checks on an interval each and
// counts what followed worker logs show, as Prometheus metrics served on
// /metrics with /healthz and /readyz: `dupctl watch`.
//
// It knows no capability: each check is a function internal/cli wires to
// the capability's own entry point (inspect lock, dlq stats, inspect store,
// audit cache), returning a Sample; the log follower is wired to audit
// logs' Follow the same way.
package watch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Check is one read-only check run on its own interval.
type Check struct {
	// Name is the check's label value: a fixed word (lock, dlq, store,
	// cache), never anything read from a system.
	Name     string
	Interval time.Duration
	// Timeout bounds one run (0: the interval).
	Timeout time.Duration
	Run     func(ctx context.Context) (*Sample, error)
}

// LogRecord is one followed log line, as the metrics count it.
type LogRecord struct {
	Kind     string // the step of the worker flow, as logs.Kind names it (side_effect, lock_lost, ...)
	JobType  string
	Duration time.Duration // 0: the line reports none
}

// Follower follows the logs until ctx is done, calling seen with every
// line and duplicate with the cause of every duplicate found.
type Follower func(ctx context.Context, seen func(LogRecord), duplicate func(cause string)) error

// Deps are what a watch runs: its checks and, optionally, a log follower.
type Deps struct {
	Checks []Check
	Follow Follower
}

// Options are one watch.
type Options struct {
	// Listen is the address /metrics, /healthz and /readyz are served on.
	Listen string
	// ShutdownTimeout bounds the graceful end once ctx is done: running
	// checks are cancelled and the server drains its requests within it.
	ShutdownTimeout time.Duration
	// MaxLabelValues bounds each label's distinct values (0: 50).
	MaxLabelValues int
	// Listening, when set, is called with the address served once the
	// listener is open (tests and the startup line).
	Listening func(addr string)
	// Failed, when set, is called with a check's error when a run fails
	// with another error than the check's last run (not on every run: a
	// check failing every 30s for a day says it once).
	Failed func(check string, err error)
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	// followPause is the pause before a failed follow starts again (0:
	// 5s; tests shorten it).
	followPause time.Duration
}

// Result is what a watch did until it was stopped.
type Result struct {
	Addr string         `json:"addr"`
	Runs map[string]int `json:"runs"` // per check
	// Failed counts failed or timed-out runs per check.
	Failed map[string]int `json:"failed"`
}

// Report is the watch's summary once stopped: no findings of its own (the
// metrics carry the checks').
func (r *Result) Report() *findings.Report {
	return &findings.Report{Command: "watch", Data: r}
}

// Validate checks the options and the checks before anything listens.
func (o *Options) Validate(d Deps) error {
	if o.Listen == "" {
		return problem.Inputf("Listen", "must not be empty")
	}
	if o.ShutdownTimeout < 0 {
		return problem.Inputf("ShutdownTimeout", "must not be negative, got %s", o.ShutdownTimeout)
	}
	for _, c := range d.Checks {
		if c.Interval < time.Second {
			return problem.Inputf("Interval", "must be at least 1s, got %s for check %s", c.Interval, c.Name)
		}
		if c.Timeout < 0 {
			return problem.Inputf("Timeout", "must not be negative, got %s for check %s", c.Timeout, c.Name)
		}
	}
	if len(d.Checks) == 0 && d.Follow == nil {
		return &problem.Input{Why: "nothing to watch: no check has its connection and no log is followed",
			Hint: "give {RedisURL}, {DatabaseURL}, {AMQPURL} or {Follow}"}
	}
	return nil
}

// watcher is one running watch.
type watcher struct {
	o       Options
	m       *metrics
	pending atomic.Int64 // checks that have not run once yet
	mu      sync.Mutex
	res     Result
}

// Run serves the metrics and runs the checks and the follower until ctx is
// done, then shuts down within ShutdownTimeout. A failed or slow run is
// counted, never fatal; only a listener that cannot open ends it early.
func Run(ctx context.Context, d Deps, o Options) (*Result, error) {
	if err := o.Validate(d); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	w := &watcher{o: o, m: newMetrics(o.MaxLabelValues)}
	w.res = Result{Runs: map[string]int{}, Failed: map[string]int{}}
	w.pending.Store(int64(len(d.Checks)))
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Listen)
	if err != nil {
		return nil, problem.Inputf("Listen", "cannot listen on %s: %v", o.Listen, err)
	}
	w.res.Addr = ln.Addr().String()
	srv := &http.Server{Handler: w.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if o.Listening != nil {
		o.Listening(w.res.Addr)
	}
	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	for _, c := range d.Checks {
		wg.Go(func() { w.loop(runCtx, c) })
	}
	if d.Follow != nil {
		wg.Go(func() { w.follow(runCtx, d.Follow) })
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	// Graceful end: stop new runs, give the running ones and the server's
	// requests the shutdown timeout, then cancel whatever is left.
	grace, graceCancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer graceCancel()
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	_ = srv.Shutdown(grace)
	select {
	case <-done:
	case <-grace.Done():
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return w.result(), problem.System(fmt.Errorf("serving metrics on %s: %w", w.res.Addr, serveErr), "")
	}
	return w.result(), nil
}

func (w *watcher) result() *Result {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.res
	return &r
}

// handler serves /metrics (the private registry), /healthz (the process
// answers) and /readyz (every check has run once, whatever its result).
func (w *watcher) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttpHandler(w.m.reg))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(rw, "ok")
	})
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		if n := w.pending.Load(); n > 0 {
			rw.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(rw, "not ready: %d checks have not run yet\n", n)
			return
		}
		fmt.Fprintln(rw, "ready")
	})
	return mux
}
