// Package makers recognises which lock library wrote a key, from its name,
// type and value, each rule citing the library source that writes those
// bytes: redsync, bsm/redislock, Redisson, Spring Integration, ShedLock,
// BullMQ, sidekiq-unique-jobs, asynq. Anything else is "unknown" (or
// "set-nx-px" when it looks like the practice's SET key <random token> NX
// PX pattern). It also says what a key is for (Role): a lock, a dedup key,
// a fencing counter, metadata or an index.
package makers

import (
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// Makers dupctl recognises.
const (
	SetNXPX   = "set-nx-px"           // the seed's SET key <random token> NX PX ttl
	Redsync   = "redsync"             // github.com/go-redsync/redsync
	Redislock = "redislock"           // github.com/bsm/redislock
	Redisson  = "redisson"            // org.redisson RLock / RFencedLock
	Spring    = "spring-integration"  // RedisLockRegistry (judged per family)
	ShedLock  = "shedlock"            // net.javacrumbs.shedlock Redis providers
	BullMQ    = "bullmq"              // BullMQ job locks and deduplication keys
	Sidekiq   = "sidekiq-unique-jobs" // mhenrixon/sidekiq-unique-jobs
	Asynq     = "asynq"               // github.com/hibiken/asynq unique tasks
	Unknown   = "unknown"
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

// Recognised is a key after maker recognition.
type Recognised struct {
	Maker string
	Role  Role
	// Signature is set when the key's layout is its maker's exactly (key
	// convention and value, or a value no other data has): it decides
	// alone that the key is a lock.
	Signature  bool
	Owner      string
	Holders    []Holder
	Metadata   string
	AcquiredAt time.Time
	Guarded    string // for a fence counter: the lock key it fences
}

// The makers' formats are matched by hand where a key or value is checked
// on the scan's hot path (a regexp per key was a tenth of dupctl's CPU).

// isRedsyncValue: redsync mutex.go genValue is base64.StdEncoding of 16
// random bytes: 22 characters and "==".
func isRedsyncValue(v string) bool {
	if len(v) != 24 || v[22] != '=' || v[23] != '=' {
		return false
	}
	for i := 0; i < 22; i++ {
		if c := v[i]; !(isAlnum(c) || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// IsUUIDCounter matches "<uuid>:<digits>": Redisson's lock field
// (RedissonBaseLock.getLockName: the client's UUID + ":" + threadId,
// which RedissonLock's Lua HINCRBYs) and BullMQ's lock token (worker.ts:
// `${this.id}:${tokenPostfix++}`, id = randomUUID(), lowercase).
func IsUUIDCounter(v string, lowerOnly bool) bool {
	if len(v) < 38 || v[36] != ':' || !keyshape.AllDigits(v[37:]) {
		return false
	}
	for i := 0; i < 36; i++ {
		c := v[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || !lowerOnly && c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parseShedLock reads ShedLock's value. InternalRedisLockProvider
// .buildValue writes "ADDED:%s@%s:%s" (ISO time, hostname, UUID); older
// providers wrote "ADDED:%s@%s" without the UUID (lukas-krecan/ShedLock
// @6b4bf7ab providers/redis/shedlock-support-redis/.../
// InternalRedisLockProvider.java; research/locks.md 1.6).
func parseShedLock(v string) (when, host, id string, ok bool) {
	rest, ok := strings.CutPrefix(v, "ADDED:")
	if !ok || strings.ContainsAny(v, " \t\r\n") {
		return "", "", "", false
	}
	when, rest, ok = strings.Cut(rest, "@")
	if !ok || when == "" {
		return "", "", "", false
	}
	host, id, _ = strings.Cut(rest, ":")
	if host == "" || strings.Contains(rest, "@") {
		return "", "", "", false
	}
	return when, host, id, true
}

// sidekiqMatch reads a sidekiq-unique-jobs key: <digest>:QUEUED|PRIMED|
// LOCKED|INFO, the digest "<prefix>:<md5 or sha3-256 hex>"
// (lock_digest.rb, key.rb), :RUN for while_executing
// (orphans/ruby_reaper.rb RUN_SUFFIX). suffix is QUEUED, PRIMED, LOCKED,
// INFO or "" (a bare digest).
func sidekiqMatch(key string) (suffix string, ok bool) {
	i := strings.IndexByte(key, ':')
	if i <= 0 {
		return "", false
	}
	rest := key[i+1:]
	n := 0
	for n < len(rest) && (rest[n] >= '0' && rest[n] <= '9' || rest[n] >= 'a' && rest[n] <= 'f') {
		n++
	}
	if n != 32 && n != 64 {
		return "", false
	}
	rest = strings.TrimPrefix(rest[n:], ":RUN")
	switch rest {
	case "":
		return "", true
	case ":QUEUED", ":PRIMED", ":LOCKED", ":INFO":
		return rest[1:], true
	}
	return "", false
}

// Recognise decides maker and role and extracts the owner. Whether the
// key is a lock at all is for the evidence to say (weigh): a key no maker
// claims is a tentative RoleLock.
func Recognise(o *keyspace.Key) Recognised {
	key := o.Key
	switch o.Type {
	case "list", "set", "zset", "stream":
		r := Recognised{Maker: Unknown, Role: RoleIndex}
		if _, ok := sidekiqMatch(key); ok || strings.HasPrefix(key, "uniquejobs:") {
			r.Maker = Sidekiq
		}
		return r
	}
	if r, ok := recogniseByKey(o); ok {
		return r
	}
	if o.Type == "hash" {
		return recogniseHash(o)
	}
	if !o.Read {
		return Recognised{Maker: Unknown, Role: RoleLock}
	}
	return recogniseString(o)
}

// recogniseByKey handles the makers whose key layout is their signature.
func recogniseByKey(o *keyspace.Key) (Recognised, bool) {
	key, v := o.Key, o.Value
	// Redisson RedissonFencedLock: tokenName = prefixName("redisson_lock_token",
	// name), i.e. redisson_lock_token:{name}; INCR on every acquisition.
	if rest, ok := strings.CutPrefix(key, "redisson_lock_token:"); ok {
		name := rest
		if strings.HasPrefix(rest, "{") && strings.HasSuffix(rest, "}") {
			name = rest[1 : len(rest)-1]
		}
		return Recognised{Maker: Redisson, Role: RoleFence, Guarded: name}, true
	}
	if suffix, ok := sidekiqMatch(key); ok && (suffix != "" || strings.HasPrefix(key, "uniquejobs:")) {
		r := Recognised{Maker: Sidekiq, Role: RoleMeta}
		if suffix == "LOCKED" && o.Type != "string" {
			// lock.lua: HSET locked job_id current_time.
			r.Role, r.Signature = RoleLock, true
			r.Holders = hashHolders(o.Fields)
			if len(r.Holders) > 0 {
				r.Owner = r.Holders[0].Owner
				if f, err := strconv.ParseFloat(r.Holders[0].Value, 64); err == nil && f > 1e9 {
					r.AcquiredAt = time.Unix(0, int64(f*1e9))
				}
			}
		}
		return r, true
	}
	// asynq base.go UniqueKey: asynq:{<queue>}:unique:<type>:<md5(payload)>;
	// rdb.go enqueueUniqueCmd: SET key <task id> NX EX ttl.
	if strings.HasPrefix(key, "asynq:{") && strings.Contains(key, "}:unique:") && o.Type != "hash" {
		return Recognised{Maker: Asynq, Role: RoleDedup, Owner: v, Signature: true}, true
	}
	// BullMQ: <prefix>:<queue>:<jobId>:lock holds the worker token
	// (worker.ts); <prefix>:<queue>:de:<id> maps a deduplication id to a
	// job id (addStandardJob / deduplication.md).
	if strings.Count(key, ":") >= 3 {
		bull := strings.HasPrefix(key, "bull:")
		switch {
		case strings.HasSuffix(key, ":lock") && o.Type != "hash" && (bull || IsUUIDCounter(v, true)):
			return Recognised{Maker: BullMQ, Role: RoleLock, Owner: v, Signature: true}, true
		case strings.Contains(key, ":de:") && o.Type != "hash" && !strings.Contains(key[strings.LastIndex(key, ":de:")+4:], ":") && (bull || keyshape.AllDigits(v)):
			return Recognised{Maker: BullMQ, Role: RoleDedup, Owner: v, Signature: true}, true
		}
	}
	return Recognised{}, false
}

func recogniseHash(o *keyspace.Key) Recognised {
	holders := hashHolders(o.Fields)
	r := Recognised{Maker: Unknown, Role: RoleLock, Holders: holders}
	if len(holders) > 0 {
		r.Owner = holders[0].Owner
		redisson := true
		for _, h := range holders {
			if !IsUUIDCounter(h.Owner, false) || !keyshape.AllDigits(h.Value) {
				redisson = false
			}
		}
		if redisson && !o.MoreFields {
			r.Maker, r.Signature = Redisson, true
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

func recogniseString(o *keyspace.Key) Recognised {
	v := o.Value
	r := Recognised{Maker: Unknown, Role: RoleLock, Owner: v}
	if isFenceKey(o.Key) && keyshape.AllDigits(v) {
		r.Role, r.Guarded = RoleFence, fencedKey(o.Key)
		return r
	}
	switch {
	case strings.HasPrefix(v, "ADDED:"):
		when, host, _, ok := parseShedLock(v)
		if !ok {
			break
		}
		r.Maker, r.Signature = ShedLock, true
		r.Metadata = "host " + host
		if t, err := time.Parse(time.RFC3339Nano, when); err == nil {
			r.AcquiredAt = t
		}
	case isRedsyncValue(v):
		r.Maker = Redsync
	default:
		if tok, meta, ok := splitRedislock(v); ok {
			r.Maker = Redislock
			r.Owner, r.Metadata = tok, meta
			break
		}
		r.Maker = SetNXPX // if the owner turns out to be a good token
	}
	return r
}

// splitRedislock reads bsm/redislock's value. In v0.9
// (github.com/bsm/redislock@v0.9.4 redislock.go) Obtain stores
// value := token + opt.getMetadata(), where the token is randomToken(),
// base64.RawURLEncoding of 16 random bytes: 22 characters; Lock.Token()
// is value[:tokenLen] and Lock.Metadata() value[tokenLen:], and the
// obtain script compares GETRANGE key 0 tokenLen-1 with the token. So the
// value is 22 random base64url characters and then anything - JSON,
// "worker-7", nothing. A longer random token also starts with 22 random
// characters: what follows is taken for metadata unless it is more of the
// same (token characters mixing upper and lower case).
func splitRedislock(v string) (token, meta string, ok bool) {
	if len(v) < 22 {
		return "", "", false
	}
	for i := 0; i < 22; i++ {
		if !isTokenByte(v[i]) {
			return "", "", false
		}
	}
	token, meta = v[:22], v[22:]
	if meta != "" && !isTokenByte(meta[0]) {
		// The token ends where the metadata starts ({...}, |host, ...):
		// it need only not be a word.
		return token, meta, distinctBytes(token) >= 12
	}
	if !randomMix(token) {
		return "", "", false
	}
	if meta != "" && allTokenBytes(meta) && hasUpperLower(meta) {
		return "", "", false // a longer random token
	}
	return token, meta, true
}

func distinctBytes(s string) int {
	var seen [256]bool
	n := 0
	for i := 0; i < len(s); i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			n++
		}
	}
	return n
}

func allTokenBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

// randomMix reports 22 token characters that change character class
// (upper, lower, digit, punctuation) as often as random ones do: about 13
// times in 21 pairs, at least 8 all but six times in a thousand, and at
// least 5 with a digit among them nearly always. Words, even CamelCase
// ones, change at their humps only, and hex and UUIDs have no upper case
// to change to.
func randomMix(s string) bool {
	changes, digits := 0, 0
	for i := 0; i < len(s); i++ {
		if charClass(s[i]) == 2 {
			digits++
		}
		if i > 0 && charClass(s[i]) != charClass(s[i-1]) {
			changes++
		}
	}
	return hasUpperLower(s) && (changes >= 8 || changes >= 5 && digits > 0)
}

func charClass(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return 0
	case c >= 'a' && c <= 'z':
		return 1
	case c >= '0' && c <= '9':
		return 2
	}
	return 3
}

func hasUpperLower(s string) bool {
	upper, lower := false, false
	for i := 0; i < len(s) && !(upper && lower); i++ {
		c := s[i]
		upper = upper || c >= 'A' && c <= 'Z'
		lower = lower || c >= 'a' && c <= 'z'
	}
	return upper && lower
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
	segs := keyshape.Split(key, time.Time{}) // words only: no time needed
	for i, s := range segs {
		if s.Shape.Kind != keyshape.KindWord || !fenceWords[strings.ToLower(s.Text)] {
			continue
		}
		kept := append(segs[:i:i], segs[i+1:]...)
		var b strings.Builder
		for j, t := range kept {
			b.WriteString(t.Text)
			if j < len(kept)-1 {
				b.WriteString(t.Sep)
			}
		}
		return b.String()
	}
	return key
}
