package chaos

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/sim/chaos/amqpproxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/pgproxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/proxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/respproxy"
	amqp "github.com/rabbitmq/amqp091-go"
)

// run is one run of a scenario: it starts the workers behind their
// proxies, records what the proxies see in its trace, drives the fault,
// and hands the finished trace to the judge.
// run is one run of a scenario: it starts the workers behind their
// proxies, has the recorder keep what the proxies see, drives the fault,
// and hands the finished trace to the judge.
type run struct {
	// recorder keeps the trace and owns mu, which guards the run's live
	// state below as well.
	recorder
	ctx  context.Context
	o    *Options
	d    Deps
	spec Spec

	files []io.Closer // the worker copies' own output files

	slots []*slot
	gates map[*proxy.Gate]int // gate -> instance number
	// cut is when a slot's Redis comes back after the after-lock cut.
	cut      map[*slot]time.Time
	pending  int // publishes scheduled but not yet confirmed
	stopping bool
	timers   []*time.Timer
	failure  error
	pub      *publisher
	logMu    sync.Mutex
	// effectsLog collects the lines side effects are counted in
	// (Options.EffectsLog); nil when the effects query counts them.
	effectsLog *effectsLog
	landing    sync.WaitGroup // held-back cache writes being applied
	// fo is failover's real failover of a Sentinel setup (nil: played
	// at the proxy, or another scenario).
	fo *sentinelFailover
	// rep is replica-lag's paused replay.
	rep replicaState
}

type tagKey struct {
	conn *amqpproxy.Conn
	ch   uint16
	tag  uint64
}

type chanKey struct {
	conn *amqpproxy.Conn
	ch   uint16
}

type slot struct {
	n         int
	inst      int
	gate      *proxy.Gate
	proc      *process
	env       []string
	command   string
	lns       []*proxy.Listener
	redis     *proxy.Listener // the slot's Redis proxy; nil without Redis
	consumers int
	stopped   bool
	exits     int
	tail      []string // the last lines the worker printed
}

func (s *slot) lane(inst int) string {
	if inst <= 1 {
		return "W" + strconv.Itoa(s.n)
	}
	return fmt.Sprintf("W%d#%d", s.n, inst)
}

type process struct {
	cmd    *exec.Cmd
	pid    int
	inst   int
	done   chan struct{}
	killed bool
	output []string // its last output lines (outputLines), under r.mu
}

func newID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "dc" + hex.EncodeToString(b[:])
}

// runOnce is one run: workers, proxies, workload, fault, verdict, cleanup.
func runOnce(ctx context.Context, d Deps, o *Options, spec Spec, seed uint64, attempt int) (rr *RunResult, err error) {
	r := &run{ctx: ctx, o: o, d: d, spec: spec, gates: map[*proxy.Gate]int{}, cut: map[*slot]time.Time{}}
	r.begin(newID(), o.Keys)
	r.plan = planFor(spec, seed, r.keys, o.At, attempt)
	if o.OnStart != nil {
		o.OnStart(r.id)
	}
	// Arming is not the run's time (the wait for a Sentinel setup to be
	// ready).
	if err := r.fault().arm(r); err != nil {
		return nil, err
	}
	r.start = time.Now()
	r.activity = r.start
	defer func() {
		if cerr := r.cleanup(); cerr != nil {
			rr, err = nil, errors.Join(err, cerr)
		}
	}()
	r.noteFailover()

	if o.EffectsLog != "" {
		if r.effectsLog, err = startEffectsLog(o.EffectsLog); err != nil {
			return nil, err
		}
	}
	vars := map[string]string{"prefix": r.id}
	if err := r.listen(vars); err != nil {
		return nil, err
	}
	pub, err := r.newPublisher()
	if err != nil {
		return nil, err
	}
	r.pub = pub
	if err := r.startWorkers(vars); err != nil {
		return nil, err
	}
	if err := r.waitReady(); err != nil {
		return nil, err
	}
	if r.pub.exch, r.pub.rkey, err = splitPublish(o.Publish); err != nil {
		return nil, err
	}
	if r.pub.rkey, err = expand(r.pub.rkey, vars); err != nil {
		return nil, problem.Inputf("Publish", "%w", err)
	}
	if r.pub.exch, err = expand(r.pub.exch, vars); err != nil {
		return nil, problem.Inputf("Publish", "%w", err)
	}
	r.mu.Lock()
	r.add("dupctl", "plan", "", "fault plan (seed "+strconv.FormatUint(seed, 10)+attemptText(attempt, o.Attempts)+"): "+r.plan.String())
	r.mu.Unlock()
	if err := r.publishWorkload(); err != nil {
		return nil, err
	}
	unsettled, err := r.settle()
	if err != nil {
		return nil, err
	}
	if err := r.fault().heal(r); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.stopping = true
	r.finish(time.Now())
	r.mu.Unlock()
	effects, err := r.countEffects()
	if err != nil {
		return nil, err
	}
	return r.verdict(effects, unsettled), nil
}

// onJudged, when set (by the tests, to record traces as fixtures), is
// given every finished trace with what the judge made of it.
var onJudged func(t *trace, effects map[string]effectRow, unsettled string, rr *RunResult)

// verdict judges the run once it settled; r.stopping is set, so nothing
// changes under it any more.
func (r *run) verdict(effects map[string]effectRow, unsettled string) *RunResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finish(time.Now())
	rr := r.trace.judge(effects, unsettled)
	if onJudged != nil {
		onJudged(&r.trace, effects, unsettled, rr)
	}
	return rr
}

// finish completes the trace as the run stops: its end, where the
// effects are counted, and what the fault drivers knew that the wire did
// not show. The caller holds r.mu.
func (r *run) finish(now time.Time) {
	r.end = now
	switch {
	case r.effectsLog == nil:
		r.effectsFrom = EffectsSQL
	case r.effectsLog.path == WorkerOutput:
		r.effectsFrom = EffectsOutput
	default:
		r.effectsFrom = EffectsFile
	}
	r.faults = faultFacts{cacheLag: r.o.CacheLag, cacheKeys: r.o.CacheKeys, replicaPauseSeq: r.rep.pauseSeq}
	if f := r.fo; f != nil {
		r.faults.sentinel = &sentinelFacts{master: f.master, newMaster: f.newMaster, lostSeq: f.lostSeq}
	}
}

// publishWorkload publishes one message per business key (two at once
// for race's victim).
func (r *run) publishWorkload() error {
	for _, k := range r.keys {
		if err := r.publish(k, 1); err != nil {
			return err
		}
		if r.plan.Fault == Duplicate && k == r.plan.Victim {
			r.mu.Lock()
			r.fire("dupctl", k, "dupctl publishes a second message for "+k+" at once")
			r.mu.Unlock()
			if err := r.publish(k, 2); err != nil {
				return err
			}
		}
	}
	return nil
}

// listen starts each slot's proxies and fills the templates.
func (r *run) listen(vars map[string]string) error {
	type svc struct {
		name, url string
		pumps     func(s *slot) func(*proxy.Pair) proxy.Pumps
	}
	svcs := []svc{
		{"amqp", r.o.AMQPURL, func(s *slot) func(*proxy.Pair) proxy.Pumps { return amqpproxy.Pumps(&amqpObs{r: r, s: s}) }},
		{"postgres", r.o.DatabaseURL, func(s *slot) func(*proxy.Pair) proxy.Pumps { return pgproxy.Pumps(&pgObs{r: r, s: s}) }},
	}
	if r.o.RedisURL != "" {
		svcs = append(svcs, svc{"redis", r.o.RedisURL, func(s *slot) func(*proxy.Pair) proxy.Pumps {
			return respproxy.Pumps(&redisObs{r: r, s: s})
		}})
	}
	if r.o.ReplicaURL != "" {
		svcs = append(svcs, svc{"replica", r.o.ReplicaURL, func(s *slot) func(*proxy.Pair) proxy.Pumps {
			return pgproxy.Pumps(&pgObs{r: r, s: s, replica: true})
		}})
	}
	for n := 1; n <= r.o.Workers; n++ {
		s := &slot{n: n, command: r.o.Worker}
		r.slots = append(r.slots, s)
		wvars := map[string]string{"worker": strconv.Itoa(n)}
		for k, v := range vars {
			wvars[k] = v
		}
		for _, sv := range svcs {
			dial, err := dialer(sv.url, r.o.AllowRemote)
			if err != nil {
				return err
			}
			ln, err := proxy.Listen(proxy.Config{Dial: dial, Gate: r.gateOf(s), Pumps: sv.pumps(s), Latency: r.o.Slow[sv.name]})
			if err != nil {
				return problem.System(err, "")
			}
			s.lns = append(s.lns, ln)
			if sv.name == "redis" {
				s.redis = ln
			}
			if err := proxyVars(wvars, sv.name, sv.url, ln.Addr()); err != nil {
				return err
			}
			if n == 1 {
				// {amqp} etc. outside a worker's env (in --publish) mean
				// the first worker's proxy; only {prefix} matters there.
				for k, v := range wvars {
					if _, ok := vars[k]; !ok && k != "worker" {
						vars[k] = v
					}
				}
			}
		}
		cmd, err := expand(r.o.Worker, wvars)
		if err != nil {
			return problem.Inputf("Worker", "%w", err)
		}
		s.command = cmd
		for _, e := range r.o.Env {
			v, err := expand(e, wvars)
			if err != nil {
				return problem.Inputf("Env", "%s: %w", e, err)
			}
			s.env = append(s.env, v)
		}
	}
	return nil
}

func (r *run) gateOf(s *slot) func() *proxy.Gate {
	return func() *proxy.Gate {
		r.mu.Lock()
		defer r.mu.Unlock()
		return s.gate
	}
}

// dialer dials the real server of a URL; TLS when its scheme says so (the
// worker talks plain to the proxy on loopback). For a Sentinel URL each
// connection goes to the master the Sentinels name at that moment, so a
// failover during a run reaches the worker as its next connection, as it
// would through a Sentinel-aware client.
func dialer(raw string, allowRemote bool) (func(ctx context.Context) (net.Conn, error), error) {
	if connect.IsSentinel(raw) {
		s, err := connect.ParseSentinel(raw)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (net.Conn, error) {
			c, addr, err := s.DialMaster(ctx)
			if err == nil && !allowRemote && !connect.IsLoopback("redis://"+addr) {
				c.Close()
				return nil, fmt.Errorf("the Sentinels name the master %s, which is not a loopback address", addr)
			}
			return c, err
		}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, problem.Inputf("", "bad URL: %v", err)
	}
	host := u.Host
	if u.Port() == "" {
		port := map[string]string{"amqp": "5672", "amqps": "5671", "redis": "6379", "rediss": "6379", "postgres": "5432",
			"postgresql": "5432"}[u.Scheme]
		host = net.JoinHostPort(u.Hostname(), port)
	}
	if u.Scheme == "amqps" || u.Scheme == "rediss" {
		d := &tls.Dialer{Config: &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}}
		return func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", host) }, nil
	}
	return proxy.DialTCP(host), nil
}

// due reports whether the plan's fault fires here: its point, its victim,
// the current process of the slot, and not yet fired.
func (r *run) due(p Point, keys []string, s *slot, inst int) bool {
	return r.fired == nil && r.plan.Point == p && slices.Contains(keys, r.plan.Victim) && inst == s.inst && !s.stopped
}

func attemptText(attempt, of int) string {
	if attempt <= 1 {
		return ""
	}
	return fmt.Sprintf(", attempt %d of %d", attempt, of)
}

// killAt records the fault and kills the slot; the caller holds r.mu.
func (r *run) killAt(s *slot, lane, key, why string) {
	r.fire(lane, key, why)
	r.killLocked(s)
}

// killLocked SIGKILLs a slot's process group: its gate dies first, so
// nothing it sent after the fault point reaches a server.
func (r *run) killLocked(s *slot) {
	p := s.proc
	s.gate.Kill()
	s.consumers = 0
	if p != nil {
		p.killed = true
		_ = signalGroup(p.pid, sigKill)
	}
}

// stopLocked pauses a slot for d (SIGSTOP, then SIGCONT).
func (r *run) stopLocked(s *slot, d time.Duration) {
	p := s.proc
	if p == nil {
		return
	}
	s.stopped = true
	s.gate.Freeze()
	_ = signalGroup(p.pid, sigStop)
	lane := s.lane(p.inst)
	r.timers = append(r.timers, time.AfterFunc(d, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.stopping && s.proc != p {
			return
		}
		_ = signalGroup(p.pid, sigCont)
		s.gate.Thaw()
		s.stopped = false
		r.add(lane, "resume", r.plan.Victim, fmt.Sprintf("dupctl resumes the worker (SIGCONT) after %s", d.Round(time.Millisecond)))
	}))
}

// publishLater publishes another copy of a key from a goroutine; the
// caller holds r.mu.
func (r *run) publishLater(key string, copyN int) {
	r.pending++
	go func() {
		err := r.publish(key, copyN)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.pending--
		if err != nil && r.failure == nil && r.ctx.Err() == nil {
			r.failure = err
		}
	}()
}

// startWorkers starts every slot's first process.
func (r *run) startWorkers(vars map[string]string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.slots {
		if err := r.startLocked(s); err != nil {
			return err
		}
	}
	return nil
}

// startLocked starts a new process in a slot; the caller holds r.mu.
func (r *run) startLocked(s *slot) error {
	s.inst++
	s.gate = proxy.NewGate()
	r.gates[s.gate] = s.inst
	s.consumers = 0
	s.stopped = false
	cmd := exec.Command("/bin/sh", "-c", s.command)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.SysProcAttr = procAttr()
	lane := s.lane(s.inst)
	p := &process{cmd: cmd, inst: s.inst, done: make(chan struct{})}
	w := &lineWriter{r: r, s: s, p: p, lane: lane}
	if open := r.o.WorkerFile; open != nil {
		f, err := open(r.plan.Seed, r.plan.Attempt, lane)
		if err != nil {
			return problem.Inputf("WorkerLog", "%w", err)
		}
		w.file = f
		r.files = append(r.files, f)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return problem.Inputf("Worker", "cannot start %q: %w", s.command, err)
	}
	p.pid = cmd.Process.Pid
	s.proc = p
	r.add(lane, "start", "", fmt.Sprintf("worker process %d starts", p.pid))
	go func() {
		err := cmd.Wait()
		r.exited(s, p, err)
	}()
	return nil
}

// exited learns that a worker process ended, and starts a new one unless
// the run is over, as a supervisor (systemd, Kubernetes) would.
func (r *run) exited(s *slot, p *process, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(p.done)
	if r.gates != nil && s.proc == p {
		s.gate.Kill()
	}
	lane := s.lane(p.inst)
	note := "killed"
	if !p.killed {
		how, crashed := processEnd(err)
		note = exitNote(how, crashed, r.stopping, p.output)
		if !r.stopping {
			s.exits++
		}
	}
	r.add(lane, "exit", "", note)
	if r.stopping || s.proc != p {
		return
	}
	if s.exits > 5 {
		if r.failure == nil {
			r.failure = problem.System(fmt.Errorf("worker %s keeps exiting on its own: %s", lane, note),
				"run the worker command by hand with the same environment to see why")
		}
		return
	}
	r.timers = append(r.timers, time.AfterFunc(100*time.Millisecond, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.stopping || s.proc != p {
			return
		}
		if err := r.startLocked(s); err != nil && r.failure == nil {
			r.failure = err
		}
	}))
}

// lineWriter prefixes a worker's output lines with its lane and keeps the
// last few for error messages (the slot's, across its processes) and for
// the process's exit (its own).
type lineWriter struct {
	r    *run
	s    *slot
	p    *process
	lane string
	buf  []byte
	file io.Writer // the copy's own output file, unprefixed (nil: none)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		w.r.mu.Lock()
		w.s.tail = append(w.s.tail, line)
		if len(w.s.tail) > 5 {
			w.s.tail = w.s.tail[1:]
		}
		w.p.output = append(w.p.output, line)
		if len(w.p.output) > outputLines {
			w.p.output = w.p.output[1:]
		}
		w.r.mu.Unlock()
		w.r.logMu.Lock()
		if out := w.r.o.WorkerLog; out != nil {
			fmt.Fprintf(out, "%s | %s\n", w.lane, line)
		}
		if w.file != nil {
			_, _ = io.WriteString(w.file, line+"\n")
		}
		if el := w.r.effectsLog; el != nil && el.path == WorkerOutput {
			el.out.WriteString(line)
			el.out.WriteByte('\n')
			el.arrived = append(el.arrived, lineArrival{ms: time.Since(w.r.start).Milliseconds(), lane: w.lane})
		}
		w.r.logMu.Unlock()
	}
	if len(w.buf) > 64<<10 { // a line that never ends
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// waitReady waits until every worker consumes.
func (r *run) waitReady() error {
	deadline := time.Now().Add(r.o.ReadyTimeout)
	for {
		r.mu.Lock()
		ready, failure := true, r.failure
		var waiting []string
		for _, s := range r.slots {
			if s.consumers == 0 {
				ready = false
				waiting = append(waiting, s.lane(s.inst)+" ("+strings.Join(s.tail, " | ")+")")
			}
		}
		r.mu.Unlock()
		switch {
		case failure != nil:
			return failure
		case ready:
			return nil
		case time.Now().After(deadline):
			return problem.System(fmt.Errorf("workers did not start consuming within %s: %s", r.o.ReadyTimeout, strings.Join(waiting, "; ")),
				"a worker is ready when it sends basic.consume through {amqp}: check that its environment points it at dupctl's proxies ({Env})")
		}
		select {
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settle waits until nothing is left to happen: every key delivered, no
// delivery open, no worker paused or restarting, no cache write held, no
// publish pending, the consumed queues empty, and quiet for Settle.
func (r *run) settle() (unsettled string, err error) {
	deadline := r.start.Add(r.o.RunTimeout)
	ch, _ := r.d.AMQP.Channel()
	defer func() {
		if ch != nil {
			ch.Close()
		}
	}()
	for {
		select {
		case <-r.ctx.Done():
			return "", r.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		r.mu.Lock()
		why := r.busyLocked()
		quiet := time.Since(r.activity)
		failure := r.failure
		queues := make([]string, 0, len(r.consumed))
		for q := range r.consumed {
			queues = append(queues, q)
		}
		r.mu.Unlock()
		if failure != nil {
			return "", failure
		}
		if why == "" {
			for _, q := range queues {
				if ch == nil {
					ch, _ = r.d.AMQP.Channel()
				}
				if ch == nil {
					break
				}
				qs, err := ch.QueueDeclarePassive(q, false, false, false, false, nil)
				if err != nil {
					ch = nil // a failed passive declare closes the channel
					continue
				}
				if qs.Messages > 0 {
					why = fmt.Sprintf("%d messages ready in %s", qs.Messages, q)
				}
			}
		}
		if why == "" && quiet >= r.o.Settle {
			return "", nil
		}
		if time.Now().After(deadline) {
			if why == "" {
				why = "still busy"
			}
			return why, nil
		}
	}
}

func (r *run) busyLocked() string {
	if r.pending > 0 {
		return "a publish is pending"
	}
	if len(r.held) > 0 {
		return "a cache write is held back"
	}
	if r.rep.paused {
		return "the replica's replay is paused"
	}
	if r.fo != nil && (r.fo.running || r.fo.cutting) {
		return "Redis is failing over"
	}
	if why := r.unreacted(time.Now()); why != "" {
		return why
	}
	if len(r.open) > 0 {
		for _, d := range r.open {
			return fmt.Sprintf("%s holds %s unacked", d.slot.lane(d.inst), d.key)
		}
	}
	if k := backInBroker(r.delivs, time.Now()); k != "" {
		return k + " went back to the broker and is not delivered again yet"
	}
	for _, s := range r.slots {
		if s.stopped {
			return s.lane(s.inst) + " is paused"
		}
		if until, ok := r.cut[s]; ok && time.Now().Before(until) {
			return s.lane(s.inst) + "'s Redis is cut off"
		}
		if s.consumers == 0 {
			return s.lane(s.inst) + " is starting"
		}
	}
	if k := undelivered(r.events, r.delivs); k != "" {
		return "a message dupctl published for " + k + " is not delivered yet"
	}
	return ""
}

// cleanup removes everything the run created, whatever happened: worker
// processes (SIGCONT, SIGTERM, then SIGKILL), proxy listeners, queues and
// exchanges named with the run's id, and Redis keys containing it. Its
// error is a replica failover left without its setting.
func (r *run) cleanup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r.mu.Lock()
	r.stopping = true
	for _, t := range r.timers {
		t.Stop()
	}
	var procs []*process
	for _, s := range r.slots {
		if s.proc != nil {
			procs = append(procs, s.proc)
		}
		if s.gate != nil {
			s.gate.Thaw() // a paused worker's connections may close cleanly
		}
	}
	r.mu.Unlock()
	// A standby left paused would stay behind its primary for good, a
	// replica left cut off would never sync again: whatever the run's
	// end, its fault heals here too (a failed resume is the run's failure
	// already, a failed restore is cleanup's).
	_ = r.resumeReplica("as the run ends")
	foErr := r.endFailover()
	r.closeFailover()
	for _, p := range procs {
		select {
		case <-p.done:
			continue
		default:
		}
		_ = signalGroup(p.pid, sigCont)
		_ = signalGroup(p.pid, sigTerm)
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
			_ = signalGroup(p.pid, sigKill)
			select {
			case <-p.done:
			case <-time.After(2 * time.Second):
			}
		}
	}
	for _, s := range r.slots {
		for _, ln := range s.lns {
			ln.Close()
		}
	}
	for _, f := range r.files {
		f.Close() // the processes are gone: no more output
	}
	if r.pub != nil {
		r.pub.close()
	}
	r.mu.Lock()
	queues, exchanges := keysOf(r.queues), keysOf(r.exchanges)
	r.mu.Unlock()
	if len(queues)+len(exchanges) > 0 && r.d.AMQP != nil && !r.d.AMQP.IsClosed() {
		for _, q := range queues {
			if ch, err := r.d.AMQP.Channel(); err == nil {
				_, _ = ch.QueueDelete(q, false, false, false)
				ch.Close()
			}
		}
		for _, e := range exchanges {
			if ch, err := r.d.AMQP.Channel(); err == nil {
				_ = ch.ExchangeDelete(e, false, false)
				ch.Close()
			}
		}
	}
	if r.d.Redis != nil {
		r.landing.Wait()
		r.deleteKeys(ctx)
	}
	return foErr
}

// deleteKeys deletes the Redis keys with the run's id.
func (r *run) deleteKeys(ctx context.Context) {
	iter := r.d.Redis.Scan(ctx, 0, "*"+r.id+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	for _, k := range keys {
		r.d.Redis.Del(ctx, k)
	}
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// isCacheKey reports whether a Redis key is the run's status cache.
func (r *run) isCacheKey(key string) bool {
	if r.o.CacheKeys == "" || !strings.Contains(key, r.id) {
		return false
	}
	ok, _ := path.Match(r.o.CacheKeys, key)
	return ok
}

// publisher publishes the workload with publisher confirms and mandatory
// routing, so a message that reaches no queue is an error, not a loss.
type publisher struct {
	mu      sync.Mutex
	ch      *amqp.Channel
	returns chan amqp.Return
	// exch and rkey are where the run's messages go (Options.Publish,
	// expanded).
	exch, rkey string
}

func (r *run) newPublisher() (*publisher, error) {
	ch, err := r.d.AMQP.Channel()
	if err != nil {
		return nil, problem.System(fmt.Errorf("open AMQP channel: %w", err), "")
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, problem.System(fmt.Errorf("confirm mode: %w", err), "")
	}
	return &publisher{ch: ch, returns: ch.NotifyReturn(make(chan amqp.Return, 16))}, nil
}

func (p *publisher) close() { p.ch.Close() }

// publish sends one copy of a key's message.
func (r *run) publish(key string, copyN int) error {
	p := r.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := amqp.Publishing{
		MessageId:    fmt.Sprintf("%s#%d", key, copyN),
		DeliveryMode: amqp.Persistent,
		Body:         body(r.o.Body, key, r.id, copyN),
		Timestamp:    time.Now(),
		Headers:      amqp.Table{"x-dupctl-copy": int32(copyN)},
	}
	if strings.HasPrefix(strings.TrimSpace(string(msg.Body)), "{") {
		msg.ContentType = "application/json"
	}
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	sent := time.Now()
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, p.exch, p.rkey, true, false, msg)
	if err != nil {
		return problem.System(fmt.Errorf("publish %s: %w", key, err), "")
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		return problem.System(fmt.Errorf("publish %s: %w", key, err), "")
	}
	select {
	case ret := <-p.returns:
		return problem.Inputf("Publish", "the broker routed %s to no queue (%d %s): declare and bind the worker's queue, "+
			"or fix EXCHANGE:ROUTING_KEY", key, ret.ReplyCode, ret.ReplyText)
	default:
	}
	if !ok {
		return problem.System(errors.New("publish "+key+": the broker nacked it"), "")
	}
	r.mu.Lock()
	what := "publishes"
	if copyN > 1 {
		what = "publishes another copy of"
	}
	r.addAt(sent, "dupctl", "publish", key, fmt.Sprintf("dupctl %s %s to %s:%s", what, key, p.exch, p.rkey))
	r.mu.Unlock()
	return nil
}
