package watch

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/watch"
)

// conns keeps one Redis client and one PostgreSQL pool for the whole
// watch: a check dials once, not once per run (the Factory's would add a
// cleanup per call, which over days is a leak).
type conns struct {
	o     *Options
	mu    sync.Mutex
	redis redis.UniversalClient
	pg    *pgxpool.Pool
}

func (c *conns) Redis(ctx context.Context) (redis.UniversalClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.redis == nil {
		r, err := c.o.Factory.Redis(ctx)
		if err != nil {
			return nil, err
		}
		c.redis = r
	}
	return c.redis, nil
}

func (c *conns) Postgres(ctx context.Context) (*pgxpool.Pool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pg == nil {
		// The read-only session inspect store and audit cache use.
		p, err := c.o.Factory.Postgres(ctx, connect.PostgresOptions{ReadOnly: true, StatementTimeout: time.Minute,
			LockTimeout: 2 * time.Second, MaxConns: 2})
		if err != nil {
			return nil, err
		}
		c.pg = p
	}
	return c.pg, nil
}

// SlowChecks are the checks whose default interval is longer than
// --interval's default: each run reads a whole table or queue (docs/watch.md
// measures what a run costs), so every 30s would cost a small server more
// than 1%. --interval or --check-interval set them.
var SlowChecks = map[string]time.Duration{"store": 5 * time.Minute, "dlq": 5 * time.Minute, "cache": 5 * time.Minute}

// checks are the checks asked for (or every one whose connection is
// given), each configured as its command is with --job and dupctl.yaml.
func (o *Options) checks() ([]watch.Check, error) {
	f := o.Factory
	g := f.Global
	job, err := f.Job()
	if err != nil {
		return nil, err
	}
	var locks config.Locks
	if f.Config != nil {
		locks = f.Config.Locks
	}
	cs := &conns{o: o}
	want := func(name string, have bool) bool {
		if len(o.Checks) == 0 {
			return have
		}
		return slices.Contains(o.Checks, name)
	}
	var out []watch.Check
	add := func(name string, run func(context.Context) (*watch.Sample, error)) {
		iv := o.Interval
		if d, ok := SlowChecks[name]; ok && !o.IntervalGiven {
			iv = d
		}
		if d, ok := o.CheckIntervals[name]; ok {
			iv = d
		}
		out = append(out, watch.Check{Name: name, Interval: iv, Timeout: o.CheckTimeouts[name], Run: run})
	}
	if want("lock", g.RedisURL != "") {
		add("lock", lockCheck(cs, locks, job, g.RedisURL, f.Now))
	}
	dlqs := o.dlqs()
	if want("dlq", g.AMQPURL != "" && len(dlqs) > 0) {
		add("dlq", dlqCheck(g.AMQPURL, dlqs, f.Now))
	}
	// Without --checks, store runs on a table a job names: discovery that
	// finds none would fail every run.
	if want("store", g.DatabaseURL != "" && job != nil && job.Idempotency.Table != "") {
		add("store", storeCheck(cs, job, f.Now))
	}
	cacheJobs := o.cacheJobs()
	if want("cache", g.RedisURL != "" && g.DatabaseURL != "" && len(cacheJobs) > 0) {
		add("cache", cacheCheck(cs, cacheJobs))
	}
	return out, o.needs(dlqs, cacheJobs)
}

// needs refuses a check asked for by --checks without what it reads.
func (o *Options) needs(dlqs []string, cacheJobs []config.Job) error {
	g := o.Factory.Global
	for _, c := range o.Checks {
		switch {
		case c == "lock" && g.RedisURL == "":
			return exitcode.UsageErrorf("--checks lock needs --redis-url")
		case c == "dlq" && (g.AMQPURL == "" || len(dlqs) == 0):
			return exitcode.UsageErrorf("--checks dlq needs --amqp-url and --dlq (or a job's dlq in dupctl.yaml)")
		case c == "store" && g.DatabaseURL == "":
			return exitcode.UsageErrorf("--checks store needs --database-url")
		case c == "cache" && (g.RedisURL == "" || g.DatabaseURL == "" || len(cacheJobs) == 0):
			return exitcode.UsageErrorf("--checks cache needs --redis-url, --database-url and a job with cache_pattern " +
				"and idempotency.table in dupctl.yaml")
		}
	}
	return nil
}

// dlqs are --dlq's queues and the jobs' DLQs, each once.
func (o *Options) dlqs() []string {
	out := append([]string(nil), o.DLQs...)
	if f := o.Factory; f.Config != nil {
		for _, j := range f.Config.Jobs {
			if j.DLQ != "" && !slices.Contains(out, j.DLQ) {
				out = append(out, j.DLQ)
			}
		}
	}
	return out
}

// cacheJobs are the jobs with a status cache and an idempotency table.
func (o *Options) cacheJobs() []config.Job {
	var out []config.Job
	if f := o.Factory; f.Config != nil {
		for _, j := range f.Config.Jobs {
			if j.CachePattern != "" && j.Idempotency.Table != "" {
				out = append(out, j)
			}
		}
	}
	return out
}

// lockCheck is `inspect lock` as --job and dupctl.yaml configure it.
func lockCheck(cs *conns, locks config.Locks, job *config.Job, url string,
	now func() time.Time) func(context.Context) (*watch.Sample, error) {
	return func(ctx context.Context) (*watch.Sample, error) {
		client, err := cs.Redis(ctx)
		if err != nil {
			return nil, err
		}
		o := lock.Defaults()
		o.Configure(locks, job, nil)
		o.URL, o.Now = redact.URL(url), now
		res, err := lock.Run(ctx, client, o)
		if err != nil {
			return nil, err
		}
		s := &watch.Sample{Report: res.Report(), LockFamilies: []watch.LockFamily{}}
		for _, fam := range res.Data.Families {
			s.LockFamilies = append(s.LockFamilies, watch.LockFamily{Template: fam.Template, Certainty: fam.Certainty, Keys: fam.Keys,
				NoTTL: fam.TTL.NoTTL, OutliersAbove: fam.TTL.OutliersAbove, OutliersBelow: fam.TTL.OutliersBelow})
		}
		for _, fam := range res.Data.Possible {
			s.LockFamilies = append(s.LockFamilies, watch.LockFamily{Template: fam.Template, Certainty: "possible", Keys: fam.Keys,
				NoTTL: fam.NoTTL})
		}
		return s, nil
	}
}

// dlqCheck is `dlq stats` on each DLQ, as `dlq stats --job` reads it.
func dlqCheck(url string, queues []string, now func() time.Time) func(context.Context) (*watch.Sample, error) {
	vhost := "/"
	if t, err := connect.ParseAMQP(url); err == nil {
		vhost = t.Vhost
	}
	return func(ctx context.Context) (*watch.Sample, error) {
		s := &watch.Sample{DLQ: []watch.DLQGroup{}}
		for _, q := range queues {
			st, err := dlqread.Stats(ctx, dlqread.Deps{
				// dlqread closes what it dials.
				Dial: func(ctx context.Context, role string) (*amqp.Connection, error) {
					return connect.AMQP(connect.WithAMQPName(ctx, "dupctl watch dlq "+role), url)
				},
				Now: now,
			}, dlqread.StatsOptions{Read: dlqread.Options{Queue: q}, Vhost: vhost})
			if err != nil {
				return nil, err
			}
			s.AddReport(st.Report())
			for _, g := range st.Groups {
				s.DLQ = append(s.DLQ, watch.DLQGroup{DLQ: q, Queue: g.Queue, Reason: g.Reason, Messages: int64(g.Messages)})
			}
		}
		return s, nil
	}
}

// storeCheck is `inspect store` as --job configures it (no table named:
// the tables that look like idempotency tables).
func storeCheck(cs *conns, job *config.Job, now func() time.Time) func(context.Context) (*watch.Sample, error) {
	return func(ctx context.Context) (*watch.Sample, error) {
		pool, err := cs.Postgres(ctx)
		if err != nil {
			return nil, err
		}
		o := store.Defaults()
		o.Configure(job, nil)
		o.Now = now()
		res, err := store.Run(ctx, pool, o)
		if err != nil {
			return nil, err
		}
		s := &watch.Sample{Report: res.Report(), Tables: []watch.TableState{}}
		for _, t := range res.Tables {
			ts := watch.TableState{Table: t.Table}
			if t.Stuck != nil {
				ts.StuckRows = t.Stuck.Rows
			}
			if t.Duplicates != nil {
				ts.DuplicateKeys = t.Duplicates.Groups
			}
			s.Tables = append(s.Tables, ts)
		}
		return s, nil
	}
}

// cacheCheck is `audit cache` on each job's status cache, as
// `audit cache --job` is configured.
func cacheCheck(cs *conns, jobs []config.Job) func(context.Context) (*watch.Sample, error) {
	return func(ctx context.Context) (*watch.Sample, error) {
		rdb, err := cs.Redis(ctx)
		if err != nil {
			return nil, err
		}
		pool, err := cs.Postgres(ctx)
		if err != nil {
			return nil, err
		}
		s := &watch.Sample{Cache: []watch.CacheClass{}}
		for _, j := range jobs {
			o := auditcache.Defaults()
			if err := o.Configure(&j, nil); err != nil {
				return nil, exitcode.InputError(err, "fix job "+j.Name+" in dupctl.yaml")
			}
			res, err := auditcache.Run(ctx, auditcache.Deps{Cache: rdb, DB: pool}, o)
			if err != nil {
				return nil, err
			}
			s.AddReport(res.Report())
			for _, c := range res.Classes {
				s.Cache = append(s.Cache, watch.CacheClass{Table: res.Table, Code: c.Code, Entries: c.Count})
			}
		}
		return s, nil
	}
}
