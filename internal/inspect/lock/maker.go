package lock

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Maker recognition: which library wrote a key, from its name, type and
// value, each rule citing the library source that writes those bytes.
// Anything else is "unknown" (or "set-nx-px" when it looks like the seed's
// SET key <random token> NX PX pattern).

// Makers dupctl recognises.
const (
	MakerSetNXPX   = "set-nx-px"           // the seed's SET key <random token> NX PX ttl
	MakerRedsync   = "redsync"             // github.com/go-redsync/redsync
	MakerRedislock = "redislock"           // github.com/bsm/redislock
	MakerRedisson  = "redisson"            // org.redisson RLock / RFencedLock
	MakerSpring    = "spring-integration"  // RedisLockRegistry (judged per family)
	MakerShedLock  = "shedlock"            // net.javacrumbs.shedlock Redis providers
	MakerBullMQ    = "bullmq"              // BullMQ job locks and deduplication keys
	MakerSidekiq   = "sidekiq-unique-jobs" // mhenrixon/sidekiq-unique-jobs
	MakerAsynq     = "asynq"               // github.com/hibiken/asynq unique tasks
	MakerUnknown   = "unknown"
)

// Role is what a key is for. Only locks and dedup keys are judged as locks.
type Role string

const (
	RoleLock  Role = "lock"  // a mutex: its value names the holder
	RoleDedup Role = "dedup" // a uniqueness key whose value names a job
	RoleFence Role = "fence" // a fencing-token counter
	RoleMeta  Role = "meta"  // metadata about a lock (sidekiq :INFO)
	RoleIndex Role = "index" // a list, set or sorted set next to locks
	RoleOther Role = "other"
)

// Holder is one holder of a hash lock (Redisson, sidekiq-unique-jobs).
type Holder struct {
	Owner string `json:"owner"`
	Value string `json:"value"`
}

// observed is what one pipeline read of a key returned.
type observed struct {
	key, node string
	typ       string // "string", "hash", ...; "" when not read
	pttl      int64  // ms; -1 no TTL
	idle      int64  // s; -1 not tracked (LFU policy)
	value     string // string value (first maxValue bytes)
	read      bool   // the value was read
	fields    []string
	hlen      int64
}

// recognised is a key after maker recognition.
type recognised struct {
	maker      string
	role       Role
	owner      string
	holders    []Holder
	metadata   string
	acquiredAt time.Time
	guarded    string // for a fence counter: the lock key it fences
	own        Owner  // the owner's class, when recognition needed it
	classified bool
}

var (
	// redsync mutex.go genValue: base64.StdEncoding of 16 random bytes.
	redsyncValue = regexp.MustCompile(`^[A-Za-z0-9+/]{22}==$`)
	// Redisson RedissonBaseLock.getLockName: id + ":" + threadId, where id
	// is the client's UUID (ServiceManager); RedissonLock's Lua HINCRBYs it.
	redissonField = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}:\d+$`)
	// ShedLock InternalRedisLockProvider.buildValue:
	// "ADDED:%s@%s:%s" (ISO time, hostname, UUID); older providers wrote
	// "ADDED:%s@%s" without the UUID.
	shedlockValue = regexp.MustCompile(`^ADDED:(\S+?)@([^:@\s]+)(?::(\S+))?$`)
	// BullMQ worker.ts: token `${this.id}:${tokenPostfix++}`, id randomUUID().
	bullmqToken = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+$`)
	// sidekiq-unique-jobs key.rb: <digest>:QUEUED|PRIMED|LOCKED|INFO, the
	// digest "<prefix>:<md5|sha3-256 hex>" (lock_digest.rb), :RUN for
	// while_executing (orphans/ruby_reaper.rb RUN_SUFFIX).
	sidekiqKey = regexp.MustCompile(`^[^:]+:[0-9a-f]{32}(?:[0-9a-f]{32})?(:RUN)?(?::(QUEUED|PRIMED|LOCKED|INFO))?$`)
)

// recognise decides maker and role and extracts the owner.
func recognise(o *observed) recognised {
	key := o.key
	switch o.typ {
	case "list", "set", "zset", "stream":
		r := recognised{maker: MakerUnknown, role: RoleIndex}
		if sidekiqMatch(key) != nil || strings.HasPrefix(key, "uniquejobs:") {
			r.maker = MakerSidekiq
		}
		return r
	}
	if r, ok := recogniseByKey(o); ok {
		return r
	}
	if o.typ == "hash" {
		return recogniseHash(o)
	}
	if !o.read {
		return recognised{maker: MakerUnknown, role: RoleLock}
	}
	return recogniseString(o)
}

// recogniseByKey handles the makers whose key layout is their signature.
func recogniseByKey(o *observed) (recognised, bool) {
	key, v := o.key, o.value
	// Redisson RedissonFencedLock: tokenName = prefixName("redisson_lock_token",
	// name), i.e. redisson_lock_token:{name}; INCR on every acquisition.
	if rest, ok := strings.CutPrefix(key, "redisson_lock_token:"); ok {
		name := rest
		if strings.HasPrefix(rest, "{") && strings.HasSuffix(rest, "}") {
			name = rest[1 : len(rest)-1]
		}
		return recognised{maker: MakerRedisson, role: RoleFence, guarded: name}, true
	}
	if m := sidekiqMatch(key); m != nil && (m[2] != "" || strings.HasPrefix(key, "uniquejobs:")) {
		r := recognised{maker: MakerSidekiq, role: RoleMeta}
		if m[2] == "LOCKED" {
			// lock.lua: HSET locked job_id current_time.
			r.role = RoleLock
			r.holders = hashHolders(o.fields)
			if len(r.holders) > 0 {
				r.owner = r.holders[0].Owner
				if f, err := strconv.ParseFloat(r.holders[0].Value, 64); err == nil && f > 1e9 {
					r.acquiredAt = time.Unix(0, int64(f*1e9))
				}
			}
		}
		return r, true
	}
	// asynq base.go UniqueKey: asynq:{<queue>}:unique:<type>:<md5(payload)>;
	// rdb.go enqueueUniqueCmd: SET key <task id> NX EX ttl.
	if strings.HasPrefix(key, "asynq:{") && strings.Contains(key, "}:unique:") {
		return recognised{maker: MakerAsynq, role: RoleDedup, owner: v}, true
	}
	// BullMQ: <prefix>:<queue>:<jobId>:lock holds the worker token
	// (worker.ts); <prefix>:<queue>:de:<id> maps a deduplication id to a
	// job id (addStandardJob / deduplication.md).
	if strings.Count(key, ":") >= 3 {
		bull := strings.HasPrefix(key, "bull:")
		switch {
		case strings.HasSuffix(key, ":lock") && (bull || bullmqToken.MatchString(v)):
			return recognised{maker: MakerBullMQ, role: RoleLock, owner: v}, true
		case strings.Contains(key, ":de:") && !strings.Contains(key[strings.LastIndex(key, ":de:")+4:], ":") && (bull || allDigits(v)):
			return recognised{maker: MakerBullMQ, role: RoleDedup, owner: v}, true
		}
	}
	return recognised{}, false
}

// sidekiqMatch runs the sidekiq-unique-jobs key pattern only on keys that
// can match it (the regexp is the costly part of recognising a key).
func sidekiqMatch(key string) []string {
	i := strings.IndexByte(key, ':')
	if i < 0 || len(key) < i+33 || !isHex(key[i+1:i+33]) {
		return nil
	}
	return sidekiqKey.FindStringSubmatch(key)
}

func recogniseHash(o *observed) recognised {
	holders := hashHolders(o.fields)
	r := recognised{maker: MakerUnknown, role: RoleLock, holders: holders}
	if len(holders) > 0 {
		r.owner = holders[0].Owner
		redisson := true
		for _, h := range holders {
			if !redissonField.MatchString(h.Owner) || !allDigits(h.Value) {
				redisson = false
			}
		}
		if redisson {
			r.maker = MakerRedisson
		}
	}
	return r
}

func hashHolders(fields []string) []Holder {
	var out []Holder
	for i := 0; i+1 < len(fields); i += 2 {
		out = append(out, Holder{Owner: fields[i], Value: fields[i+1]})
	}
	return out
}

func recogniseString(o *observed) recognised {
	v := o.value
	r := recognised{maker: MakerUnknown, role: RoleLock, owner: v}
	if isFenceKey(o.key) && allDigits(v) {
		r.role, r.guarded = RoleFence, fencedKey(o.key)
		return r
	}
	switch {
	case strings.HasPrefix(v, "ADDED:") && shedlockValue.MatchString(v):
		m := shedlockValue.FindStringSubmatch(v)
		r.maker = MakerShedLock
		r.metadata = "host " + m[2]
		if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			r.acquiredAt = t
		}
	case len(v) == 24 && redsyncValue.MatchString(v):
		r.maker = MakerRedsync
	case isRedislock(v):
		r.maker = MakerRedislock
		r.owner, r.metadata = v[:22], v[22:]
	default:
		r.own = classifyOwner(v, o.key)
		r.classified = true
		if o.pttl > 0 && r.own.Class.good() {
			r.maker = MakerSetNXPX
		}
	}
	return r
}

// isRedislock recognises bsm/redislock's value: redislock.go randomToken
// is base64.RawURLEncoding of 16 random bytes (22 chars), and Obtain stores
// token + opt.getMetadata(). The token mixes cases (as 16 random bytes do
// but hex does not) and, with metadata, is not followed by more token bytes.
func isRedislock(v string) bool {
	if len(v) < 22 || (len(v) > 22 && isTokenByte(v[22])) {
		return false
	}
	for i := 0; i < 22; i++ {
		if !isTokenByte(v[i]) {
			return false
		}
	}
	return looksRandom(v[:22]) && hasUpperLower(v[:22])
}

func hasUpperLower(s string) bool {
	return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz")
}

func isTokenByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_'
}

// fenceWords name a fencing-token counter segment: lock:order:42:fence,
// fence:lock:order:42, lock:order:42:fencing_token.
var fenceWords = map[string]bool{"fence": true, "fencing": true, "fence_token": true, "fencing_token": true, "fencing-token": true, "fence-token": true}

func isFenceKey(key string) bool {
	return strings.Contains(strings.ToLower(key), "fenc") && fencedKey(key) != key
}

// fencedKey removes the fence segment, giving the lock key it guards.
func fencedKey(key string) string {
	segs := splitKey(key)
	for i, s := range segs {
		if s.shape.Kind != KindWord || !fenceWords[strings.ToLower(s.text)] {
			continue
		}
		kept := append(segs[:i:i], segs[i+1:]...)
		var b strings.Builder
		for j, t := range kept {
			b.WriteString(t.text)
			if j < len(kept)-1 {
				b.WriteString(t.sep)
			}
		}
		return b.String()
	}
	return key
}
