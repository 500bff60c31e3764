package doctor

// The checks behind the checklist: each capability run on what the
// connections and dupctl.yaml's jobs name, mapped to the lines it speaks to.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dupctl/dupctl/internal/doctor/topology"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/keys"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// Deps are the connections doctor's checks open, lazily, and what is
// configured: a URL left empty skips the checks that need its system.
type Deps struct {
	RedisURL, DatabaseURL, AMQPURL string
	Redis                          func(ctx context.Context) (redis.UniversalClient, error)
	Postgres                       func(ctx context.Context, o connect.PostgresOptions) (*pgxpool.Pool, error)
	AMQP                           func(ctx context.Context) (*amqp.Connection, error)
	// LogSources opens a job's log paths (files, globs, directories).
	LogSources func(ctx context.Context, paths []string) ([]logs.Source, error)
	Now        func() time.Time
}

// Options are what doctor checks: the jobs, and the management API that
// shows the broker's topology.
type Options struct {
	Jobs []config.Job
	// Locks are dupctl.yaml's locks (patterns and libraries): inspect
	// lock takes them under doctor as it does on its own.
	Locks         config.Locks
	ManagementURL string
	// Vhost is the RabbitMQ virtual host of the queues ("": the AMQP
	// URL's, else "/").
	Vhost string
}

type env struct {
	Deps
	Options
	// broker is the broker's map the topology check read, for the result.
	broker *topology.Map
}

// jobMapping is the log mapping of a job's logs.fields and logs.events.
func jobMapping(j config.Job) (*logs.Mapping, error) {
	var c logs.Config
	for k, v := range j.Logs.Fields {
		if err := c.AddFieldFlag(k + "=" + v); err != nil {
			return nil, fmt.Errorf("job %s: logs.fields: %w", j.Name, err)
		}
	}
	for k, phrases := range j.Logs.Events {
		for _, p := range phrases {
			if err := c.AddEventFlag(k + "=" + p); err != nil {
				return nil, fmt.Errorf("job %s: logs.events: %w", j.Name, err)
			}
		}
	}
	return logs.Compile(c)
}

// logError makes a log that cannot be read bad input.
func logError(err error) error {
	var se *logs.SourceError
	if errors.As(err, &se) {
		return &problem.Input{Why: err.Error(), Hint: "check logs.paths in dupctl.yaml", Err: err}
	}
	return err
}

// checks builds every check the connections and config allow.
// vhost is the virtual host the checks read: the one given, else the AMQP
// URL's (a management API read of "/" found none of the queues of a URL
// naming another), else "/".
func (e *env) vhost() string {
	if e.Vhost != "" {
		return e.Vhost
	}
	if t, err := connect.ParseAMQP(e.AMQPURL); err == nil && t.Vhost != "" {
		return t.Vhost
	}
	return "/"
}

func (e *env) checks() []Check {
	var out []Check
	out = append(out, topologyCheck(e))
	if !slices.ContainsFunc(e.Jobs, func(j config.Job) bool { return j.RetryQueue != "" }) {
		out = append(out, Check{Items: []int{6}, Name: "retry queues", Skip: "no retry_queue in dupctl.yaml"})
	}
	patterned := false
	for _, j := range e.Jobs {
		patterned = patterned || j.LockPattern != ""
	}
	tabled := false
	for _, j := range e.Jobs {
		tabled = tabled || j.Idempotency.Table != ""
	}
	// Without --job, a command takes the one job of a dupctl.yaml that
	// has one: so do the checks no job names the keys or table of.
	var only *config.Job
	if len(e.Jobs) == 1 {
		only = &e.Jobs[0]
	}
	if !patterned {
		// No job names its lock keys: look at every key shaped like a lock.
		out = append(out, lockCheck(e, only, "inspect lock (every lock-shaped key)"))
	}
	if !tabled {
		// No job names its table: look for tables that look like one.
		out = append(out, storeCheck(e, only, "inspect store (tables that look like idempotency tables)"))
	}
	if len(e.Jobs) == 0 {
		for _, it := range []struct {
			items []int
			name  string
		}{{[]int{4}, "inspect ttl"}, {[]int{5}, "dlq stats"}, {[]int{8}, "audit cache"}, {[]int{1, 9}, "audit logs"}} {
			out = append(out, Check{Items: it.items, Name: it.name, Skip: "no job types: describe them in dupctl.yaml"})
		}
	}
	for _, j := range e.Jobs {
		if j.LockPattern != "" {
			out = append(out, lockCheck(e, &j, "inspect lock "+j.LockPattern))
		}
		if j.Idempotency.Table != "" {
			out = append(out, storeCheck(e, &j, "inspect store "+j.Idempotency.Table))
		}
		out = append(out, ttlCheck(e, j), dlqCheck(e, j), cacheCheck(e, j))
		out = append(out, logsChecks(e, j)...)
	}
	out = append(out, simulateChecks(e)...)
	return out
}

func topologyCheck(e *env) Check {
	var jobs []topology.Job
	for _, j := range e.Jobs {
		if j.Queue != "" {
			jobs = append(jobs, topology.Job{Name: j.Name, Queue: j.Queue, DLQ: j.DLQ, RetryQueue: j.RetryQueue})
		}
	}
	retries := false
	for _, j := range jobs {
		retries = retries || j.RetryQueue != ""
	}
	items := []int{7}
	if retries {
		items = []int{6, 7}
	}
	c := Check{Items: items, Name: "broker topology", PartialWhen: map[string][]int{topology.RuleManagementUnavailable.Code: items},
		ItemOf: map[string]int{
			topology.RuleRetryMissing.Code: 6, topology.RuleNoDLX.Code: 7, topology.RuleDLXUnrouted.Code: 7, topology.RuleDLQMissing.Code: 7,
			topology.RuleNoDeliveryLimit.Code: 7, topology.RuleAutoAck.Code: 7,
		}}
	switch {
	case e.AMQPURL == "":
		c.Skip = "no {AMQPURL}"
		return c
	case len(jobs) == 0:
		c.Skip = "no queue: name jobs in dupctl.yaml or pass {Queues}"
		return c
	}
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Queue
	}
	c.Name = "broker topology of " + strings.Join(names, ", ")
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		conn, err := e.AMQP(ctx)
		if err != nil {
			return nil, err
		}
		var mgmt *topology.Management
		if e.ManagementURL != "" {
			if mgmt, err = topology.NewManagement(e.ManagementURL, e.vhost()); err != nil {
				return nil, &problem.Input{Why: err.Error(), Hint: "fix the management URL", Err: err}
			}
		}
		r, err := topology.Run(ctx, topology.Prober{Conn: conn}, mgmt, jobs)
		if err != nil {
			return nil, problem.System(err, "check the broker and the management URL")
		}
		e.broker = r.Map
		return r.Report(), nil
	}
	return c
}

// simulateChecks: the simulator's own matrix, and each job's declared
// consumer profile under the crash scenarios.
func simulateChecks(e *env) []Check {
	// The simulator checking its own documented matrix says nothing about
	// the user's system: it runs under no checklist line, and only its
	// findings (a claim that no longer holds) are reported.
	matrix := func(ctx context.Context) (*findings.Report, error) {
		m, err := sim.Matrix(ctx, sim.MatrixOptions{Scenarios: sim.Scenarios(), Profiles: worker.Profiles(), MaxStates: 5_000_000})
		if err != nil {
			return nil, err
		}
		return m.Report(), nil
	}
	out := []Check{{Name: "simulate matrix (the simulator's own documented claims)", Run: matrix}}
	for _, j := range e.Jobs {
		if j.Worker != nil {
			out = append(out, workerCheck(e, j))
		}
	}
	if !slices.ContainsFunc(e.Jobs, func(j config.Job) bool { return j.Profile != "" || len(j.Mitigations) > 0 || j.Worker != nil }) {
		out = append(out, Check{Items: []int{10}, Name: "crash scenarios",
			Skip: "no job names its worker or consumer profile: give jobs[].worker (its own consumer under real faults) " +
				"or jobs[].profile in dupctl.yaml"})
	}
	for _, j := range e.Jobs {
		if j.Profile == "" && len(j.Mitigations) == 0 {
			continue
		}
		out = append(out, Check{Items: []int{10}, Name: "simulate crash, lock-expiry, redelivery under job " + j.Name + "'s declared profile",
			Partial: "job " + j.Name + ": a model of the declared profile, not the worker: run the job's own worker under the same " +
				"faults (jobs[].worker in dupctl.yaml, or dupctl simulate crash --worker)",
			Run: func(ctx context.Context) (*findings.Report, error) {
				p, err := jobProfile(j)
				if err != nil {
					return nil, err
				}
				r := &findings.Report{}
				r.Check(sim.RuleDuplicate.Code, sim.RuleLoss.Code)
				for _, name := range []string{"crash", "lock-expiry", "redelivery"} {
					sc, _ := sim.ScenarioByName(name)
					res, err := sim.Run(ctx, sim.Options{Scenario: sc, Profiles: []worker.Profile{p}, Tune: jobTune(j)})
					if err != nil {
						return nil, err
					}
					pr := res.Profiles[0]
					var ev []string
					if pr.Example != nil {
						ev = []string{"replay: dupctl simulate replay " + pr.Example.Token}
					}
					subject := "job " + j.Name + " (" + name + ")"
					if pr.Found.Has(sim.VDuplicate) {
						r.Add(sim.RuleDuplicate.New(subject, fmt.Sprintf("the job's consumer (%s) runs a side effect twice when %s",
							p.Describe(), sc.Title), ev...))
					}
					if pr.Found.Has(sim.VLoss) {
						r.Add(sim.RuleLoss.New(subject, fmt.Sprintf("the job's consumer (%s) loses a job when %s", p.Describe(), sc.Title), ev...))
					}
				}
				return r, nil
			}})
	}
	return out
}

// workerCheck runs the job's own worker (jobs[].worker) through the crash
// and lock-expiry faults on the real services: evidence about the user's
// consumer itself, the only kind that can pass line 10.
func workerCheck(e *env, j config.Job) Check {
	g := e.Deps
	c := Check{Items: []int{10}, Name: "job " + j.Name + "'s worker under real faults (" + j.Worker.Command + ")"}
	switch {
	case g.AMQPURL == "":
		c.Skip = "no {AMQPURL} for the worker's queue"
		return c
	case g.DatabaseURL == "":
		c.Skip = "no {DatabaseURL} for the worker's effects query"
		return c
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		var d chaos.Deps
		var err error
		if d.AMQP, err = e.AMQP(connect.WithAMQPName(ctx, "doctor worker "+j.Name)); err != nil {
			return nil, err
		}
		if d.Postgres, err = e.Postgres(ctx, connect.PostgresOptions{MaxConns: 4}); err != nil {
			return nil, err
		}
		if g.RedisURL != "" {
			if d.Redis, err = e.Redis(ctx); err != nil {
				return nil, err
			}
		}
		base := chaos.Options{AMQPURL: g.AMQPURL, RedisURL: g.RedisURL, DatabaseURL: g.DatabaseURL}
		proof, err := chaos.ProveJob(ctx, d, chaos.ProveOptions{Job: j, Base: base})
		if err != nil {
			return nil, err
		}
		rep := proof.Report()
		if !proof.Passed() && len(rep.Findings) == 0 {
			// A fault point never reached is no proof either way.
			return nil, &NothingError{Reason: proof.Summary()}
		}
		return rep, nil
	}
	return c
}

// jobTune gives the simulator the job's own lock TTL from dupctl.yaml, so
// its verdict is about the TTL the job runs with.
func jobTune(j config.Job) func(*sim.Config) error {
	return func(c *sim.Config) error {
		if j.LockTTL > 0 {
			c.LockTTL = sim.Millis(time.Duration(j.LockTTL))
		}
		return nil
	}
}

func jobProfile(j config.Job) (worker.Profile, error) {
	name := j.Profile
	if name == "" {
		name = "naive"
	}
	p, err := worker.ProfileByName(name)
	if err != nil {
		return p, &problem.Input{Why: fmt.Sprintf("job %s: %v", j.Name, err), Hint: "fix profile in dupctl.yaml", Err: err}
	}
	for k, v := range j.Mitigations {
		if err := p.Set(k, v); err != nil {
			return p, &problem.Input{Why: fmt.Sprintf("job %s: mitigations: %v", j.Name, err), Hint: "fix dupctl.yaml", Err: err}
		}
	}
	return p, nil
}

// Which checklist line each capability's codes speak to, where a check
// covers several lines.
var lockItems = map[string]int{
	lock.RuleRandomKey.Code: 1,
}

// lockCheck is `inspect lock` configured as for job j (nil: none; no
// lock_pattern: every key): items 1 (the key is a business key) and 3
// (TTL, token).
func lockCheck(e *env, j *config.Job, name string) Check {
	c := Check{Items: []int{1, 3}, Name: name, ItemOf: lockItems, Primary: 3}
	if e.RedisURL == "" {
		c.Skip = "no {RedisURL}"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		client, err := e.Redis(ctx)
		if err != nil {
			return nil, err
		}
		o := lock.Defaults()
		o.Configure(e.Locks, j, nil)
		o.URL, o.Now = redact.URL(e.RedisURL), e.Now
		res, err := lock.Run(ctx, client, o)
		if err != nil {
			return nil, err
		}
		if res.Data.Scan.Locks == 0 {
			// Its findings (Redis settings, possible locks) stand.
			return nil, &NothingError{Reason: fmt.Sprintf("no lock key found (%d keys scanned)", res.Data.Scan.KeysScanned),
				Report: res.Report()}
		}
		return res.Report(), nil
	}
	return c
}

// ttlCheck is `inspect ttl` on the job's measured durations against its
// lock TTL: item 4.
func ttlCheck(e *env, j config.Job) Check {
	src := j.Durations.CSV
	if src == "" {
		src = "query"
	}
	c := Check{Items: []int{4}, Name: "inspect ttl of job " + j.Name + " (" + src + ")"}
	switch {
	case j.Durations.CSV == "" && j.Durations.Query == "":
		c.Skip = "no durations (csv or query) for job " + j.Name
	case j.Durations.CSV == "" && e.DatabaseURL == "":
		c.Skip = "no {DatabaseURL} for the durations query"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		to := ttl.Options{Format: ttl.FormatCSV, Query: j.Durations.Query,
			Collect: ttl.CollectOptions{TTLs: ttl.TTLs{Default: time.Duration(j.LockTTL), DefaultSource: "dupctl.yaml"}},
			Table:   ttl.TableOptions{DefaultType: j.Name}}
		if j.Durations.CSV != "" {
			to.Files, to.Query = []string{j.Durations.CSV}, ""
		}
		res, err := ttl.Run(ctx, ttl.Deps{Postgres: func(ctx context.Context) (ttl.Querier, error) {
			return e.Postgres(ctx, pgReadOnly())
		}}, to)
		switch {
		case errors.Is(err, ttl.ErrNoRuns):
			return nil, &NothingError{Reason: "no job durations in " + src}
		case err != nil:
			return nil, fmt.Errorf("job %s durations (fix durations in dupctl.yaml): %w", j.Name, err)
		}
		return res.Report(), nil
	}
	return c
}

// dlqCheck is `dlq stats` on the job's DLQ: item 5 (what should never
// have been retried), reading without consuming.
func dlqCheck(e *env, j config.Job) Check {
	c := Check{Items: []int{5}, Name: "dlq stats " + j.DLQ}
	switch {
	case j.DLQ == "":
		c.Name = "dlq stats of job " + j.Name
		c.Skip = "no dlq for job " + j.Name
	case e.AMQPURL == "":
		c.Skip = "no {AMQPURL}"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		vhost := e.vhost()
		s, err := dlqread.Stats(ctx, dlqread.Deps{
			Dial: func(ctx context.Context, role string) (*amqp.Connection, error) {
				return e.AMQP(connect.WithAMQPName(ctx, "doctor dlq "+role))
			},
			Now: e.Now,
		}, dlqread.StatsOptions{
			// As `dlq stats --job` reads: every message counted at the
			// start, its window and idle time, the built-in rules and
			// fields (zero values: the command's defaults).
			Read:  dlqread.Options{Queue: j.DLQ},
			Vhost: vhost,
		})
		if dlqread.IsNotFound(err) {
			// The topology check reports the missing DLQ itself.
			return nil, &NothingError{Reason: "the DLQ does not exist"}
		}
		if err != nil {
			return nil, err
		}
		return s.Report(), nil
	}
	return c
}

// Log findings by checklist line: causes that name a key or lock
// mistake go to line 1 (or 3 for an unlock without token), missing fields
// to line 9, the rest count against line 2 (the outcome was not protected).
var logItems = map[string]int{
	auditlogs.RuleLockKeyJobID.Code:  1,
	auditlogs.RuleUnstableKey.Code:   1,
	auditlogs.RuleUnlockNoToken.Code: 3,
	auditlogs.RuleLockExpiry.Code:    4,
	auditlogs.RuleStaleCache.Code:    8,
	auditlogs.RuleMalformed.Code:     9,
	auditlogs.RuleNoEffects.Code:     9,
	auditlogs.RuleNoBusinessKey.Code: 9,
	auditlogs.RuleRedelivery.Code:    2,
	auditlogs.RuleNonAtomic.Code:     2,
	auditlogs.RuleRace.Code:          2,
	auditlogs.RuleUnexplained.Code:   2,
}

// logsChecks are `audit logs` and `keys unstable` on the job's logs.
func logsChecks(e *env, j config.Job) []Check {
	audits := Check{Items: []int{1, 2, 3, 4, 8, 9}, ItemOf: logItems, Primary: 9, Name: "audit logs of job " + j.Name}
	keyCheck := Check{Items: []int{1}, Name: "keys unstable of job " + j.Name}
	if len(j.Logs.Paths) == 0 {
		audits.Skip = "no logs.paths for job " + j.Name
		keyCheck.Skip = audits.Skip
		return []Check{audits, keyCheck}
	}
	sources := func(ctx context.Context) ([]logs.Source, *logs.Mapping, error) {
		m, err := jobMapping(j)
		if err != nil {
			return nil, nil, err
		}
		srcs, err := e.LogSources(ctx, j.Logs.Paths)
		return srcs, m, err
	}
	audits.Run = func(ctx context.Context) (*findings.Report, error) {
		srcs, m, err := sources(ctx)
		if err != nil {
			return nil, err
		}
		res, err := auditlogs.Run(ctx, srcs, auditlogs.Options{Mapping: m})
		if err != nil {
			return nil, logError(err)
		}
		return res.Report(), nil
	}
	keyCheck.Run = func(ctx context.Context) (*findings.Report, error) {
		srcs, m, err := sources(ctx)
		if err != nil {
			return nil, err
		}
		res, err := keys.Run(ctx, srcs, keys.Options{Mapping: m})
		if err != nil {
			return nil, logError(err)
		}
		return res.Report(), nil
	}
	return []Check{audits, keyCheck}
}

// pgReadOnly is the read-only session inspect store, audit cache and
// inspect ttl use, with their default timeouts.
func pgReadOnly() connect.PostgresOptions {
	return connect.PostgresOptions{ReadOnly: true, StatementTimeout: time.Minute, LockTimeout: 2 * time.Second, MaxConns: 2}
}

// Store findings about a business key count against line 1; the rest are
// line 2 (a unique constraint or atomic operation at the source of truth).
var storeItems = map[string]int{
	store.RuleMultipleSucceeded.Code: 1,
}

// storeCheck is `inspect store` configured as for job j (nil: none; no
// idempotency.table: the tables that look like one): items 1, 2.
func storeCheck(e *env, j *config.Job, name string) Check {
	c := Check{Items: []int{1, 2}, ItemOf: storeItems, Primary: 2, Name: name}
	if e.DatabaseURL == "" {
		c.Skip = "no {DatabaseURL}"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		pool, err := e.Postgres(ctx, pgReadOnly())
		if err != nil {
			return nil, err
		}
		o := store.Defaults()
		o.Configure(j, nil)
		o.Now = e.Now()
		res, err := store.Run(ctx, pool, o)
		var in *problem.Input
		if o.Table == "" && errors.As(err, &in) {
			// Discovery found nothing that looks like an idempotency
			// table: nothing to judge, not a failure to run.
			return nil, &NothingError{Reason: "no table looks like an idempotency table: name it in dupctl.yaml (jobs[].idempotency.table)"}
		}
		if err != nil {
			return nil, err
		}
		if len(res.Tables) == 0 {
			return nil, &NothingError{Reason: "no idempotency table found", Report: res.Report()}
		}
		return res.Report(), nil
	}
	return c
}

// cacheCheck is `audit cache` on the job's status cache against its
// idempotency table, configured as `audit cache --job` is (whether a
// message for a key is still live is unknown to both): item 8.
func cacheCheck(e *env, j config.Job) Check {
	c := Check{Items: []int{8}, Name: "audit cache " + j.CachePattern}
	switch {
	case j.CachePattern == "":
		c.Name = "audit cache of job " + j.Name
		c.Skip = "no cache_pattern for job " + j.Name
	case j.Idempotency.Table == "":
		c.Skip = "no idempotency.table for job " + j.Name
	case e.RedisURL == "" || e.DatabaseURL == "":
		c.Skip = "needs {RedisURL} and {DatabaseURL}"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		o := auditcache.Defaults()
		if err := o.Configure(&j, nil); err != nil {
			return nil, &problem.Input{Why: "job " + j.Name + ": " + Word(err), Hint: "fix dupctl.yaml", Err: err}
		}
		rdb, err := e.Redis(ctx)
		if err != nil {
			return nil, err
		}
		pool, err := e.Postgres(ctx, pgReadOnly())
		if err != nil {
			return nil, err
		}
		res, err := auditcache.Run(ctx, auditcache.Deps{Cache: rdb, DB: pool}, o)
		if err != nil {
			return nil, err
		}
		return res.Report(), nil
	}
	return c
}
