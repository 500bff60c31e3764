// Command fleet simulates one payment worker fleet and writes its event script
// (JSON lines, one per thing a worker would log, at the event's virtual time) and
// the truth: per order how many charges really ran and, for a duplicate, why.
//
// The model is deliberately physical: every consumer thread does one job at a
// time, a crashed process does nothing until it restarts (with a new pid), a lock
// is free only after its holder released it or its TTL passed, and an
// idempotency record is visible only after its commit. Each duplicate is planted
// with one cause and the times that make that cause true.
//
//	go run ./cmd/fleet -out ../script
package main

import (
	"dupctl.test/heldoutlogs/script"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Event is one line of the script (see package script).
type Event = script.Event

// Instance is one worker process slot: a pod (kubernetes), a host, a compose
// container name; each restart is a new pid.
type Instance struct {
	ID      string   `json:"id"`
	Pod     string   `json:"pod"`
	Host    string   `json:"host"`
	Compose string   `json:"compose"`
	Unit    string   `json:"unit"` // systemd/ops-script name on a shared host
	Pids    []int    `json:"pids"`
	Threads int      `json:"threads"`
	Starts  []string `json:"starts"`

	busy [][]span // per thread
	down []span
}

type span struct{ from, to time.Time }

func (s span) overlaps(o span) bool { return s.from.Before(o.to) && o.from.Before(s.to) }

// Order is the truth for one business key.
type Order struct {
	ID          string   `json:"id"`
	Amount      int      `json:"amount"`
	Effects     int      `json:"effects"`
	Cause       string   `json:"cause,omitempty"`
	Scenario    string   `json:"scenario"`
	Instances   []string `json:"instances"`
	EffectTimes []string `json:"effect_times"`
	Note        string   `json:"note"`
}

type fleet struct {
	rng    *rand.Rand
	t0     time.Time
	inst   []*Instance
	events []Event
	orders []*Order
	used   map[string]bool
}

const threads = 3

func main() {
	out := flag.String("out", "script", "directory for events.jsonl and fleet-truth.json")
	flag.Parse()
	f := newFleet()
	f.run()
	err := f.verify()
	if err == nil {
		err = f.write(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func newFleet() *fleet {
	f := &fleet{
		rng:  rand.New(rand.NewPCG(41, 2026)),
		t0:   time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC),
		used: map[string]bool{},
	}
	pods := []string{"x8k2p", "q4w7n", "m2c9d", "t6v3b", "h5j8r"}
	for i := range 5 {
		in := &Instance{
			ID:      fmt.Sprintf("w%d", i+1),
			Pod:     "payments-worker-6f9c7b5d4-" + pods[i],
			Host:    fmt.Sprintf("ip-10-20-%d-%d", 3+i%2, 17+i*11),
			Compose: fmt.Sprintf("payments-worker-%d", i+1),
			Unit:    fmt.Sprintf("payworker%d", i+1),
			Threads: threads,
			busy:    make([][]span, threads),
		}
		f.inst = append(f.inst, in)
	}
	return f
}

// --- identifiers -----------------------------------------------------------

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func (f *fleet) str(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[f.rng.IntN(len(alphabet))]
	}
	return string(b)
}

func (f *fleet) uuid() string {
	h := "0123456789abcdef"
	return f.str(8, h) + "-" + f.str(4, h) + "-4" + f.str(3, h) + "-a" + f.str(3, h) + "-" + f.str(12, h)
}
func (f *fleet) token() string    { return f.str(20, alnum) }
func (f *fleet) chargeID() string { return "ch_" + f.str(24, alnum) }

func (f *fleet) orderID() string {
	for {
		id := fmt.Sprintf("ord-%05d", 10000+f.rng.IntN(89999))
		if !f.used[id] {
			f.used[id] = true
			return id
		}
	}
}

func (f *fleet) ms(lo, hi int) time.Duration {
	return time.Duration(lo+f.rng.IntN(hi-lo+1)) * time.Millisecond
}

// --- scheduling ------------------------------------------------------------

func (in *Instance) upDuring(s span) bool {
	for _, d := range in.down {
		if d.overlaps(s) {
			return false
		}
	}
	return true
}

func (in *Instance) freeThread(s span) int {
	for th := range in.busy {
		free := true
		for _, b := range in.busy[th] {
			if b.overlaps(s) {
				free = false
				break
			}
		}
		if free {
			return th
		}
	}
	return -1
}

func (in *Instance) idle(s span) bool {
	for th := range in.busy {
		for _, b := range in.busy[th] {
			if b.overlaps(s) {
				return false
			}
		}
	}
	return in.upDuring(s)
}

// pid is the pid of the process running on the instance at t.
func (in *Instance) pid(t time.Time) int {
	idx := 0
	for i, s := range in.Starts {
		st, _ := time.Parse(time.RFC3339Nano, s)
		if !t.Before(st) {
			idx = i
		}
	}
	return in.Pids[idx]
}

// take finds an instance (not one of exclude) with a thread free for the whole
// span, starting the search at a random instance, and books it.
func (f *fleet) take(s span, exclude ...*Instance) (*Instance, int) {
	off := f.rng.IntN(len(f.inst))
	for pass := range 2 {
		for i := range f.inst {
			in := f.inst[(off+i)%len(f.inst)]
			if pass == 0 && contains(exclude, in) {
				continue
			}
			if !in.upDuring(s) {
				continue
			}
			if th := in.freeThread(s); th >= 0 {
				in.busy[th] = append(in.busy[th], s)
				return in, th
			}
		}
	}
	panic(fmt.Sprintf("no worker free for %v", s))
}

// takeThread books a given thread of a given instance.
func (in *Instance) book(th int, s span) { in.busy[th] = append(in.busy[th], s) }

// takeCrash finds an instance idle for the whole span (its job will crash the
// process at s.to), books thread 0 and marks it down until the restart.
func (f *fleet) takeCrash(s span, restart time.Time) (*Instance, int) {
	off := f.rng.IntN(len(f.inst))
	for i := range f.inst {
		in := f.inst[(off+i)%len(f.inst)]
		if in.idle(span{s.from, restart}) {
			in.busy[0] = append(in.busy[0], s)
			in.down = append(in.down, span{s.to, restart})
			return in, 0
		}
	}
	panic(fmt.Sprintf("no idle worker for a crash at %v", s))
}

func contains(xs []*Instance, x *Instance) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// --- events ----------------------------------------------------------------

// cur is a thread's cursor: events it logs advance its time.
type cur struct {
	f     *fleet
	in    *Instance
	th    int
	t     time.Time
	order string
}

func (f *fleet) at(in *Instance, th int, t time.Time, order string) *cur {
	return &cur{f: f, in: in, th: th, t: t, order: order}
}

func (c *cur) ev(dt time.Duration, e Event) *cur {
	c.t = c.t.Add(dt)
	e.T = c.t
	e.Instance = c.in.ID
	e.Thread = c.th
	e.Order = c.order
	if e.Level == "" {
		e.Level = "info"
	}
	if e.Component == "" {
		e.Component = componentOf[e.Step]
	}
	c.f.events = append(c.f.events, e)
	return c
}

var componentOf = map[string]string{
	"received": "consumer", "ack": "consumer", "nack": "consumer", "retry": "consumer", "job_failed": "consumer",
	"lock_acquired": "lock", "lock_busy": "lock", "lock_released": "lock", "lock_release_failed": "lock",
	"idem_check": "idempotency", "idem_seen": "idempotency",
	"charge_start": "payments", "charge": "payments", "charge_failed": "payments",
	"commit": "store", "commit_failed": "store",
	"receipt_failed": "notify",
	"start":          "app", "heartbeat": "app", "killed": "app",
}

// job is one delivery of one order being worked on by one thread.
type job struct {
	o        *Order
	c        *cur
	msgID    string
	delivery int
	lockKey  string
	token    string
	ttl      int
	idemKey  string
}

func (j *job) received(dt time.Duration) {
	j.c.ev(dt, Event{Step: "received", MsgID: j.msgID, Delivery: j.delivery, Redelivered: j.delivery > 1})
}

func (j *job) lock(dt time.Duration) {
	j.token = j.c.f.token()
	j.c.ev(dt, Event{Step: "lock_acquired", LockKey: j.lockKey, Token: j.token, TTLms: j.ttl})
}

func (j *job) busy(dt time.Duration) {
	j.c.ev(dt, Event{Step: "lock_busy", Level: "warn", LockKey: j.lockKey, TTLms: j.ttl})
}

func (j *job) check(dt time.Duration, source string) {
	j.c.ev(dt, Event{Step: "idem_check", IdemKey: j.idemKey, Source: source, Level: "debug"})
}

func (j *job) seen(dt time.Duration, source string) {
	j.c.ev(dt, Event{Step: "idem_seen", IdemKey: j.idemKey, Source: source})
}

// charge logs the intent and, after the gateway answered, the effect.
func (j *job) charge(dt, latency time.Duration) time.Time {
	j.c.ev(dt, Event{Step: "charge_start", Amount: j.o.Amount, Currency: "EUR", IdemKey: j.idemKey, Level: "debug"})
	j.c.ev(latency, Event{Step: "charge", Amount: j.o.Amount, Currency: "EUR", ChargeID: j.c.f.chargeID(),
		IdemKey: j.idemKey, ElapsedMs: int(latency / time.Millisecond)})
	j.o.Effects++
	j.o.EffectTimes = append(j.o.EffectTimes, j.c.t.Format(time.RFC3339Nano))
	j.o.Instances = appendUnique(j.o.Instances, j.c.in.ID)
	return j.c.t
}

func (j *job) chargeFailed(dt, latency time.Duration, err string) {
	j.c.ev(dt, Event{Step: "charge_start", Amount: j.o.Amount, Currency: "EUR", IdemKey: j.idemKey, Level: "debug"})
	j.c.ev(latency, Event{Step: "charge_failed", Level: "warn", Amount: j.o.Amount, Currency: "EUR", Error: err,
		ElapsedMs: int(latency / time.Millisecond)})
}

func (j *job) commit(dt time.Duration) {
	j.c.ev(dt, Event{Step: "commit", IdemKey: j.idemKey})
}

func (j *job) release(dt time.Duration, withToken bool) {
	tok := j.token
	if !withToken {
		tok = ""
	}
	j.c.ev(dt, Event{Step: "lock_released", LockKey: j.lockKey, Token: tok, Level: "debug"})
}

func (j *job) ack(dt time.Duration) {
	j.c.ev(dt, Event{Step: "ack", MsgID: j.msgID, Delivery: j.delivery, Level: "debug"})
}

func (j *job) nack(dt time.Duration, backoff int, err string) {
	j.c.ev(dt, Event{Step: "nack", MsgID: j.msgID, Delivery: j.delivery, BackoffMs: backoff, Error: err, Level: "warn"})
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// --- the run ---------------------------------------------------------------

type scenario struct {
	name  string
	cause string // "" for a clean order
	n     int
	dur   time.Duration // how long the scenario occupies the fleet, roughly
	crash bool
	run   func(f *fleet, o *Order, t time.Time)
}

func (f *fleet) run() {
	for _, in := range f.inst {
		in.Pids = []int{1000 + f.rng.IntN(60000)}
		in.Starts = []string{f.t0.Add(-time.Duration(40+f.rng.IntN(200)) * time.Second).Format(time.RFC3339Nano)}
	}
	var plan []*scenario
	for _, s := range scenarios {
		for range s.n {
			plan = append(plan, s)
		}
	}
	f.rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	t := f.t0.Add(20 * time.Second)
	for _, s := range plan {
		o := &Order{ID: f.orderID(), Amount: 500 + f.rng.IntN(40000), Scenario: s.name, Cause: s.cause}
		s.run(f, o, t)
		f.orders = append(f.orders, o)
		t = t.Add(f.ms(9000, 17000))
	}
	f.lifecycle(t.Add(90 * time.Second))
	sort.SliceStable(f.events, func(i, j int) bool { return f.events[i].T.Before(f.events[j].T) })
	for i := range f.events {
		e := &f.events[i]
		e.Seq = i + 1
		in := f.instance(e.Instance)
		e.Pid = in.pid(e.T)
		if e.Step == "killed" {
			// the kill belongs to the process that dies
			e.Pid = in.pid(e.T.Add(-time.Millisecond))
		}
		e.Processed = 0
		if e.Step == "heartbeat" {
			e.Processed = f.processed(in.ID, e.T)
		}
	}
	for _, o := range f.orders {
		if o.Effects != 2 && o.Cause != "" || o.Effects != 1 && o.Cause == "" {
			panic(fmt.Sprintf("order %s (%s): %d effects", o.ID, o.Scenario, o.Effects))
		}
	}
}

func (f *fleet) instance(id string) *Instance {
	for _, in := range f.inst {
		if in.ID == id {
			return in
		}
	}
	panic(id)
}

func (f *fleet) processed(id string, t time.Time) int {
	n := 0
	for _, e := range f.events {
		if e.Instance == id && e.Step == "ack" && e.T.Before(t) {
			n++
		}
	}
	return n
}

// lifecycle adds the processes' start lines (boot and every restart) and a
// heartbeat a minute from each running process.
func (f *fleet) lifecycle(end time.Time) {
	for _, in := range f.inst {
		for i, s := range in.Starts {
			st, _ := time.Parse(time.RFC3339Nano, s)
			if st.Before(f.t0) {
				st = f.t0.Add(time.Duration(i*300+f.rng.IntN(900)) * time.Millisecond)
			}
			f.at(in, -1, st, "").ev(0, Event{Step: "start", Version: "2.14.3"})
		}
		for t := f.t0.Add(time.Duration(50+f.rng.IntN(10)) * time.Second); t.Before(end); t = t.Add(time.Minute) {
			if in.upDuring(span{t, t.Add(time.Millisecond)}) {
				f.at(in, -1, t, "").ev(0, Event{Step: "heartbeat", Level: "debug"})
			}
		}
	}
}

// restart marks a new process on the instance at t.
func (f *fleet) restart(in *Instance, t time.Time) {
	in.Pids = append(in.Pids, 1000+f.rng.IntN(60000))
	in.Starts = append(in.Starts, t.Format(time.RFC3339Nano))
}

func (f *fleet) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ev, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(ev)
	for _, e := range f.events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	if err := ev.Close(); err != nil {
		return err
	}
	truth := map[string]any{
		"start":     f.t0.Format(time.RFC3339),
		"instances": f.inst,
		"orders":    f.orders,
		"causes":    causeNames(),
	}
	b, err := json.MarshalIndent(truth, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "fleet-truth.json"), append(b, '\n'), 0o644)
}

func causeNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range scenarios {
		if s.cause != "" && !seen[s.cause] {
			seen[s.cause] = true
			out = append(out, s.cause)
		}
	}
	return out
}
