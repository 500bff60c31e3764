// Package chaos runs a user's own worker under real faults: it starts N
// copies of the worker command, gives them the addresses of its own
// proxies in front of the real RabbitMQ, Redis and PostgreSQL, publishes a
// workload of business keys, injects the scenario's fault at a point it
// sees on the wire (a withheld basic.ack and SIGKILL, a SIGSTOP after a
// lock succeeded, a broker-side close, a lagging status cache), counts
// the side effects with the user's own SQL and gives a verdict per
// business key: effects, and for a duplicate the fault, the schedule and
// the cause, in the cause model's codes (internal/cause); a key with no effect is loss.
//
// A seed picks each run's fault point and victim; consecutive seeds visit
// every point of the scenario. Everything a run creates (processes,
// proxy listeners, queues and keys named with the run's id) is removed on
// every exit path.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

// Options are one `simulate <scenario> --worker` invocation.
type Options struct {
	Scenario string
	// Worker is the command that starts one worker, run by /bin/sh -c
	// with Env added to dupctl's environment; {templates} are expanded.
	Worker string
	// Workers is how many copies run at once (default 2).
	Workers int
	// Env are NAME=VALUE pairs for the workers, with {amqp}, {redis},
	// {postgres} (and _addr, _host, _port, {postgres_jdbc}, ...),
	// {prefix} (the run's id) and {worker} (1..N) expanded.
	Env []string
	// Publish is EXCHANGE:ROUTING_KEY for the workload ({prefix} expanded).
	Publish string
	// Body is the message body; {{key}} is the business key.
	Body string
	// Keys is the number of business keys per run (default 3).
	Keys int
	// EffectsSQL counts side effects: rows of (business key, count), and
	// optionally a third column, the number of distinct idempotency keys
	// the effects were made under.
	EffectsSQL string
	// EffectsLog counts side effects in log lines instead: WorkerOutput
	// ("-") reads the workers' stdout and stderr, a path what that file
	// gains during each run. LogMapping reads them (nil: audit logs'
	// default mapping).
	EffectsLog string
	LogMapping *logs.Mapping
	// CacheKeys is a glob of the status cache's Redis keys: writes to them
	// lag by CacheLag in stale-cache.
	CacheKeys string
	CacheLag  time.Duration
	// Pause is lock-expiry's stop; 0 is the lock's TTL plus a margin.
	Pause time.Duration
	// At restricts the fault points.
	At []Point
	// Seed of the first run; run i uses Seed+i.
	Seed uint64
	Runs int
	// Attempts bounds the tries of one run (default 3): a run whose fault
	// came but whose scenario's condition did not happen (no other holder
	// took the expired lock, the message never came back, ...) proves
	// nothing, and is tried again with the next business key as its
	// victim and fresh workers; after the last it is reported as not
	// reached.
	Attempts int
	// Settle is the quiet period that ends a run (default 1s).
	Settle time.Duration
	// ReadyTimeout bounds a worker's start until it consumes (default 60s).
	ReadyTimeout time.Duration
	// RunTimeout bounds one run (default 2m).
	RunTimeout time.Duration
	// Slow adds latency to every reply of a service (amqp, redis, postgres).
	Slow map[string]time.Duration

	AMQPURL     string
	RedisURL    string
	DatabaseURL string
	// ReplicaURL is a streaming standby of DatabaseURL that the workers
	// read through {replica} (their read URL), proxied like the rest. Only
	// replica-lag changes it: it pauses and resumes its WAL replay.
	ReplicaURL string
	// ReplicaLag bounds how long replica-lag keeps replay paused after
	// the victim's first write (default DefaultReplicaLag).
	ReplicaLag  time.Duration
	AllowRemote bool

	// WorkerLog receives the workers' output, each line prefixed with its
	// worker; nil discards it (the last lines still reach errors).
	WorkerLog io.Writer
	// WorkerFile, when set, gives each worker copy's own output file: its
	// lines as the worker wrote them, unprefixed, so a copy can be read by
	// audit logs (--explain-mapping) as its log. seed and attempt name the
	// run, lane the copy (W1, W1#2 for its restart).
	WorkerFile func(seed uint64, attempt int, lane string) (io.WriteCloser, error)
	// Replay words the command that replays one run's seed.
	Replay func(seed uint64) string
	// Progress counts runs.
	Progress progress.Meter
	// OnStart learns each run's id (tests check cleanup).
	OnStart func(id string)
}

// Deps are dupctl's own connections: to publish, to read the lock and the
// effects, and to clean up. Redis may be nil when the worker uses none.
type Deps struct {
	AMQP     *amqp.Connection
	Redis    redis.UniversalClient
	Postgres *pgxpool.Pool
	// Replica is dupctl's own connection to the standby at ReplicaURL
	// (nil without one): replica-lag pauses and resumes replay through it.
	Replica *pgxpool.Pool
}

// Defaults.
const (
	DefaultWorkers  = 2
	DefaultKeys     = 3
	DefaultCacheLag = 2 * time.Second
	// DefaultReplicaLag is long enough for a second copy to be delivered
	// and read while replay is paused; replay resumes earlier once that
	// copy was handled.
	DefaultReplicaLag = 5 * time.Second
	DefaultSettle     = time.Second
	DefaultAttempts   = 3
	DefaultBody       = `{"orderId":"{{key}}"}`
)

func (o *Options) defaults() {
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.Keys == 0 {
		o.Keys = DefaultKeys
	}
	if o.Body == "" {
		o.Body = DefaultBody
	}
	if o.CacheLag == 0 {
		o.CacheLag = DefaultCacheLag
	}
	if o.Settle == 0 {
		o.Settle = DefaultSettle
	}
	if o.ReplicaLag == 0 {
		o.ReplicaLag = DefaultReplicaLag
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = time.Minute
	}
	if o.RunTimeout == 0 {
		o.RunTimeout = 2 * time.Minute
	}
	if o.Runs == 0 {
		o.Runs = 1
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultAttempts
	}
}

// Validate checks options before any connection is opened.
func Validate(o Options) error {
	o.defaults()
	spec, err := SpecFor(o.Scenario)
	if err != nil {
		return err
	}
	return o.check(spec)
}

// check validates the options against the scenario: their shape, the
// templates, then the services.
func (o *Options) check(spec Spec) error {
	if err := o.checkShape(); err != nil {
		return err
	}
	if err := o.checkTemplates(); err != nil {
		return err
	}
	return o.checkServices(spec)
}

// checkShape checks the values that need nothing else to be judged.
func (o *Options) checkShape() error {
	switch {
	case !procSupported:
		return problem.Inputf("Worker", "running a worker under faults needs a Unix system: dupctl stops and kills its process group")
	case strings.TrimSpace(o.Worker) == "":
		return problem.Inputf("Worker", "give the command that starts one worker")
	case o.Workers < 1 || o.Workers > 16:
		return problem.Inputf("Workers", "must be 1..16, got %d", o.Workers)
	case o.Keys < 1 || o.Keys > 1000:
		return problem.Inputf("Keys", "must be 1..1000, got %d", o.Keys)
	case o.Runs < 1:
		return problem.Inputf("Runs", "must be positive, got %d", o.Runs)
	case o.Attempts < 1:
		return problem.Inputf("Attempts", "must be positive, got %d", o.Attempts)
	case o.Publish == "":
		return problem.Inputf("Publish", "say where the workload goes: EXCHANGE:ROUTING_KEY (:QUEUE for the default exchange)")
	case o.EffectsSQL == "" && o.EffectsLog == "":
		return problem.Inputf("EffectsSQL", "give a query that counts side effects per business key, "+
			"e.g. select order_id, count(*) from charges group by 1, or count them in the workers' logs with {EffectsLog}")
	case o.EffectsSQL != "" && o.EffectsLog != "":
		return problem.Inputf("EffectsLog", "count the side effects one way: {EffectsSQL} or {EffectsLog}, not both")
	case !strings.Contains(o.Body, "{{key}}"):
		return problem.Inputf("Body", "must contain {{key}}, where the business key goes")
	case o.Settle < 50*time.Millisecond:
		return problem.Inputf("Settle", "must be at least 50ms, got %s", o.Settle)
	case o.ReplicaLag < 50*time.Millisecond:
		return problem.Inputf("ReplicaLag", "must be at least 50ms, got %s", o.ReplicaLag)
	}
	_, _, err := splitPublish(o.Publish)
	return err
}

// checkTemplates checks the templates in the command, the workload's
// destination and the workers' environment.
func (o *Options) checkTemplates() error {
	vars := templateNames(true, true)
	if o.RedisURL == "" && strings.Contains(o.Worker+strings.Join(o.Env, " "), "{redis") {
		return problem.Inputf("RedisURL", "the worker's environment uses {redis}: give {RedisURL}")
	}
	if o.ReplicaURL == "" && strings.Contains(o.Worker+strings.Join(o.Env, " "), "{replica") {
		return problem.Inputf("ReplicaURL", "the worker's environment uses {replica}: give {ReplicaURL}, a streaming standby of {DatabaseURL}")
	}
	if _, err := expand(o.Worker, vars); err != nil {
		return problem.Inputf("Worker", "%w", err)
	}
	if _, err := expand(o.Publish, vars); err != nil {
		return problem.Inputf("Publish", "%w", err)
	}
	for _, e := range o.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return problem.Inputf("Env", "%q: want NAME=VALUE", e)
		}
		if _, err := expand(e, vars); err != nil {
			return problem.Inputf("Env", "%s: %w", e, err)
		}
	}
	return nil
}

// checkServices checks the services' URLs against what the scenario
// needs and where they are.
func (o *Options) checkServices(spec Spec) error {
	for name := range o.Slow {
		if name != "amqp" && name != "redis" && name != "postgres" {
			return problem.Inputf("Slow", "unknown service %q: want amqp, redis or postgres", name)
		}
	}
	if o.AMQPURL == "" {
		return problem.Inputf("AMQPURL", "a worker run needs RabbitMQ: give {AMQPURL}")
	}
	if o.DatabaseURL == "" {
		return problem.Inputf("DatabaseURL", "the effects are counted in PostgreSQL: give {DatabaseURL}")
	}
	if err := o.checkNeeds(spec); err != nil {
		return err
	}
	if o.RedisURL != "" && !connect.IsSentinel(o.RedisURL) {
		// A Sentinel setup is proxied: the proxy dials the master the
		// Sentinels name (run.go's dialer), the worker gets redis://.
		u, err := url.Parse(o.RedisURL)
		if err == nil && (strings.Contains(u.Host, ",") || u.Query().Get("cluster") == "true") {
			return problem.Inputf("RedisURL",
				"Redis Cluster cannot be proxied (its redirects name the real nodes): point the workers at one standalone Redis")
		}
	}
	if t, err := connect.ParseAMQP(o.AMQPURL); err != nil {
		return err
	} else if len(t.Addrs) > 1 {
		return problem.Inputf("AMQPURL",
			"several RabbitMQ addresses cannot be proxied (the worker would fail over past the proxy): point the workers at one node")
	}
	if !o.AllowRemote {
		for _, u := range []string{o.AMQPURL, o.RedisURL, o.DatabaseURL, o.ReplicaURL} {
			if u != "" && !connect.IsLoopback(u) {
				return &problem.Input{
					Why: fmt.Sprintf("a worker run publishes messages, creates queues and keys and runs your worker against %s, "+
						"which is not a loopback address", redact.URL(u)),
					Hint: "pass {AllowRemote} to run against it anyway",
				}
			}
		}
	}
	return nil
}

// checkNeeds checks that the services and settings the scenario cannot do
// without are given.
func (o *Options) checkNeeds(spec Spec) error {
	for _, need := range spec.Needs {
		switch {
		case need == "redis" && o.RedisURL == "":
			return problem.Inputf("RedisURL", "simulate %s watches the worker's Redis: give {RedisURL}", spec.Scenario)
		case need == "cache" && o.CacheKeys == "":
			return problem.Inputf("CacheKeys", "simulate %s makes the status cache lag: name its keys, e.g. 'status:*'", spec.Scenario)
		case need == "replica" && o.ReplicaURL == "":
			return problem.Inputf("ReplicaURL", "simulate %s pauses WAL replay on a streaming standby that the workers read "+
				"through {replica}: give {ReplicaURL}, a standby dupctl may pause (on loopback)", spec.Scenario)
		case need == "replica" && !strings.Contains(o.Worker+strings.Join(o.Env, " "), "{replica"):
			return problem.Inputf("Env", "simulate %s makes the replica lag: give the workers its proxy as their read URL, "+
				"e.g. READ_DATABASE_URL={replica}", spec.Scenario)
		}
	}
	return nil
}

// checkSentinelMaster holds the master a Sentinel URL names to the rule
// every URL keeps: loopback unless {AllowRemote} (the Sentinels' own
// addresses say nothing of where the master is).
func (o *Options) checkSentinelMaster(ctx context.Context) error {
	if !connect.IsSentinel(o.RedisURL) || o.AllowRemote {
		return nil
	}
	s, err := connect.ParseSentinel(o.RedisURL)
	if err != nil {
		return err
	}
	addr, err := s.MasterAddr(ctx)
	if err != nil {
		return problem.System(fmt.Errorf("Redis Sentinels at %s: %w", s.Target(), err), "check that they run and name the master")
	}
	if !connect.IsLoopback("redis://" + addr) {
		return &problem.Input{Why: fmt.Sprintf("the Sentinels at %s name the master %s, which is not a loopback address", s.Target(), addr),
			Hint: "pass {AllowRemote} to run against it anyway"}
	}
	return nil
}

// Result is every run of one invocation.
type Result struct {
	Scenario string      `json:"scenario"`
	Worker   string      `json:"worker"`
	Workers  int         `json:"workers"`
	Keys     int         `json:"keys"`
	Seed     uint64      `json:"seed"`
	Points   []Point     `json:"points"`
	Runs     []RunResult `json:"runs"`
}

// Run plays the scenario on the worker o.Runs times.
func Run(ctx context.Context, d Deps, o Options) (*Result, error) {
	o.defaults()
	spec, err := SpecFor(o.Scenario)
	if err != nil {
		return nil, err
	}
	if err := o.check(spec); err != nil {
		return nil, err
	}
	if d.AMQP == nil || d.Postgres == nil || (o.RedisURL != "" && d.Redis == nil) || (o.ReplicaURL != "" && d.Replica == nil) {
		return nil, errors.New("chaos: a connection for a configured service is missing")
	}
	if err := o.checkSentinelMaster(ctx); err != nil {
		return nil, err
	}
	if spec.Fault == LagReplica {
		if err := checkStandby(ctx, d); err != nil {
			return nil, err
		}
	}
	points := spec.Points
	if len(o.At) > 0 {
		points = o.At
	}
	if o.EffectsSQL != "" {
		if err := checkEffectsSQL(ctx, d.Postgres, o.EffectsSQL); err != nil {
			return nil, err
		}
	}
	res := &Result{Scenario: o.Scenario, Worker: o.Worker, Workers: o.Workers, Keys: o.Keys, Seed: o.Seed, Points: points}
	meter := progress.Or(o.Progress)
	meter.SetTotal(int64(o.Runs))
	defer meter.Done()
	for i := 0; i < o.Runs; i++ {
		seed := o.Seed + uint64(i)
		rr, err := runAttempts(ctx, d, &o, spec, seed)
		if err != nil {
			return nil, err
		}
		if o.Replay != nil && rr.Failed() {
			rr.Replay = o.Replay(seed)
		}
		res.Runs = append(res.Runs, *rr)
		meter.Add(1)
	}
	return res, nil
}

// runAttempts plays one run: again, with the next victim and fresh
// workers, while its fault came but the scenario's condition did not
// happen, up to o.Attempts tries. The run's result is the last try's,
// with the earlier ones listed.
func runAttempts(ctx context.Context, d Deps, o *Options, spec Spec, seed uint64) (*RunResult, error) {
	var earlier []Attempt
	var took int64
	for attempt := 1; ; attempt++ {
		rr, err := runOnce(ctx, d, o, spec, seed, attempt)
		if err != nil {
			return nil, err
		}
		took += rr.ElapsedMs
		if !rr.conditionMissed || attempt >= o.Attempts {
			rr.Attempts, rr.ElapsedMs = earlier, took
			return rr, nil
		}
		earlier = append(earlier, Attempt{ID: rr.ID, Plan: rr.Plan, Missing: rr.Missing, ElapsedMs: rr.ElapsedMs})
	}
}
