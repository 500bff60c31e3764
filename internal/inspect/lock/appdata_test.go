package lock_test

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestInspectAppDataOfOtherEcosystems seeds what Java, Ruby, Python and
// PHP frameworks keep in a production Redis - sessions, caches, job
// library internals, rate limiters, results - byte for byte as each
// framework's source writes them (cited per family), beside the few
// locks those frameworks take (Nextcloud's file locks, Horizon's,
// Resque's and its scheduler's, phpredis' session locks, RedBeat's,
// kombu's, and tokens wrapped by Spring's, Django's and Rails' cache
// serializers). With default
// settings no data family may be a confirmed or likely lock, none may
// get a warning or an error, and none may even be a possible lock; every
// lock family must be found.
func TestInspectAppDataOfOtherEcosystems(t *testing.T) {
	c := testenv.RedisDB(t)
	p := testenv.WordName("appdata")
	ctx := context.Background()
	now := time.Now()
	s := appSeeder{t: t, ctx: ctx, c: c}
	s.checkEncoders()

	locks := s.seedLocks(p) // template part -> its maker and problems
	s.seedSpring(p, now)
	s.seedSidekiq(p, now)
	s.seedResque(p, now)
	s.seedCelery(p, now)
	s.seedDjango(p, now)
	s.seedRails(p, now)
	s.seedLaravel(p, now)
	s.seedLimits(p)
	s.seedNextcloudCache(p)
	s.seedSymfony(p)
	s.seedRedisson(p, now)
	s.seedMore(p, now)

	res, err := lock.Run(ctx, c, lock.Options{All: true, Top: 100})
	if err != nil {
		t.Fatal(err)
	}
	d, rep := &res.Data, res.Report()
	isLock := func(tmpl string) string {
		for part := range locks {
			if strings.Contains(tmpl, part) {
				return part
			}
		}
		return ""
	}
	found := map[string]bool{}
	for _, f := range d.Families {
		part := isLock(f.Template)
		if part == "" {
			t.Errorf("application data %s (%d keys, e.g. %v) taken for a %s lock: confidence %.2f, makers %v, signals %v",
				f.Template, f.Keys, f.Examples, f.Certainty, f.Confidence, f.Makers, f.Signals)
			continue
		}
		found[part] = true
		want := locks[part]
		if f.Makers[want.maker] != f.Keys {
			t.Errorf("%s: makers %v, want all %d %s", f.Template, f.Makers, f.Keys, want.maker)
		}
		if !slices.Equal(f.Problems, want.problems) {
			t.Errorf("%s: problems %v, want %v", f.Template, f.Problems, want.problems)
		}
	}
	for _, f := range d.Possible {
		part := isLock(f.Template)
		if part == "" {
			t.Errorf("application data %s (%d keys, e.g. %v) is a possible lock family: signals %v", f.Template, f.Keys, f.Examples,
				f.Signals)
			continue
		}
		t.Errorf("lock family %s only possible (signals %v): its library is not recognised", f.Template, f.Signals)
		found[part] = true
	}
	for part, want := range locks {
		if !found[part] {
			var skipped []string
			for _, f := range d.Skipped {
				if strings.Contains(f.Template, part) {
					skipped = append(skipped, fmt.Sprintf("%s %v", f.Template, f.Reasons))
				}
			}
			t.Errorf("%s locks (%s) not found; skipped as %v", part, want.maker, skipped)
		}
	}
	// A lock of a library that records no owner is not reported for its
	// owner, not even in the per-key table.
	for _, l := range d.Locks {
		if want := locks[isLock(l.Family)]; !slices.Equal(l.Problems, want.problems) {
			t.Errorf("%s = %q: problems %v, want %v", l.Key, l.Owner, l.Problems, want.problems)
		}
	}
	for _, fi := range rep.Findings {
		if fi.Severity >= findings.Warn && isLock(fi.Subject) == "" {
			t.Errorf("%s %s about application data %s: %s", fi.Severity, fi.Code, fi.Subject, fi.Message)
		}
	}
	// Every data family is listed as skipped with what it is: never
	// "no lock signal", never a lock's companion (there is none here),
	// never a counter for a key that holds no number.
	for _, f := range d.Skipped {
		for why := range f.Reasons {
			if why == "no lock signal" || why == "lock companion, not a lock" || why == "a counter" && strings.HasPrefix(f.Template, "views/") {
				t.Errorf("skipped %s (%v, e.g. %v) for %q", f.Template, f.Types, f.Examples, why)
			}
		}
	}
}

// appSeeder writes the fixtures; every write must succeed.
type appSeeder struct {
	t   *testing.T
	ctx context.Context
	c   *redis.Client
}

func (s appSeeder) ok(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s appSeeder) set(k, v string, ttl time.Duration) {
	s.t.Helper()
	s.ok(s.c.Set(s.ctx, k, v, ttl).Err())
}

func (s appSeeder) hset(k string, ttl time.Duration, fv ...string) {
	s.t.Helper()
	args := make([]any, len(fv))
	for i, x := range fv {
		args[i] = x
	}
	s.ok(s.c.HSet(s.ctx, k, args...).Err())
	s.expire(k, ttl)
}

func (s appSeeder) expire(k string, ttl time.Duration) {
	s.t.Helper()
	if ttl > 0 {
		s.ok(s.c.Expire(s.ctx, k, ttl).Err())
	}
}

func (s appSeeder) sadd(k string, m ...string) {
	s.t.Helper()
	for _, x := range m {
		s.ok(s.c.SAdd(s.ctx, k, x).Err())
	}
}

func (s appSeeder) zadd(k string, score float64, m string) {
	s.t.Helper()
	s.ok(s.c.ZAdd(s.ctx, k, redis.Z{Score: score, Member: m}).Err())
}

func (s appSeeder) rpush(k string, m ...string) {
	s.t.Helper()
	for _, x := range m {
		s.ok(s.c.RPush(s.ctx, k, x).Err())
	}
}

// hexOf is a stable digest-shaped id for the i-th key of a family.
func hexOf(sum func([]byte) []byte, parts ...any) string {
	return hex.EncodeToString(sum([]byte(fmt.Sprint(parts...))))
}

func md5Hex(parts ...any) string {
	return hexOf(func(b []byte) []byte { h := md5.Sum(b); return h[:] }, parts...)
}

func sha1Hex(parts ...any) string {
	return hexOf(func(b []byte) []byte { h := sha1.Sum(b); return h[:] }, parts...)
}

// randomUUID is a version 4 UUID made from i (the bits a random one has).
func randomUUID(i int, salt string) string {
	h := md5.Sum([]byte(fmt.Sprint(salt, i)))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// alnum is a Str::random()-like string of n letters and digits.
func alnum(n, i int, salt string) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	out := make([]byte, n)
	h := md5.Sum([]byte(fmt.Sprint(salt, i)))
	for j := range out {
		if j%16 == 0 && j > 0 {
			h = md5.Sum(h[:])
		}
		out[j] = chars[int(h[j%16])%len(chars)]
	}
	return string(out)
}

// Java serialization (java.io.ObjectOutputStream, what Spring's
// JdkSerializationRedisSerializer writes): the stream header and class
// descriptors of java.lang.Long and java.lang.Integer, then the value.
const (
	jdkLongHead = "aced00057372000e6a6176612e6c616e672e4c6f6e673b8be490cc8f23df0200014a000576616c7565787200106a6176612e" +
		"6c616e672e4e756d62657286ac951d0b94e08b0200007870"
	jdkIntHead = "aced0005737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a61" +
		"76612e6c616e672e4e756d62657286ac951d0b94e08b0200007870"
)

func jdkLong(v int64) string {
	b, _ := hex.DecodeString(jdkLongHead)
	return string(binary.BigEndian.AppendUint64(b, uint64(v)))
}

func jdkInt(v int32) string {
	b, _ := hex.DecodeString(jdkIntHead)
	return string(binary.BigEndian.AppendUint32(b, uint32(v)))
}

// jdkString is TC_STRING: 0x74, a 2-byte length, modified UTF-8.
func jdkString(s string) string {
	return "\xac\xed\x00\x05\x74" + string(binary.BigEndian.AppendUint16(nil, uint16(len(s)))) + s
}

// pickle5 is pickle.dumps(x, 5) (Django's RedisSerializer uses
// pickle.HIGHEST_PROTOCOL) of a str or a dict of str, as CPython writes
// it: PROTO 5, one FRAME, SHORT_BINUNICODE strings each MEMOIZEd.
func pickle5(kv ...string) string {
	str := func(s string) string { return "\x8c" + string([]byte{byte(len(s))}) + s + "\x94" }
	var body string
	switch len(kv) {
	case 1:
		body = str(kv[0]) + "."
	case 2: // EMPTY_DICT, MEMOIZE, the pair, SETITEM
		body = "}\x94" + str(kv[0]) + str(kv[1]) + "s."
	default: // EMPTY_DICT, MEMOIZE, MARK, the pairs, SETITEMS
		body = "}\x94("
		for _, x := range kv {
			body += str(x)
		}
		body += "u."
	}
	return "\x80\x05\x95" + string(binary.LittleEndian.AppendUint64(nil, uint64(len(body)))) + body
}

// railsEntry is ActiveSupport::Cache::Coder#dump_compressed of a UTF-8
// String value (Rails 7.1+ cache format): the signature "\x00\x11", type
// 0x02, expires_at as a little-endian double (-1.0: none), the version
// length -1 (none), then the string itself.
func railsEntry(v string, expiresAt float64) string {
	b := []byte("\x00\x11\x02")
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(expiresAt))
	b = binary.LittleEndian.AppendUint32(b, 0xffffffff)
	return string(b) + v
}

// php is PHP's serialize() of a string.
func php(s string) string { return fmt.Sprintf("s:%d:\"%s\";", len(s), s) }

// checkEncoders compares the encoders with what the real serializers
// wrote for the same values (javac/java 17 ObjectOutputStream, CPython
// 3 pickle.dumps(..., 5)), so the fixtures are what frameworks store.
func (s appSeeder) checkEncoders() {
	for got, want := range map[string]string{
		jdkLong(1755430000000): jdkLongHead + "00000198b7c81580",
		jdkInt(1800):           jdkIntHead + "00000708",
		jdkString("admin"):     "aced000574000561646d696e",
		pickle5("a", "b"):      "8005950c000000000000007d948c0161948c016294732e",
		pickle5("8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"): "80059528000000000000008c2438643063356131652d336232612d346331642d39" +
			"6538662d306131623263336434653566942e",
	} {
		if hex.EncodeToString([]byte(got)) != want {
			s.t.Fatalf("encoder wrote %x, the real serializer %s", got, want)
		}
	}
}

// lockWant is what a lock family of these frameworks must be reported
// with: its maker, and its problems (its library's real ones only).
type lockWant struct {
	maker    string
	problems []string
}

// seedLocks writes the locks frameworks of these ecosystems take, and
// returns them by a part of their family's template.
func (s appSeeder) seedLocks(p string) map[string]lockWant {
	const n = 6
	// Nextcloud's Redis file locking (nextcloud/server
	// lib/private/Lock/MemcacheLockingProvider.php acquireLock: a shared
	// lock is memcache->inc($path), an exclusive one cas($path, 0,
	// 'exclusive'), then setTTL($path) with filelocking.ttl, 3600 s by
	// default; lib/private/Memcache/Redis.php json_encode()s what is not
	// an int, so an exclusive lock holds "exclusive" with its quotes;
	// the path is 'files/' . md5($storageId . '::' . $path)
	// (lib/private/Files/Storage/Common.php acquireLock) under the
	// locking cache's prefix hash('xxh128', <version>) . '/' . 'lock'
	// (lib/private/Memcache/Factory.php createLocking,
	// lib/private/Server.php createLocking('lock')).
	ncPrefix := md5Hex(p, "nextcloud")
	for i := range n {
		v := []string{"1", "2", `"exclusive"`}[i%3]
		s.set(ncPrefix+"/lockfiles/"+md5Hex("home::"+p, "::files/report-", i, ".pdf"), v, time.Hour)
	}
	// Laravel Horizon's Lock (laravel/horizon src/Lock.php get: SETNX
	// $key 1, then EXPIRE $seconds) on its own connection, prefixed
	// <app>_horizon: (config/horizon.php prefix): the snapshot lock
	// (src/Console/SnapshotCommand.php, snapshot_lock 300 - 30 s), the
	// wait-time monitor's (src/Repositories/RedisMetricsRepository.php
	// acquireWaitTimeMonitorLock, 60 s) and one per notification
	// (src/Listeners/SendNotification.php, 'notification:' .
	// signature(), md5 of connection and queue, 300 s).
	s.set(p+"_horizon:metrics:snapshot", "1", 270*time.Second)
	s.set(p+"_horizon:monitor:time-to-clear", "1", 60*time.Second)
	for i := range n {
		s.set(p+"_horizon:notification:"+md5Hex("redis", "queue-", i), "1", 300*time.Second)
	}
	// Resque's dead-worker pruning lock (resque/resque
	// lib/resque/data_store.rb acquire_pruning_dead_worker_lock: SET
	// "pruning_dead_workers_in_progress" worker.to_s EX
	// heartbeat_interval NX, 60 s; worker.to_s is host:pid:queues) under
	// the resque namespace (lib/resque.rb redis=, Redis::Namespace).
	s.set("resque:pruning_dead_workers_in_progress", p+"-worker-0:4312:critical,default", 60*time.Second)
	// resque-scheduler's master lock (resque/resque-scheduler
	// lib/resque/scheduler/locking.rb master_lock_key,
	// lock/resilient.rb acquire: SETNX key value, EXPIRE lock_timeout,
	// 180 s by default; lock/base.rb value: hostname:pid).
	s.set("resque:resque_scheduler_master_lock", "ip-10-0-3-17.ec2.internal:5121", 180*time.Second)
	// RedBeat's beat lock (sibson/redbeat redbeat/schedulers.py
	// acquire_distributed_beat_lock: redis-py's Lock on lock_key
	// 'redbeat::lock', timeout max_interval * 5, token uuid1().hex).
	s.set("redbeat::lock", "5b0f3e0ab7d111ef9c3e0242ac120002", 1500*time.Second)
	// kombu's unacked restore mutex (celery/kombu
	// kombu/transport/redis.py Channel.unacked_mutex_key, Mutex:
	// redis-py Lock, unacked_mutex_expire 300 s).
	s.set("unacked_mutex", "6c1a7f2eb7d111ef9c3e0242ac120002", 300*time.Second)
	// phpredis' session locking (phpredis/phpredis redis_session.c
	// lock_acquire: SET <session key>_LOCK "<hostname>|<pid>" NX PX
	// lock_expire, max_execution_time (30 s) by default; lock_release:
	// the compare-and-delete script). A PHP session id is 32 characters
	// of [0-9a-v] (session.sid_length, sid_bits_per_character 5).
	for i := range n {
		s.set("PHPREDIS_SESSION:"+phpSessionID(p, i)+"_LOCK", fmt.Sprintf("%s-php-fpm-%d|%d", p, i%2, 210+i), 30*time.Second)
	}
	// Locks whose token the client wraps in its serializer. Spring Data
	// Redis' RedisTemplate without serializers set JDK-serializes keys
	// and values (RedisTemplate.afterPropertiesSet); opsForValue()
	// .setIfAbsent(key, UUID.randomUUID().toString(), 30, SECONDS) is SET
	// NX EX.
	for i := range n {
		s.set(jdkString(fmt.Sprintf("%s:lock:order:%d", p, i)), jdkString(randomUUID(i, "template-lock")), 30*time.Second)
	}
	// Celery's task cookbook lock through Django's cache
	// (celery/celery docs/tutorials/task-cookbook.rst memcache_lock:
	// cache.add('<task name>-lock-<md5 of the feed url>', self.app.oid,
	// LOCK_EXPIRE = 600); app.oid is kombu.common.oid_from, a UUID per
	// process; Django pickles it).
	for i := range n {
		s.set(fmt.Sprintf(":1:%s.tasks.import_feed-lock-%s", p, md5Hex("https://news.example/", i, ".rss")),
			pickle5(randomUUID(i, "oid")), 600*time.Second)
	}
	// Rails.cache.write(key, SecureRandom.uuid, unless_exist: true,
	// expires_in: 30.seconds): RedisCacheStore#write_serialized_entry
	// SETs the cache entry NX PX (activesupport
	// lib/active_support/cache/redis_cache_store.rb).
	for i := range n {
		s.set(fmt.Sprintf("%s:lock:invoice:%d", p, i), railsEntry(randomUUID(i, "rails-lock"), float64(time.Now().Unix()+30)),
			30*time.Second)
	}
	none := []string{}
	return map[string]lockWant{
		"/lockfiles/": {"nextcloud", none}, "_horizon:metrics:snapshot": {"horizon", none},
		"_horizon:monitor:time-to-clear": {"horizon", none}, "_horizon:notification:": {"horizon", none},
		"pruning_dead_workers_in_progress": {"resque", none}, "redbeat::lock": {"redis-py", none}, "unacked_mutex": {"kombu", none},
		// resque-scheduler's owner is hostname:pid: its documented problem.
		"resque_scheduler_master_lock": {"resque-scheduler", []string{"LOCK_TOKEN_HOST"}},
		"PHPREDIS_SESSION:":            {"phpredis", []string{"LOCK_TOKEN_HOST"}},
		// Found by their name and their token inside its wrapping.
		":lock:order:": {"set-nx-px", none}, "import_feed-lock-": {"set-nx-px", none}, ":lock:invoice:": {"set-nx-px", none},
	}
}

// seedSpring writes Spring Session's indexed repository and Spring
// Cache entries.
func (s appSeeder) seedSpring(p string, now time.Time) {
	ms := now.UnixMilli()
	for i := range 6 {
		id := randomUUID(i, p+"session")
		// spring-projects/spring-session RedisIndexedSessionRepository
		// (class comment, RedisSession.saveDelta): the session hash
		// (field names by StringRedisSerializer, values by
		// JdkSerializationRedisSerializer) with maxInactiveInterval +
		// 5 min, the expires key APPENDed "" with maxInactiveInterval,
		// and the minute's expirations set.
		s.hset("spring:session:sessions:"+id, 2100*time.Second,
			"creationTime", jdkLong(ms-int64(i)*60_000), "lastAccessedTime", jdkLong(ms), "maxInactiveInterval", jdkInt(1800),
			"sessionAttr:username", jdkString(fmt.Sprintf("%s-user-%d", p, i)),
			"sessionAttr:SPRING_SECURITY_SAVED_REQUEST", jdkString("https://shop.example/checkout?step=2"))
		s.ok(s.c.Append(s.ctx, "spring:session:sessions:expires:"+id, "").Err())
		s.expire("spring:session:sessions:expires:"+id, 1800*time.Second)
		exp := (ms/60_000 + 31 + int64(i)) * 60_000
		s.sadd(fmt.Sprintf("spring:session:expirations:%d", exp), jdkString("expires:"+id))
		s.expire(fmt.Sprintf("spring:session:expirations:%d", exp), 2100*time.Second)
		// FindByIndexNameSessionRepository's principal index (a set).
		s.sadd("spring:session:index:org.springframework.session.FindByIndexNameSessionRepository.PRINCIPAL_NAME_INDEX_NAME:"+
			fmt.Sprintf("%s-user-%d", p, i), jdkString(id))
		// spring-projects/spring-data-redis CacheKeyPrefix.simple():
		// <cacheName>::<key>; RedisCacheConfiguration's default value
		// serializer is JDK serialization, no TTL; a TTL when
		// entryTtl is set. A @Cacheable String (a courier's id per
		// order, 60 s) and Long (a price in cents).
		// (CacheKeyPrefix.prefixed(p + ":"): spring.cache.redis.key-prefix.)
		s.set(fmt.Sprintf("%s:couriers::%d", p, 1000+i), jdkString(randomUUID(i, "courier")), time.Minute)
		s.set(fmt.Sprintf("%s:prices::SKU-%d", p, 4000+i), jdkLong(int64(1999+i)), 0)
		s.set(fmt.Sprintf("couriersByZone::%d", 10+i), jdkString(randomUUID(i, "zone")), 5*time.Minute)
		// GenericJackson2JsonRedisSerializer: a String is a JSON
		// string, quotes included; an object carries "@class".
		s.set(fmt.Sprintf("%s:apiTokens::%d", p, i), `"`+alnum(32, i, "tok")+`"`, 10*time.Minute)
		s.set(fmt.Sprintf("%s:users::%d", p, i), fmt.Sprintf(`{"@class":"com.example.User","id":%d,"email":"u%d@example.com"}`, i, i),
			time.Hour)
	}
}

// seedSidekiq writes Sidekiq 7's own keys (sidekiq/sidekiq
// lib/sidekiq/launcher.rb ❤ and flush_stats, component.rb identity and
// tid, metrics/tracking.rb flush, metrics/shared.rb Histogram#persist,
// api.rb).
func (s appSeeder) seedSidekiq(p string, now time.Time) {
	sec := now.Unix()
	for i := range 6 {
		// identity: "#{hostname}:#{pid}:#{process_nonce}",
		// SecureRandom.hex(6); the process hash expires in 60 s.
		id := fmt.Sprintf("%s-sidekiq-7d9f8c6b5-%05d:%d:%s", p, i, 7+i, md5Hex(p, i)[:12])
		s.sadd("processes", id)
		info := fmt.Sprintf(`{"hostname":"%s-sidekiq-7d9f8c6b5-%05d","started_at":%d.1234,"pid":%d,"tag":"app","capsules":{"default":`+
			`{"concurrency":5,"mode":"weighted","weights":{"default":1}}},"queues":["default"],"weights":[{"default":1}],"labels":[],`+
			`"identity":"%s","version":"7.3.9","embedded":false}`, p, i, sec-3600, 7+i, id)
		s.hset(id, 60*time.Second, "info", info, "concurrency", "5", "busy", "1", "beat", fmt.Sprintf("%d.%d", sec, 4321+i),
			"rtt_us", fmt.Sprint(212+i), "quiet", "false", "rss", fmt.Sprint(183204+i))
		jid := md5Hex(p, "jid", i)[:24]
		job := fmt.Sprintf(`{"retry":true,"queue":"default","args":[%d],"class":"HardJob","jid":"%s","created_at":%d.5,"enqueued_at":%d.6}`,
			i, jid, sec, sec)
		// :work holds tid => {"queue","payload","run_at"} for 60 s;
		// tid is (object_id ^ pid).to_s(36).
		s.hset(id+":work", 60*time.Second, fmt.Sprintf("%x", 0x2c9a+i), fmt.Sprintf(`{"queue":"default","payload":%q,"run_at":%d}`, job, sec))
		s.rpush("queue:default", job)
		s.zadd("schedule", float64(sec+600), job)
		s.zadd("retry", float64(sec+30), job)
		s.zadd("dead", float64(sec-86400), job)
		day := now.AddDate(0, 0, -i).UTC().Format("2006-01-02")
		s.set("stat:processed:"+day, fmt.Sprint(10452+i), 5*365*24*time.Hour)
		s.set("stat:failed:"+day, fmt.Sprint(3+i), 5*365*24*time.Hour)
		m := now.Add(-time.Duration(i) * time.Minute).UTC()
		s.hset("j|"+m.Format("060102|")+fmt.Sprintf("%d:%02d", m.Hour(), m.Minute()), 8*time.Hour,
			"HardJob|ms", fmt.Sprint(1830+i), "HardJob|p", fmt.Sprint(12+i), "HardJob|f", "1")
		// BITFIELD u16 counters per klass per minute, 8 h.
		hk := fmt.Sprintf("h|HardJob-%d-%d:%d", m.Day(), m.Hour(), m.Minute())
		s.ok(s.c.Do(s.ctx, "BITFIELD", hk, "OVERFLOW", "SAT", "INCRBY", "u16", "#3", fmt.Sprint(5+i), "INCRBY", "u16", "#7", "2").Err())
		s.expire(hk, 8*time.Hour)
	}
	s.set("stat:processed", "1834502", 0)
	s.set("stat:failed", "2231", 0)
	s.sadd("queues", "default", "mailers")
}

// seedResque writes Resque's keys under its resque namespace
// (resque/resque lib/resque/data_store.rb, worker.rb working_on, to_s).
func (s appSeeder) seedResque(p string, now time.Time) {
	for i := range 6 {
		w := fmt.Sprintf("%s-worker-%d:%d:critical,default", p, i, 4312+i)
		s.sadd("resque:workers", w)
		s.set("resque:worker:"+w, fmt.Sprintf(`{"queue":"default","run_at":"%s","payload":{"class":"ArchiveJob","args":[%d]}}`,
			now.UTC().Format(time.RFC3339), 900+i), 0)
		s.set("resque:worker:"+w+":started", now.Add(-time.Hour).Format("2006-01-02 15:04:05 -0700"), 0)
		s.hset("resque:workers:heartbeat", 0, w, now.UTC().Format(time.RFC3339))
		s.set("resque:stat:processed:"+w, fmt.Sprint(120+i), 0)
		s.rpush("resque:queue:default", fmt.Sprintf(`{"class":"ArchiveJob","args":[%d]}`, i))
		// resque-scheduler: delayed_queue_schedule (zset), delayed:<ts>
		// (lists) - lib/resque/scheduler/delaying_jobs.rb.
		ts := now.Unix() + 3600 + int64(i)
		s.zadd("resque:delayed_queue_schedule", float64(ts), fmt.Sprint(ts))
		s.rpush(fmt.Sprint("resque:delayed:", ts), fmt.Sprintf(`{"class":"ReminderJob","args":[%d],"queue":"default"}`, i))
	}
	s.set("resque:stat:processed", "88213", 0)
	s.set("resque:stat:failed", "17", 0)
	s.sadd("resque:queues", "default", "critical")
}

// seedCelery writes Celery's result backend and kombu's transport keys,
// and RedBeat's schedule.
func (s appSeeder) seedCelery(p string, now time.Time) {
	for i := range 6 {
		id := randomUUID(i, p+"task")
		// celery/celery celery/backends/base.py _get_result_meta,
		// KeyValueStoreBackend.task_keyprefix 'celery-task-meta-';
		// redis.py set: SETEX result_expires (1 day); json.dumps.
		st := []string{"SUCCESS", "FAILURE", "SUCCESS"}[i%3]
		s.set("celery-task-meta-"+id, fmt.Sprintf(`{"status": "%s", "result": %d, "traceback": null, "children": [], `+
			`"date_done": "%s", "task_id": "%s"}`, st, 42+i, now.UTC().Format("2006-01-02T15:04:05.000000+00:00"), id), 24*time.Hour)
		// The chord counter: INCR celery-taskset-meta-<group>.t, then
		// EXPIRE (redis.py on_chord_part_return).
		s.set("celery-taskset-meta-"+randomUUID(i, p+"group")+".t", fmt.Sprint(3+i), 24*time.Hour)
		// RedBeat (sibson/redbeat schedulers.py RedBeatSchedulerEntry
		// save: HSET key definition/meta JSON, ZADD redbeat::schedule).
		task := fmt.Sprintf("redbeat:%s.tasks.report_%d", p, i)
		s.hset(task, 0, "definition", fmt.Sprintf(`{"name": "%s.tasks.report_%d", "task": "%s.tasks.report", "args": [%d], "kwargs": {}, `+
			`"options": {}, "schedule": {"__type__": "interval", "every": 300.0, "relative": false}, "enabled": true}`, p, i, p, i),
			"meta", fmt.Sprintf(`{"last_run_at": {"__type__": "datetime", "year": 2026, "month": 8, "day": 17, "hour": 10, "minute": %d, `+
				`"second": 0, "microsecond": 0, "timezone": null}, "total_run_count": %d}`, i, 310+i))
		s.zadd("redbeat::schedule", float64(now.Unix()+300), task)
	}
	// kombu/transport/redis.py: bindings (sep "\x06\x16"), the default
	// queue, unacked and its index.
	s.sadd("_kombu.binding.celery", "celery\x06\x16\x06\x16celery")
	s.sadd("_kombu.binding.celery.pidbox", "\x06\x16\x06\x16"+p+"@worker-1.celery.pidbox")
	s.rpush("celery", `{"body": "W1s0Ml0sIHt9LCB7fV0=", "content-encoding": "utf-8", "content-type": "application/json", "headers": {}}`)
}

// seedDjango writes Django's Redis cache backend entries and its cached
// sessions (django/django django/core/cache/backends/redis.py
// RedisSerializer.dumps: ints as they are, anything else
// pickle.dumps(obj, HIGHEST_PROTOCOL); base.py default_key_func
// '%s:%s:%s' % (KEY_PREFIX ”, VERSION 1, key);
// django/contrib/sessions/backends/cache.py KEY_PREFIX
// "django.contrib.sessions.cache" + a 32-character session key).
func (s appSeeder) seedDjango(p string, now time.Time) {
	for i := range 6 {
		sk := strings.ToLower(alnum(32, i, p+"dj"))
		s.set(":1:django.contrib.sessions.cache"+sk, pickle5("_auth_user_id", fmt.Sprint(40+i), "_auth_user_backend",
			"django.contrib.auth.backends.ModelBackend", "_auth_user_hash", sha1Hex(p, i)+sha1Hex(i)[:24]), 1209600*time.Second)
		// A pickled str: the courier assigned to an order, for 60 s.
		s.set(fmt.Sprintf(":1:%s:order:%d:courier", p, 500+i), pickle5(randomUUID(i, "dj-courier")), time.Minute)
		s.set(fmt.Sprintf(":1:%s:views:article:%d", p, i), fmt.Sprint(812+i*7), 0)
		s.set(fmt.Sprintf(":1:%s:otp:%d", p, i), pickle5(fmt.Sprintf("%06d", 318204+i)), 5*time.Minute)
	}
}

// seedRails writes Rails' RedisCacheStore entries in the 7.1 cache
// format (rails/rails activesupport/lib/active_support/cache/coder.rb
// dump_compressed; fragment keys "views/<template>:<digest>/<record
// cache_key_with_version>"), and Rack::Attack's counters
// (rack/rack-attack lib/rack/attack/cache.rb key_and_expiry, do_count:
// "rack::attack:<epoch / period>:<name>:<discriminator>", increment
// with expires_in; RedisCacheStore#increment stores the bare integer).
func (s appSeeder) seedRails(p string, now time.Time) {
	exp := float64(now.Add(10*time.Minute).Unix()) + 0.25
	for i := range 6 {
		s.set(fmt.Sprintf("views/%s/products/_product:%s/products/%d-20260817104300123456", p, md5Hex("tpl"), 40+i),
			railsEntry(fmt.Sprintf(`<li class="product"><a href="/products/%d">Lamp %d</a> <span>$%d.99</span></li>`, 40+i, i, 19+i), -1), 0)
		s.set(fmt.Sprintf("%s/exchange_rate/usd/%d", p, i), railsEntry(fmt.Sprintf("1.08%d", 30+i), exp), 10*time.Minute)
		s.set(fmt.Sprintf("%s/assigned_driver/%d", p, 70+i), railsEntry(randomUUID(i, "driver"), exp), 10*time.Minute)
		// expires_in: the rest of the period, plus a second.
		expires := func(period int64) time.Duration { return time.Duration(period-now.Unix()%period+1) * time.Second }
		s.set(fmt.Sprintf("rack::attack:%d:req/ip:10.0.%d.%d", now.Unix()/60, i, 20+i), fmt.Sprint(1+i%2), expires(60))
		s.set(fmt.Sprintf("rack::attack:%d:logins/email:u%d@example.com", now.Unix()/20, i), "1", expires(20))
	}
}

// seedLaravel writes what a Laravel app named p keeps: its cache store's
// rate limiter counters and timers, cached sessions and cache entries,
// and Horizon's data (the Horizon locks are in seedLocks).
func (s appSeeder) seedLaravel(p string, now time.Time) {
	// laravel/framework config/database.php redis prefix
	// <app>_database_, config/cache.php prefix <app>_cache_,
	// Cache/RedisStore.php setPrefix (prefix . ':'), serialize (numbers
	// as they are, anything else serialize()).
	pre := p + "_database_" + p + "_cache_:"
	for i := range 6 {
		// Cache/RateLimiter.php increment: add($key.':timer',
		// availableAt($decaySeconds)), add($key, 0), increment($key);
		// Routing/Middleware/ThrottleRequests.php
		// resolveRequestSignature: sha1 of the user id or domain|ip.
		k := pre + sha1Hex("|10.0.0.", i)
		s.set(k+":timer", fmt.Sprint(now.Unix()+60), 60*time.Second)
		s.set(k, fmt.Sprint(1+i), 60*time.Second)
		// Session/CacheBasedSessionHandler.php write: put($sessionId,
		// $data) - the serialized session, serialized again - for
		// lifetime (120 min); the id is Str::random(40).
		sess := fmt.Sprintf(`a:3:{s:6:"_token";s:40:"%s";s:9:"_previous";a:1:{s:3:"url";s:27:"https://shop.example/cart/%d";}`+
			`s:6:"_flash";a:2:{s:3:"old";a:0:{}s:3:"new";a:0:{}}}`, alnum(40, i, "csrf"), 10+i)
		s.set(pre+alnum(40, i, p+"sess"), php(sess), 120*time.Minute)
		s.set(fmt.Sprintf("%sfeature.beta.%d", pre, i), "b:1;", 10*time.Minute)
		s.set(fmt.Sprintf("%ssettings.%d", pre, i), fmt.Sprintf(`a:2:{s:5:"theme";s:4:"dark";s:5:"limit";i:%d;}`, 20+i), 0)
		// laravel/horizon src/Repositories/RedisJobRepository.php
		// pushed: a hash per job id, expiring after the pending
		// retention; RedisSupervisorRepository.php update: a 30 s hash.
		jid := randomUUID(i, p+"horizon")
		s.hset(p+"_horizon:"+jid, time.Hour, "id", jid, "connection", "redis", "queue", "default", "name", `App\Jobs\SendInvoice`,
			"status", "pending", "payload",
			fmt.Sprintf(`{"uuid":"%s","displayName":"App\\Jobs\\SendInvoice","job":"Illuminate\\Queue\\CallQueuedHandler@call"}`, jid),
			"created_at", fmt.Sprintf("%d.%04d", now.Unix(), 1000+i), "updated_at", fmt.Sprintf("%d.%04d", now.Unix(), 1000+i))
		s.zadd(p+"_horizon:recent_jobs", -float64(i), jid)
		sup := fmt.Sprintf("%s-web-%d-%s:supervisor-1", p, i, alnum(4, i, "sup"))
		s.hset(p+"_horizon:supervisor:"+sup, 30*time.Second, "name", sup, "master", strings.TrimSuffix(sup, ":supervisor-1"),
			"pid", fmt.Sprint(2100+i), "status", "running", "processes", `{"redis:default":3}`, "options", `{"queue":"default","balance":"auto"}`)
	}
	s.hset(p+"_horizon:job:App\\Jobs\\SendInvoice", 0, "throughput", "1203", "runtime", "48.12")
	s.sadd(p+"_horizon:measured_jobs", `App\Jobs\SendInvoice`)
}

// seedLimits writes Flask-Limiter's storage, the limits package
// (alisaifee/limits limits/limits.py RateLimitItem.key_for:
// "LIMITER/<identifiers>/<amount>/<multiples>/<granularity>";
// limits/storage/redis.py prefixed_key "LIMITS:" + key, incr_expire.lua
// INCRBY + EXPIRE for the fixed window; the sliding window counter's
// keys are "{key}" and "{key}/-1").
func (s appSeeder) seedLimits(p string) {
	for i := range 6 {
		ip := fmt.Sprintf("10.1.%d.%d", i, 7+i)
		s.set(fmt.Sprintf("LIMITS:LIMITER/%s/%s.api_orders/100/1/minute", ip, p), fmt.Sprint(1+i%3), time.Minute)
		s.set(fmt.Sprintf("LIMITS:{LIMITER/%s/%s.login/5/1/minute}", ip, p), "1", 2*time.Minute)
		s.set(fmt.Sprintf("LIMITS:{LIMITER/%s/%s.login/5/1/minute}/-1", ip, p), fmt.Sprint(2+i%3), time.Minute)
		// The moving window: a list of hit times (acquire_moving_window.lua).
		s.rpush(fmt.Sprintf("LIMITS:LIMITER/%s/%s.search/10/1/second", ip, p), fmt.Sprint(1755430000+i))
	}
}

// seedNextcloudCache writes Nextcloud's distributed cache next to its
// file locks (lib/private/Memcache/Redis.php set: json_encode($value)
// under the factory's prefix hash . '/' . <cache name>).
func (s appSeeder) seedNextcloudCache(p string) {
	pre := md5Hex(p, "nextcloud") + "/"
	for i := range 6 {
		s.set(fmt.Sprintf("%simagePath%s-core-img-%d", pre, p, i), fmt.Sprintf(`"\/core\/img\/filetypes\/x-%d.svg"`, i), 24*time.Hour)
		s.set(fmt.Sprintf("%sfile_locks_ocs%d", pre, i), fmt.Sprintf(`{"user":"%s-%d","etag":"%s"}`, p, i, md5Hex(i)[:13]), time.Hour)
	}
}

// seedSymfony writes a Symfony cache pool (symfony/cache
// Adapter/AbstractAdapter.php: namespace . ':' . key;
// Marshaller/DefaultMarshaller.php marshall: serialize();
// Traits/RedisTrait.php doSave: SETEX lifetime, or SET).
func (s appSeeder) seedSymfony(p string) {
	for i := range 6 {
		s.set(fmt.Sprintf("%s:product_stock_%d", p, i), fmt.Sprintf("i:%d;", 3+i), 5*time.Minute)
		s.set(fmt.Sprintf("%s:feature_enabled_%d", p, i), "b:1;", time.Minute)
		s.set(fmt.Sprintf("%s:oauth_state_%d", p, i), php(alnum(40, i, "state")), 5*time.Minute)
		s.set(fmt.Sprintf("%s:profile_%d", p, i), fmt.Sprintf(`O:8:"stdClass":2:{s:2:"id";i:%d;s:4:"name";s:5:"Alice";}`, i), time.Hour)
	}
}

// seedRedisson writes a Redisson RMapCache - a Hibernate second-level
// cache region or an application cache - with JsonJacksonCodec
// (redisson/redisson RedissonMapCache: the hash, and
// redisson__timeout__set:{name} / redisson__idle__set:{name} scored by
// expiry; values packed struct.pack('dLc0', maxIdleDelta, len, value)).
func (s appSeeder) seedRedisson(p string, now time.Time) {
	for i := range 6 {
		name := fmt.Sprintf("com.%s.domain.Customer%d", p, i)
		hdr := binary.LittleEndian.AppendUint64(nil, math.Float64bits(0))
		v := fmt.Sprintf(`{"@class":"com.%s.domain.Customer","id":%d,"email":"c%d@example.com"}`, p, i, i)
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(v)))
		s.hset(name, 0, fmt.Sprintf(`"%d"`, 100+i), string(hdr)+v)
		s.zadd("redisson__timeout__set:{"+name+"}", float64(now.Add(time.Hour).UnixMilli()), fmt.Sprintf(`"%d"`, 100+i))
	}
}

// phpSessionID is a PHP session id: 32 characters of [0-9a-v].
func phpSessionID(p string, i int) string {
	const chars = "0123456789abcdefghijklmnopqrstuv"
	h := md5.Sum([]byte(fmt.Sprint(p, "phpsess", i)))
	out := make([]byte, 32)
	for j := range out {
		out[j] = chars[int(h[j%16]>>(j/16*3))%32]
	}
	return string(out)
}

// seedMore writes what else these ecosystems keep beside the above:
// PHP's native Redis sessions, Flask-Caching entries, Spring Cloud
// Gateway's rate limiter and Magento's cache (Cm_Cache_Backend_Redis).
func (s appSeeder) seedMore(p string, now time.Time) {
	for i := range 6 {
		// phpredis redis_session.c PS_WRITE_FUNC: SETEX
		// PHPREDIS_SESSION:<id> session.gc_maxlifetime (1440 s) with
		// the session in PHP's "php" serialize_handler format.
		s.set("PHPREDIS_SESSION:"+phpSessionID(p, i), fmt.Sprintf(`user_id|i:%d;cart|a:1:{i:0;s:6:"SKU-%02d";}csrf|s:32:"%s";`,
			40+i, i, md5Hex(p, "csrf", i)), 1440*time.Second)
		// pallets-eco/cachelib src/cachelib/serializers.py
		// RedisSerializer.dumps: b"!" + pickle.dumps(value,
		// HIGHEST_PROTOCOL), under Flask-Caching's CACHE_KEY_PREFIX
		// (here the app's own, p + ":"), with the timeout as TTL.
		s.set(fmt.Sprintf("%s:dispatch:%d:assignee", p, 300+i), "!"+pickle5(randomUUID(i, "assignee")), time.Minute)
		// spring-cloud/spring-cloud-gateway RedisRateLimiter.getKeys
		// ("request_rate_limiter.{" + id + "}.tokens" / ".timestamp")
		// and request_rate_limiter.lua: SETEX both for
		// floor(burstCapacity / replenishRate * 2) s, the tokens left
		// and the time in epoch seconds.
		id := fmt.Sprintf("%s-user-%d", p, i)
		s.set("request_rate_limiter.{"+id+"}.tokens", fmt.Sprint(i%3), 4*time.Second)
		s.set("request_rate_limiter.{"+id+"}.timestamp", fmt.Sprint(now.Unix()), 4*time.Second)
		// colinmollenhour/Cm_Cache_Backend_Redis Cm/Cache/Backend/Redis.php
		// save: HMSET zc:k:<id> d <data> t <tags> m <time()> i <0|1>,
		// EXPIRE lifetime; SADD zc:tags and zc:ti:<tag>. Magento's ids
		// start with its id_prefix (3 hex digits of a path's md5, "_").
		cid := fmt.Sprintf("%s_%s_STORE_%d", md5Hex(p)[:3], strings.ToUpper(p), i)
		s.hset("zc:k:"+cid, 7200*time.Second, "d", fmt.Sprintf(`a:2:{s:4:"code";s:7:"store_%d";s:9:"is_active";b:1;}`, i),
			"t", md5Hex(p)[:3]+"_CONFIG,"+md5Hex(p)[:3]+"_MAGE", "m", fmt.Sprint(now.Unix()), "i", "0")
		s.sadd("zc:ti:"+md5Hex(p)[:3]+"_CONFIG", cid)
	}
	s.sadd("zc:tags", md5Hex(p)[:3]+"_CONFIG", md5Hex(p)[:3]+"_MAGE")
}
