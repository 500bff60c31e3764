package doctor

import (
	"context"
	"errors"
	"fmt"
	"time"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/doctor"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/keys"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/replay"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Which checklist line each capability's codes speak to, where a check
// covers several lines.
var lockItems = map[string]int{
	lock.RuleRandomKey.Code: 1,
}

// lockCheck is `inspect lock` on the job's lock pattern: items 1 (the
// key is a business key) and 3 (TTL, token).
func lockCheck(o *Options, j config.Job) doctor.Check {
	c := doctor.Check{Items: []int{1, 3}, Name: "inspect lock " + j.LockPattern, ItemOf: lockItems, Primary: 3}
	var patterns []string // none: every key (locks are found by shape)
	if j.LockPattern != "" {
		patterns = []string{j.LockPattern}
	} else {
		c.Name = "inspect lock (every lock-shaped key)"
	}
	if o.Factory.Global.RedisURL == "" {
		c.Skip = "no --redis-url"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		client, err := o.Factory.Redis(ctx)
		if err != nil {
			return nil, err
		}
		var maxTTL time.Duration
		if j.LockTTL > 0 {
			maxTTL = 10 * time.Duration(j.LockTTL)
		}
		res, err := lock.Run(ctx, client, lock.Options{Patterns: patterns, MaxTTL: maxTTL, URL: redact.URL(o.Factory.Global.RedisURL), Now: o.Factory.Now})
		if err != nil {
			return nil, err
		}
		if res.Data.Scan.Locks == 0 {
			return nil, &doctor.NothingError{Reason: fmt.Sprintf("no lock key found (%d keys scanned)", res.Data.Scan.KeysScanned)}
		}
		return res.Report(), nil
	}
	return c
}

// ttlCheck is `inspect ttl` on the job's measured durations against its
// lock TTL: item 4.
func ttlCheck(o *Options, j config.Job) doctor.Check {
	src := j.Durations.CSV
	if src == "" {
		src = "query"
	}
	c := doctor.Check{Items: []int{4}, Name: "inspect ttl of job " + j.Name + " (" + src + ")"}
	switch {
	case j.Durations.CSV == "" && j.Durations.Query == "":
		c.Skip = "no durations (csv or query) for job " + j.Name
	case j.Durations.CSV == "" && o.Factory.Global.DatabaseURL == "":
		c.Skip = "no --database-url for the durations query"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		to := ttl.Options{Format: ttl.FormatCSV, Query: j.Durations.Query,
			Collect: ttl.CollectOptions{TTLs: ttl.TTLs{Default: time.Duration(j.LockTTL), DefaultSource: "dupctl.yaml"}},
			Table:   ttl.TableOptions{DefaultType: j.Name}}
		if j.Durations.CSV != "" {
			to.Files, to.Query = []string{j.Durations.CSV}, ""
		}
		res, err := ttl.Run(ctx, ttl.Deps{Postgres: func(ctx context.Context) (ttl.Querier, error) {
			return o.Factory.Postgres(ctx, pgReadOnly())
		}}, to)
		switch {
		case errors.Is(err, ttl.ErrNoRuns):
			return nil, &doctor.NothingError{Reason: "no job durations in " + src}
		case err != nil:
			return nil, fmt.Errorf("job %s durations (fix durations in dupctl.yaml): %w", j.Name, err)
		}
		return res.Report(), nil
	}
	return c
}

// dlqCheck is `dlq stats` on the job's DLQ: item 5 (what should never
// have been retried), reading without consuming.
func dlqCheck(o *Options, j config.Job) doctor.Check {
	c := doctor.Check{Items: []int{5}, Name: "dlq stats " + j.DLQ}
	switch {
	case j.DLQ == "":
		c.Skip = "no dlq for job " + j.Name
	case o.Factory.Global.AMQPURL == "":
		c.Skip = "no --amqp-url"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		vhost := "/"
		if u, err := amqp.ParseURI(o.Factory.Global.AMQPURL); err == nil {
			vhost = u.Vhost
		}
		s, err := replay.Stats(ctx, replay.ReadDeps{
			Dial: func(ctx context.Context, role string) (*amqp.Connection, error) {
				return o.Factory.AMQP(connect.WithAMQPName(ctx, "doctor dlq "+role))
			},
			Now: o.Factory.Now,
		}, replay.StatsOptions{
			Read:  replay.ReadOptions{Queue: j.DLQ, Limit: 10_000, Window: 500, Idle: 2 * time.Second},
			Vhost: vhost, Analyzer: &replay.Analyzer{}, IdempotencyKeys: replay.DefaultIdempotencyFields,
		})
		if replay.IsNotFound(err) {
			// The topology check reports the missing DLQ itself.
			return nil, &doctor.NothingError{Reason: "the DLQ does not exist"}
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
func logsChecks(o *Options, j config.Job) []doctor.Check {
	audits := doctor.Check{Items: []int{1, 2, 3, 4, 8, 9}, ItemOf: logItems, Primary: 9, Name: "audit logs of job " + j.Name}
	keyCheck := doctor.Check{Items: []int{1}, Name: "keys unstable of job " + j.Name}
	if len(j.Logs.Paths) == 0 {
		audits.Skip = "no logs.paths for job " + j.Name
		keyCheck.Skip = audits.Skip
		return []doctor.Check{audits, keyCheck}
	}
	sources := func(ctx context.Context) ([]logs.Source, *logs.Mapping, error) {
		flags := cmdutil.LogFlags{}
		for k, v := range j.Logs.Fields {
			flags.Fields = append(flags.Fields, k+"="+v)
		}
		for k, phrases := range j.Logs.Events {
			for _, p := range phrases {
				flags.Events = append(flags.Events, k+"="+p)
			}
		}
		m, err := flags.Compile(nil)
		if err != nil {
			return nil, nil, err
		}
		srcs, err := o.Factory.LogSources(ctx, j.Logs.Paths)
		return srcs, m, err
	}
	audits.Run = func(ctx context.Context) (*findings.Report, error) {
		srcs, m, err := sources(ctx)
		if err != nil {
			return nil, err
		}
		res, err := auditlogs.Run(ctx, srcs, auditlogs.Options{Mapping: m})
		if err != nil {
			return nil, cmdutil.LogError(err)
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
			return nil, cmdutil.LogError(err)
		}
		return res.Report(), nil
	}
	return []doctor.Check{audits, keyCheck}
}

// pgReadOnly is the read-only session inspect store, audit cache and
// inspect ttl use, with their default timeouts.
func pgReadOnly() connect.PostgresOptions {
	return (&cmdutil.PostgresFlags{StatementTimeout: time.Minute, LockTimeout: 2 * time.Second}).ReadOnly()
}

// Store findings about a business key count against line 1; the rest are
// line 2 (a unique constraint or atomic operation at the source of truth).
var storeItems = map[string]int{
	store.RuleMultipleSucceeded.Code: 1,
}

// storeCheck is `inspect store` on the job's idempotency table, or on
// the tables that look like one when no job names a table: items 1, 2.
func storeCheck(o *Options, j config.Job) doctor.Check {
	idem := j.Idempotency
	name := "inspect store " + idem.Table
	if idem.Table == "" {
		name = "inspect store (tables that look like idempotency tables)"
	}
	c := doctor.Check{Items: []int{1, 2}, ItemOf: storeItems, Primary: 2, Name: name}
	if o.Factory.Global.DatabaseURL == "" {
		c.Skip = "no --database-url"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		pool, err := o.Factory.Postgres(ctx, pgReadOnly())
		if err != nil {
			return nil, err
		}
		res, err := store.Run(ctx, pool, store.Options{Table: idem.Table, KeyColumns: idem.KeyColumn, StatusColumn: idem.StatusColumn,
			BusinessColumns: idem.BusinessKeyColumn, Statuses: store.DefaultStatuses(), StuckAfter: store.DefaultStuckAfter, Samples: 5, Now: o.Factory.Now()})
		var in *problem.Input
		if idem.Table == "" && errors.As(err, &in) {
			// Discovery found nothing that looks like an idempotency
			// table: nothing to judge, not a failure to run.
			return nil, &doctor.NothingError{Reason: "no table looks like an idempotency table: name it in dupctl.yaml (jobs[].idempotency.table)"}
		}
		if err != nil {
			return nil, err
		}
		if len(res.Tables) == 0 {
			return nil, &doctor.NothingError{Reason: "no idempotency table found"}
		}
		return res.Report(), nil
	}
	return c
}

// cacheCheck is `audit cache` on the job's status cache against its
// idempotency table: item 8. Every key is taken as live (a redelivery
// can always come), as --assume-live does.
func cacheCheck(o *Options, j config.Job) doctor.Check {
	c := doctor.Check{Items: []int{8}, Name: "audit cache " + j.CachePattern}
	switch {
	case j.CachePattern == "":
		c.Skip = "no cache_pattern for job " + j.Name
	case j.Idempotency.Table == "":
		c.Skip = "no idempotency.table for job " + j.Name
	case o.Factory.Global.RedisURL == "" || o.Factory.Global.DatabaseURL == "":
		c.Skip = "needs --redis-url and --database-url"
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		pattern, err := auditcache.ParsePattern(j.CachePattern)
		if err != nil {
			return nil, exitcode.InputError(fmt.Errorf("job %s: cache_pattern: %w", j.Name, err), "fix dupctl.yaml")
		}
		dec, _ := auditcache.ParseDecoder("string")
		rdb, err := o.Factory.Redis(ctx)
		if err != nil {
			return nil, err
		}
		pool, err := o.Factory.Postgres(ctx, pgReadOnly())
		if err != nil {
			return nil, err
		}
		res, err := auditcache.Run(ctx, rdb, pool, auditcache.Options{Pattern: pattern, Decoder: dec, Table: j.Idempotency.Table,
			KeyColumn: j.Idempotency.KeyColumn, StatusColumn: j.Idempotency.StatusColumn, Statuses: store.DefaultStatuses(),
			AssumeLive: true, Batch: 1000, Lookup: auditcache.LookupAuto, Recheck: 2 * time.Second, Samples: 5})
		if err != nil {
			return nil, err
		}
		return res.Report(), nil
	}
	return c
}
