package makers

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// TestCatalogueSchema checks the embedded catalogue: it parses, every
// entry cites its source, and the libraries are all there.
func TestCatalogueSchema(t *testing.T) {
	es, err := ParseCatalogue(catalogueYAML)
	if err != nil {
		t.Fatal(err)
	}
	libs := map[string]bool{}
	for _, e := range es {
		libs[e.Maker] = true
		for _, s := range e.Sources {
			if !strings.Contains(s.Repo, "/") {
				t.Errorf("%s: source repo %q is not owner/name", e.ID, s.Repo)
			}
		}
		if e.Value.Describe == "" && e.Role != RoleQueue && e.Role != RoleMeta {
			t.Errorf("%s: value.describe says what the bytes are", e.ID)
		}
	}
	for _, m := range []string{"redisson", "spring-integration", "shedlock", "redsync", "redislock", "asynq", "bull", "bullmq",
		"sidekiq-unique-jobs", "activejob-uniqueness", "redis-objects", "python-redis-lock", "redis-py", "django-redis",
		"celery-once", "kombu", "pottery/redlock.net", "laravel", "symfony-lock", "redlock-php", "node-redlock",
		"redis-semaphore", "hangfire-redis", "distributedlock-redis", "kredis",
		"gocraft-work", "rmq", "redis_rate", "node-resque", "redis-lock", "node-redis-warlock", "bee-queue", "bottleneck",
		"rate-limit-redis", "rate-limiter-flexible"} {
		if !libs[m] {
			t.Errorf("no catalogue entry names %s", m)
		}
	}
}

func TestCatalogueRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field": "version: 1\nentries:\n  - {id: a, maker: a, library: a, role: lock, colour: red}\n",
		"bad role": "version: 1\nentries:\n  - {id: a, maker: a, library: a, role: boss, sources: [{repo: a/b, file: f, function: g}], " +
			"key: {match: '*'}, value: {type: string, format: any}, ttl: {behaviour: lease, match: any}}\n",
		"no source": "version: 1\nentries:\n  - {id: a, maker: a, library: a, role: lock, key: {match: '*'}, " +
			"value: {type: string, format: any}, ttl: {behaviour: lease, match: any}}\n",
		"bad format": "version: 1\nentries:\n  - {id: a, maker: a, library: a, role: lock, sources: [{repo: a/b, file: f, function: g}], " +
			"key: {match: '*'}, value: {type: string, format: nope}, ttl: {behaviour: lease, match: any}}\n",
		"format type": "version: 1\nentries:\n  - {id: a, maker: a, library: a, role: lock, sources: [{repo: a/b, file: f, function: g}], " +
			"key: {match: '*'}, value: {type: string, format: redisson-holders}, ttl: {behaviour: lease, match: any}}\n",
	} {
		if _, err := ParseCatalogue([]byte(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// catalogueFixtures are keys written byte for byte as each entry's cited
// source writes them (the integration tests add keys written by the
// libraries themselves: redsync and bsm/redislock in Go; node-redlock,
// redis-semaphore, BullMQ and Bull through npm).
var catalogueFixtures = []struct {
	entry string
	key   keyspace.Key
}{
	{"redisson-rlock", keyspace.Key{Key: "orders:42", Type: "hash", PTTL: 30000, Read: true,
		Fields: []string{"b9e7c2a4-5f1d-4c3e-8a2b-1d0e9f8a7b6c:57", "1"}}},
	{"redisson-rwlock", keyspace.Key{Key: "catalog:rw", Type: "hash", PTTL: 30000, Read: true,
		Fields: []string{"mode", "read", "b9e7c2a4-5f1d-4c3e-8a2b-1d0e9f8a7b6c:57", "2"}}},
	{"redisson-rwlock", keyspace.Key{Key: "catalog:rw", Type: "hash", PTTL: 30000, Read: true,
		Fields: []string{"mode", "write", "b9e7c2a4-5f1d-4c3e-8a2b-1d0e9f8a7b6c:57:write", "1"}}},
	{"redisson-rwlock-timeout", keyspace.Key{Key: "{catalog:rw}:b9e7c2a4-5f1d-4c3e-8a2b-1d0e9f8a7b6c:57:rwlock_timeout:1",
		Type: "string", PTTL: 30000, Read: true, Value: "1"}},
	{"redisson-fence", keyspace.Key{Key: "redisson_lock_token:{orders:42}", Type: "string", PTTL: -1, Read: true, Value: "17"}},
	{"redisson-fair-queue", keyspace.Key{Key: "redisson_lock_queue:{orders:42}", Type: "list", PTTL: -1}},
	{"redisson-semaphore", keyspace.Key{Key: "print-semaphore", Type: "string", PTTL: -1, Read: true, Value: "3"}},
	{"shedlock", keyspace.Key{Key: "job-lock:default:report", Type: "string", PTTL: 60000, Read: true,
		Value: "ADDED:2026-12-02T10:00:00.000Z@worker-1:3f0e8c1a-2b4d-4e6f-8a9b-0c1d2e3f4a5b"}},
	{"asynq-unique", keyspace.Key{Key: "asynq:{default}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6", Type: "string", PTTL: 3600000,
		Read: true, Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}},
	{"asynq-queue", keyspace.Key{Key: "asynq:{default}:pending", Type: "list", PTTL: -1}},
	{"redsync", keyspace.Key{Key: "mutex:invoice:1", Type: "string", PTTL: 8000, Read: true, Value: "MCiQIxzoyJVISKvLAwhztw=="}},
	{"redislock", keyspace.Key{Key: "reindex:tenant:1", Type: "string", PTTL: 8000, Read: true, Value: `Xk3_9aQ-zP1mN8bV2cL7wR{"pid":7}`}},
	{"bullmq-lock", keyspace.Key{Key: "bull:emails:42:lock", Type: "string", PTTL: 30000, Read: true,
		Value: "3b241101-e2bb-4255-8caf-4136c566a962:7"}},
	{"bull-lock", keyspace.Key{Key: "bull:emails:42:lock", Type: "string", PTTL: 30000, Read: true,
		Value: "3b241101-e2bb-4255-8caf-4136c566a962"}},
	{"bullmq-dedup", keyspace.Key{Key: "bull:emails:de:welcome-42", Type: "string", PTTL: -1, Read: true, Value: "42"}},
	{"bull-queue", keyspace.Key{Key: "bull:emails:stalled", Type: "set", PTTL: -1}},
	{"bull-queue", keyspace.Key{Key: "bull:emails:42", Type: "hash", PTTL: -1, Read: true,
		Fields: []string{"name", "welcome", "data", "{}"}}},
	{"node-redlock", keyspace.Key{Key: "invoice:7", Type: "string", PTTL: 5000, Read: true, Value: "3f5a9c0e1b2d4f6a8c0e2b4d6f8a0c1e"}},
	{"sidekiq-unique-jobs-locked", keyspace.Key{Key: "uniquejobs:9e107d9d372bb6826bd81d3542a419d6:LOCKED", Type: "hash", PTTL: -1,
		Read: true, Fields: []string{"2b9c7f6e5d4c3b2a19080706", "1764669600.123456"}}},
	{"sidekiq-unique-jobs-companion", keyspace.Key{Key: "uniquejobs:digests", Type: "zset", PTTL: -1, Read: true,
		Fields: []string{"uniquejobs:9e107d9d372bb6826bd81d3542a419d6", "1764669600.1"}}},
	{"sidekiq-queue", keyspace.Key{Key: "queue:default", Type: "list", PTTL: -1}},
	{"activejob-uniqueness", keyspace.Key{Key: "activejob_uniqueness:sync_order_job:4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a99", Type: "string",
		PTTL: 86400000, Read: true, Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}},
	{"redis-objects-lock", keyspace.Key{Key: "account:42:update_lock", Type: "string", PTTL: 1000, Read: true, Value: ""}},
	{"kredis-flag", keyspace.Key{Key: "person:42:processing", Type: "string", PTTL: 30000, Read: true, Value: "1"}},
	{"resque-prune-lock", keyspace.Key{Key: "resque:pruning_dead_workers_in_progress", Type: "string", PTTL: 60000, Read: true,
		Value: "worker-1:4312:critical,default"}},
	{"resque-scheduler-master-lock", keyspace.Key{Key: "resque:resque_scheduler_master_lock", Type: "string", PTTL: 180000, Read: true,
		Value: "ip-10-0-3-17.ec2.internal:5121"}},
	{"rack-attack", keyspace.Key{Key: "rack::attack:29940167:req/ip:10.0.0.20", Type: "string", PTTL: 61000, Read: true, Value: "1"}},
	{"sidekiq-queue", keyspace.Key{Key: "h|HardJob-17-10:43", Type: "string", PTTL: 28800000, Read: true,
		Value: "\x00\x00\x00\x00\x00\x00\x00\x05"}},
	{"nextcloud-file-lock", keyspace.Key{Key: "3b4f0c2e9a7d51e6c8f20a4d1b9e7c35/lockfiles/9e107d9d372bb6826bd81d3542a419d6", Type: "string",
		PTTL: 3600000, Read: true, Value: `"exclusive"`}},
	{"nextcloud-file-lock", keyspace.Key{Key: "3b4f0c2e9a7d51e6c8f20a4d1b9e7c35/lockfiles/e4d909c290d0fb1ca068ffaddf22cbd0", Type: "string",
		PTTL: 3600000, Read: true, Value: "2"}},
	{"phpredis-session-lock", keyspace.Key{Key: "PHPREDIS_SESSION:k3v0a9b1c2d3e4f5g6h7i8j9k0l1m2n3_LOCK", Type: "string", PTTL: 30000,
		Read: true, Value: "web-1|4312"}},
	{"horizon-lock", keyspace.Key{Key: "laravel_horizon:metrics:snapshot", Type: "string", PTTL: 270000, Read: true, Value: "1"}},
	{"horizon-lock", keyspace.Key{Key: "laravel_horizon:notification:9e107d9d372bb6826bd81d3542a419d6", Type: "string", PTTL: 300000,
		Read: true, Value: "1"}},
	{"python-redis-lock", keyspace.Key{Key: "lock:report", Type: "string", PTTL: 60000, Read: true, Value: "u/NJwtqJ8DmQ6Lx0oP3RkE+s"}},
	{"python-redis-lock-signal", keyspace.Key{Key: "lock-signal:report", Type: "list", PTTL: 900}},
	{"celery-once", keyspace.Key{Key: "qo_tasks.send_invoice_invoice_id-42", Type: "string", PTTL: 3600000, Read: true,
		Value: "5b0f3e0ab7d111ef9c3e0242ac120002"}},
	{"kombu-unacked-mutex", keyspace.Key{Key: "unacked_mutex", Type: "string", PTTL: 300000, Read: true,
		Value: "5b0f3e0ab7d111ef9c3e0242ac120002"}},
	{"kombu-queue", keyspace.Key{Key: "_kombu.binding.celery", Type: "set", PTTL: -1}},
	{"django-redis-lock", keyspace.Key{Key: ":1:import-products", Type: "string", PTTL: -1, Read: true,
		Value: "5b0f3e0ab7d111ef9c3e0242ac120002"}},
	{"redis-py-lock", keyspace.Key{Key: "resource:report", Type: "string", PTTL: 10000, Read: true,
		Value: "5b0f3e0ab7d111ef9c3e0242ac120002"}},
	{"pottery-or-redlock-net", keyspace.Key{Key: "redlock:printer", Type: "string", PTTL: 10000, Read: true,
		Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}},
	{"laravel-without-overlapping", keyspace.Key{Key: "laravel_database_laravel_cache_:laravel-queue-overlap:App\\Jobs\\SyncOrder:42",
		Type: "string", PTTL: -1, Read: true, Value: "Xq3LkP9aZ2mN7vBw"}},
	{"laravel-unique-job", keyspace.Key{Key: "laravel_database_laravel_cache_:laravel_unique_job:App\\Jobs\\SyncOrder:42",
		Type: "string", PTTL: 3600000, Read: true, Value: "Xq3LkP9aZ2mN7vBw"}},
	{"laravel-schedule-mutex",
		keyspace.Key{Key: "laravel_database_laravel_cache_:framework/schedule-3f786850e387550fdab836ed7e6dc881de23001b",
			Type: "string", PTTL: 86400000, Read: true, Value: "Xq3LkP9aZ2mN7vBw"}},
	{"laravel-cache-lock", keyspace.Key{Key: "laravel_database_laravel_cache_:import-products", Type: "string", PTTL: 10000, Read: true,
		Value: "Xq3LkP9aZ2mN7vBw"}},
	{"symfony-lock", keyspace.Key{Key: "pdf-report", Type: "zset", PTTL: 300000, Read: true,
		Fields: []string{"r0fQk0Yl7w6hY1n4c1Zq9J0bq1G3k3o2bV5n1w8t0Xk=", "1764669900000"}}},
	// Written by redis-semaphore 5.6.2 itself (testdata/npm/fixtures.js).
	{"redis-semaphore-mutex", keyspace.Key{Key: "mutex:payment:0", Type: "string", PTTL: 52264, Read: true,
		Value: "6b840175-b31b-496e-8056-9462c45a7c84"}},
	{"redis-semaphore-semaphore", keyspace.Key{Key: "semaphore:export", Type: "zset", PTTL: 52218, Read: true,
		Fields: []string{"95c37b46-cd2f-4736-9d7a-5ae85607902c", "1796307291056", "0faef084-1735-4e9e-abb2-801ee6a29bc5", "1796307291057"}}},
	{"redlock-php", keyspace.Key{Key: "my_resource_name", Type: "string", PTTL: 1000, Read: true, Value: "6752f1a3c9e41"}},
	{"hangfire-redis", keyspace.Key{Key: "{hangfire}:lock:recurring-jobs", Type: "string", PTTL: 30000, Read: true,
		Value: "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"}},
	{"hangfire-data", keyspace.Key{Key: "{hangfire}:job:42", Type: "hash", PTTL: -1, Read: true, Fields: []string{"Type", "X"}}},
	{"distributedlock-redis", keyspace.Key{Key: "invoice-run", Type: "string", PTTL: 30000, Read: true,
		Value: "web-01_4321_3f5a9c0e1b2d4f6a8c0e2b4d6f8a0c1e"}},
	{"distributedlock-redis-sets", keyspace.Key{Key: "gpu-slots", Type: "zset", PTTL: 30000, Read: true,
		Fields: []string{"web-01_4321_3f5a9c0e1b2d4f6a8c0e2b4d6f8a0c1e", "1764669900000"}}},
	{"distributedlock-redis-readers", keyspace.Key{Key: "catalog.readers", Type: "set", PTTL: 30000}},
	// Written by the libraries themselves (testdata/npm-heldout and
	// testdata/go-heldout of package lock); times are now's.
	{"gocraft-work-lock", keyspace.Key{Key: "shop-work:jobs:send_receipt:lock", Type: "string", PTTL: -1, Read: true, Value: "2"}},
	{"gocraft-work-lock-info", keyspace.Key{Key: "shop-work:jobs:send_receipt:lock_info", Type: "hash", PTTL: -1, Read: true,
		Fields: []string{"8ff0755d89b900d72d104681", "2"}}},
	{"gocraft-work-unique", keyspace.Key{Key: "shop-work:unique:export_report:{\"report_id\":0}\n", Type: "string", PTTL: 86400000,
		Read: true, Value: "1"}},
	{"gocraft-work-unique", keyspace.Key{Key: "shop-work:unique:rebuild_index:", Type: "string", PTTL: 86400000, Read: true, Value: "1"}},
	{"rmq-heartbeat", keyspace.Key{Key: "rmq::connection::thumbnailer-EsJWzV::heartbeat", Type: "string", PTTL: 60000, Read: true,
		Value: "1"}},
	{"rmq-queue", keyspace.Key{Key: "rmq::queue::[thumbnails]::ready", Type: "list", PTTL: -1}},
	{"redis-rate", keyspace.Key{Key: "rate:user:0", Type: "string", PTTL: 180000, Read: true, Value: "313181513.40363997"}},
	{"node-resque-joblock", keyspace.Key{Key: `resque:workerslock:rebuildIndex:search:["tenant-0"]`, Type: "string", PTTL: 3600000,
		Read: true, Value: strconv.FormatInt(time.Now().Unix()+3601, 10)}},
	{"node-resque-queuelock", keyspace.Key{Key: `resque:lock:sendInvoice:billing:[{"invoiceId":100}]`, Type: "string", PTTL: 3600000,
		Read: true, Value: strconv.FormatInt(time.Now().Unix()+3601, 10)}},
	// defunkt/resque-lock: SETNX "lock:#{name}-#{args.to_s}" true in the
	// resque namespace (Array#to_s of [42] is "[42]").
	{"resque-lock", keyspace.Key{Key: "resque:lock:UpdateNetworkGraph-[42]", Type: "string", PTTL: -1, Read: true, Value: "true"}},
	{"node-resque-leader", keyspace.Key{Key: "resque:resque_scheduler_leader_lock", Type: "string", PTTL: 180000, Read: true,
		Value: "worker-7:32000"}},
	{"node-resque-queue", keyspace.Key{Key: "resque:queue:billing", Type: "list", PTTL: -1}},
	{"redis-lock", keyspace.Key{Key: "lock.report-0", Type: "string", PTTL: 60000, Read: true,
		Value: strconv.FormatInt(time.Now().UnixMilli()+60001, 10)}},
	{"node-redis-warlock", keyspace.Key{Key: "export:1:lock", Type: "string", PTTL: 60000, Read: true, Value: "sRYSQPAREfGWOKOVqdoYpg=="}},
	{"bee-queue", keyspace.Key{Key: "bq:thumbnails:stallBlock", Type: "string", PTTL: 5000, Read: true, Value: "1"}},
	{"bottleneck", keyspace.Key{Key: "b_mail-api_job_weights", Type: "hash", PTTL: -1, Read: true,
		Fields: []string{"6c3d8f0e-0b1a-4d52-9a3e-7f1c2b4d5e6f", "1"}}},
	{"rate-limit-redis", keyspace.Key{Key: "rl:41", Type: "string", PTTL: 60000, Read: true, Value: "2"}},
	{"rate-limiter-flexible", keyspace.Key{Key: "rlflx:10.0.0.0", Type: "string", PTTL: 60000, Read: true, Value: "1"}},
}

func TestCatalogueFixtures(t *testing.T) {
	covered := map[string]bool{}
	for _, f := range catalogueFixtures {
		e, _ := Default.Match(&f.key)
		switch {
		case e == nil:
			t.Errorf("%s: %s matched no entry", f.entry, f.key.Key)
		case e.ID != f.entry:
			t.Errorf("%s: %s matched %s", f.entry, f.key.Key, e.ID)
		}
		covered[f.entry] = true
	}
	for _, e := range builtin {
		if !covered[e.ID] && !(e.Token.Shared && !e.Confirms) {
			t.Errorf("entry %s has no fixture", e.ID)
		}
	}
}

// TestCatalogueLeavesData checks that application data of the same
// shapes matches no entry.
func TestCatalogueLeavesData(t *testing.T) {
	for _, k := range []keyspace.Key{
		// a cart: {<product uuid>:<variant>: qty}, no TTL
		{Key: "cart:42", Type: "hash", PTTL: -1, Read: true, Fields: []string{"b9e7c2a4-5f1d-4c3e-8a2b-1d0e9f8a7b6c:3", "2"}},
		// an org cache, a courier offer, chat presence, a session
		{Key: "user:42:org", Type: "string", PTTL: 60000, Read: true, Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"},
		{Key: "presence:user:42", Type: "string", PTTL: 60000, Read: true, Value: "Xy3_kL9aB2cD4eF6gH8i"},
		{Key: "cache:etag:42", Type: "string", PTTL: 60000, Read: true, Value: "9e107d9d372bb6826bd81d3542a419d6"},
		{Key: "leaderboard:1", Type: "zset", PTTL: -1, Read: true, Fields: []string{"alice", "10"}},
		{Key: "stats:logins", Type: "string", PTTL: -1, Read: true, Value: "42"},
	} {
		if e, _ := Default.Match(&k); e != nil && e.Confirms && e.Role != RoleQueue && e.Role != RoleData {
			t.Errorf("%s matched %s", k.Key, e.ID)
		}
	}
}

// TestAnyFormatKeepsOwner: an entry that does not check its string value
// (format any) still hands it over as the owner, or every such lock read
// as one with an empty, constant owner (kombu's mutex, node-resque's
// leader).
func TestAnyFormatKeepsOwner(t *testing.T) {
	for _, k := range []keyspace.Key{
		{Key: "unacked_mutex", Type: "string", PTTL: 300000, Read: true, Value: "5b0f3e0ab7d111ef9c3e0242ac120002"},
		{Key: "resque:resque_scheduler_leader_lock", Type: "string", PTTL: 180000, Read: true, Value: "worker-7:32000"},
	} {
		if r := Default.Recognise(&k); r.Owner != k.Value {
			t.Errorf("%s: owner %q, want %q", k.Key, r.Owner, k.Value)
		}
	}
}
