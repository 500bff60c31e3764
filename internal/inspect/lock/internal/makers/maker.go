// Package makers recognises which lock library wrote a key, from its name,
// type and value, by the library catalogue (catalogue.yaml: each entry
// cites the library source that writes those bytes, and users add their
// own). Anything else is "unknown" (or "set-nx-px" when it looks like the
// practice's SET key <random token> NX PX pattern). It also says what a
// key is for (Role): a lock, a dedup key, a fencing counter, metadata, an
// index, a job library's queue data or another library's data.
package makers

import (
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// Makers dupctl recognises.
const (
	SetNXPX   = "set-nx-px"           // the safe flow's SET key <random token> NX PX ttl
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
	RoleQueue Role = "queue" // a job library's queue or job data
	// RoleData is a library's own data that shares a lock's shape (a
	// rate-limit counter, a heartbeat): never a lock.
	RoleData  Role = "data"
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
	// Entry is the catalogue entry the key matched (nil for none).
	Entry *Entry
	// Confirmed is set when the key's layout is its maker's exactly (key
	// convention and value, or a value no other data has): it decides
	// alone that the key is a lock.
	Confirmed  bool
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

// Recognise decides maker and role with the default catalogue.
func Recognise(o *keyspace.Key) Recognised { return Default.Recognise(o) }

// Recognise decides maker and role and extracts the owner: a catalogue
// entry whose layout the key has, or else a tentative lock of no known
// maker (the evidence says whether it is one at all).
func (c *Catalogue) Recognise(o *keyspace.Key) Recognised {
	if e, r := c.Match(o); e != nil {
		switch r.Role {
		case RoleFence:
			r.Owner, r.Guarded = "", fencedKey(o.Key)
			if rest, ok := strings.CutPrefix(o.Key, "redisson_lock_token:"); ok {
				// RedissonFencedLock: prefixName("redisson_lock_token", name).
				r.Guarded = strings.TrimSuffix(strings.TrimPrefix(rest, "{"), "}")
			}
		case RoleMeta, RoleQueue, RoleData:
			r.Owner = ""
		}
		return r
	}
	switch o.Type {
	case "list", "set", "zset", "stream":
		return Recognised{Maker: Unknown, Role: RoleIndex}
	case "hash":
		holders := hashHolders(o.Fields)
		r := Recognised{Maker: Unknown, Role: RoleLock, Holders: holders}
		switch {
		case len(holders) == 1 && plainFieldName(holders[0].Owner):
			// {owner: <token>}, {index: 7}: the field names what the
			// value is, and the value is the owner - the name is the same
			// on every lock of the family, not a holder shared by them.
			r.Owner = holders[0].Value
		case len(holders) > 0:
			r.Owner = holders[0].Owner // a holder per field (Redisson's <client id>:<thread>)
		}
		return r
	}
	if !o.Read {
		return Recognised{Maker: Unknown, Role: RoleLock}
	}
	if isFenceKey(o.Key) && keyshape.AllDigits(o.Value) {
		return Recognised{Maker: Unknown, Role: RoleFence, Guarded: fencedKey(o.Key), Owner: o.Value}
	}
	// The practice's SET key <token> NX PX ttl, if the owner turns out to
	// be a good token.
	return Recognised{Maker: SetNXPX, Role: RoleLock, Owner: o.Value}
}

// plainFieldName reports a lower-case field name (index, owner,
// locked_by): a word of the code, not a holder's id or token.
func plainFieldName(f string) bool {
	if len(f) == 0 || len(f) > 24 || f[0] < 'a' || f[0] > 'z' {
		return false
	}
	for i := 0; i < len(f); i++ {
		if c := f[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

func hashHolders(fields []string) []Holder {
	var out []Holder
	for i := 0; i+1 < len(fields); i += 2 {
		out = append(out, Holder{Owner: fields[i], Value: fields[i+1]})
	}
	return out
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
var fenceWords = map[string]bool{"fence": true, "fencing": true, "fence_token": true, "fencing_token": true, "fencing-token": true,
	"fence-token": true}

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
