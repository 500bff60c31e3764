package makers

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// The value formats catalogue entries name (value.format): each checks a
// read value against what a library writes and fills in the owner, the
// holders, metadata and the acquisition time it holds. They run on the
// scan's hot path, so they reject on length or the first byte early.

// format is one named value format.
type format struct {
	types      string // the value types it reads ("" for any)
	needsValue bool   // false: it matches without the value (--no-values)
	match      func(o *keyspace.Key, r *Recognised) bool
}

var formats = map[string]format{
	"any":                      {match: anyValue},
	"int":                      str(func(v string, _ *Recognised) bool { return keyshape.AllDigits(v) }),
	"one":                      str(func(v string, _ *Recognised) bool { return v == "1" }),
	"true":                     str(func(v string, _ *Recognised) bool { return v == "true" }),
	"empty-or-time":            str(emptyOrTime),
	"epoch":                    str(func(v string, _ *Recognised) bool { return isEpoch(v) }),
	"number":                   str(func(v string, _ *Recognised) bool { return isDecimal(v) }),
	"job-id":                   str(jobID),
	"uuid":                     str(uuidValue),
	"uuid-hex":                 str(uuid1Hex),
	"hex32":                    str(hex32),
	"base64-16":                str(func(v string, _ *Recognised) bool { return isRedsyncValue(v) }),
	"base64-18":                str(pythonRedisLockToken),
	"base64-uuid1":             str(base64UUID1),
	"redislock":                str(redislockValue),
	"alnum16":                  str(alnum16),
	"uniqid":                   str(uniqidValue),
	"shedlock":                 str(shedLockValue),
	"nextcloud-lock":           str(nextcloudLock),
	"uuid-counter":             str(func(v string, _ *Recognised) bool { return IsUUIDCounter(v, true) }),
	"machine-pid-guid":         str(func(v string, _ *Recognised) bool { return machinePidGUID(v) }),
	"redisson-holders":         {types: "hash", needsValue: true, match: redissonHolders},
	"redisson-rwlock":          {types: "hash", needsValue: true, match: redissonRWLock},
	"sidekiq-locked":           {types: "hash", needsValue: true, match: sidekiqLocked},
	"symfony-tokens":           {types: "zset", needsValue: true, match: symfonyTokens},
	"machine-pid-guid-members": {types: "zset", needsValue: true, match: machinePidGUIDMembers},
	"uuid-members":             {types: "zset", needsValue: true, match: uuidMembers},
}

// anyValue matches every value; a string's is its owner (what a lock
// stores, unchecked: kombu's mutex token, node-resque's leader name).
func anyValue(o *keyspace.Key, r *Recognised) bool {
	if o.Type == "string" {
		r.Owner = o.Value
	}
	return true
}

// FormatNames lists the value formats, sorted.
func FormatNames() []string {
	out := make([]string, 0, len(formats))
	for n := range formats {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// str makes a string format whose owner is the value.
func str(f func(v string, r *Recognised) bool) format {
	return format{types: "string", needsValue: true, match: func(o *keyspace.Key, r *Recognised) bool {
		r.Owner = o.Value
		return f(o.Value, r)
	}}
}

var keyFormats = map[string]func(string) bool{
	// Kredis attribute keys: <model param_key>:<id>:<attribute>.
	"model-id-attribute": func(k string) bool {
		i := strings.IndexByte(k, ':')
		if i <= 0 {
			return false
		}
		j := strings.IndexByte(k[i+1:], ':')
		return j > 0 && i+j+2 < len(k) && strings.IndexByte(k[i+j+2:], ':') < 0 && keyshape.AllDigits(k[i+1:i+1+j])
	},
}

func emptyOrTime(v string, r *Recognised) bool {
	if v == "" {
		return true
	}
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f > 1e9 && f < 1e10
}

// isEpoch: a time as whole seconds or milliseconds since the epoch, from
// 2009 to a day ahead (a lock's expiry time: node-resque, redis-lock).
func isEpoch(v string) bool {
	return keyshape.AllDigits(v) && keyshape.ClassifyInt(v, time.Now()).Kind == keyshape.KindEpoch
}

// isDecimal: digits with at most one '.' (a rate limiter's counter or
// arrival time).
func isDecimal(v string) bool {
	whole, frac, _ := strings.Cut(v, ".")
	return keyshape.AllDigits(whole) && (frac == "" && !strings.HasSuffix(v, ".") || keyshape.AllDigits(frac))
}

// base64UUID1: node-redis-warlock's token, the 16 bytes of a version 1
// UUID (uuid.v1 into a Buffer) in standard base64: 22 characters and "==".
func base64UUID1(v string, r *Recognised) bool {
	if !isRedsyncValue(v) {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 16 || b[6]>>4 != 1 || b[8]&0xc0 != 0x80 {
		return false
	}
	// The 60-bit time counts 100 ns since 1582-10-15.
	ts := int64(b[6]&0x0f)<<56 | int64(b[7])<<48 | int64(b[4])<<40 | int64(b[5])<<32 | int64(b[0])<<24 | int64(b[1])<<16 |
		int64(b[2])<<8 | int64(b[3])
	t := time.Unix((ts-122192928000000000)/10_000_000, 0)
	if t.Before(time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC)) || t.After(time.Now().Add(24*time.Hour)) {
		return false
	}
	r.AcquiredAt = t
	return true
}

// nextcloudLock: Nextcloud's file lock, a count of shared holders
// (INCRBY) or "exclusive" as json_encode() writes it, quotes included.
func nextcloudLock(v string, _ *Recognised) bool {
	return v != "" && len(v) <= 6 && keyshape.AllDigits(v) || v == `"exclusive"`
}

func jobID(v string, _ *Recognised) bool {
	return v != "" && len(v) <= 128 && !strings.ContainsAny(v, " \t\r\n{[")
}

func uuidValue(v string, _ *Recognised) bool {
	_, ok := keyshape.ParseUUID(v)
	return ok
}

// uuid1Hex: redis-py's Lock token uuid.uuid1().hex - 32 hex digits of a
// version 1 UUID whose time is plausible.
func uuid1Hex(v string, r *Recognised) bool {
	if len(v) != 32 || v[12] != '1' || !strings.ContainsRune("89ab", rune(v[16])) || !isLowerHex(v) {
		return false
	}
	sh, ok := keyshape.ParseUUID(v[:8] + "-" + v[8:12] + "-" + v[12:16] + "-" + v[16:20] + "-" + v[20:])
	if !ok || sh.Time.Before(time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC)) || sh.Time.After(time.Now().Add(24*time.Hour)) {
		return false
	}
	r.AcquiredAt = sh.Time
	return true
}

// hex32: node-redlock's randomBytes(16).toString("hex").
func hex32(v string, _ *Recognised) bool {
	return len(v) == 32 && isLowerHex(v) && keyshape.HasLetter(v) && keyshape.HasDigit(v)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// pythonRedisLockToken: b64encode(urandom(18)) - 24 characters of the
// standard alphabet (+ and /, never - or _), no padding.
func pythonRedisLockToken(v string, _ *Recognised) bool {
	if len(v) != 24 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(isAlnum(c) || c == '+' || c == '/') {
			return false
		}
	}
	return randomMix(v)
}

func redislockValue(v string, r *Recognised) bool {
	tok, meta, ok := splitRedislock(v)
	if ok {
		r.Owner, r.Metadata = tok, meta
	}
	return ok
}

// alnum16: Laravel's Str::random(), 16 letters and digits.
func alnum16(v string, _ *Recognised) bool {
	if len(v) != 16 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) {
			return false
		}
	}
	return randomMix(v)
}

// uniqidValue: PHP's uniqid(), 8 hex digits of seconds and 5 of
// microseconds (more_entropy adds ".<8 digits>").
func uniqidValue(v string, r *Recognised) bool {
	head, tail, dotted := strings.Cut(v, ".")
	if len(head) != 13 || !isLowerHex(head) || dotted && !keyshape.AllDigits(tail) {
		return false
	}
	sec, err := strconv.ParseInt(head[:8], 16, 64)
	if err != nil {
		return false
	}
	t := time.Unix(sec, 0)
	if t.Before(time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC)) || t.After(time.Now().Add(24*time.Hour)) {
		return false
	}
	r.AcquiredAt = t
	return true
}

func shedLockValue(v string, r *Recognised) bool {
	when, host, _, ok := parseShedLock(v)
	if !ok {
		return false
	}
	r.Metadata = "host " + host
	if t, err := time.Parse(time.RFC3339Nano, when); err == nil {
		r.AcquiredAt = t
	}
	return true
}

// machinePidGUID: DistributedLock.Redis's lock id,
// <machine>_<pid>_<Guid "n": 32 hex>, _WRITERWAITING after a waiting
// writer's.
func machinePidGUID(v string) bool {
	v = strings.TrimSuffix(v, "_WRITERWAITING")
	i := strings.LastIndexByte(v, '_')
	if i < 0 || len(v)-i-1 != 32 || !isLowerHex(v[i+1:]) {
		return false
	}
	j := strings.LastIndexByte(v[:i], '_')
	return j > 0 && keyshape.AllDigits(v[j+1:i])
}

func machinePidGUIDMembers(o *keyspace.Key, r *Recognised) bool {
	if len(o.Fields) < 2 {
		return false
	}
	for i := 0; i+1 < len(o.Fields); i += 2 {
		if !machinePidGUID(o.Fields[i]) {
			return false
		}
	}
	r.Holders = hashHolders(o.Fields)
	r.Owner = o.Fields[0]
	return true
}

// redissonHolders: RLock's hash - one field <client uuid>:<thread id>
// (a few while a fair lock hands over) holding a reentrant count.
func redissonHolders(o *keyspace.Key, r *Recognised) bool {
	if o.MoreFields || len(o.Fields) < 2 || len(o.Fields) > 8 {
		return false
	}
	for i := 0; i+1 < len(o.Fields); i += 2 {
		if !IsUUIDCounter(o.Fields[i], false) || !keyshape.AllDigits(o.Fields[i+1]) {
			return false
		}
	}
	r.Holders = hashHolders(o.Fields)
	r.Owner = o.Fields[0]
	return true
}

// redissonRWLock: RReadWriteLock's hash - mode = read or write, then
// holders <client uuid>:<thread id> (":write" for the writer) with counts.
func redissonRWLock(o *keyspace.Key, r *Recognised) bool {
	mode := ""
	for i := 0; i+1 < len(o.Fields); i += 2 {
		f, v := o.Fields[i], o.Fields[i+1]
		switch {
		case f == "mode" && (v == "read" || v == "write"):
			mode = v
		case IsUUIDCounter(strings.TrimSuffix(f, ":write"), false) && keyshape.AllDigits(v):
			r.Holders = append(r.Holders, Holder{Owner: f, Value: v})
		default:
			return false
		}
	}
	if mode == "" {
		return false
	}
	r.Metadata = "mode " + mode
	if len(r.Holders) > 0 {
		r.Owner = r.Holders[0].Owner
	}
	return true
}

// sidekiqLocked: lock.lua's HSET locked job_id current_time.
func sidekiqLocked(o *keyspace.Key, r *Recognised) bool {
	r.Holders = hashHolders(o.Fields)
	if len(r.Holders) == 0 {
		return true // emptied by an unlock racing the read
	}
	r.Owner = r.Holders[0].Owner
	f, err := strconv.ParseFloat(r.Holders[0].Value, 64)
	if err != nil {
		return false
	}
	if f > 1e9 {
		r.AcquiredAt = time.Unix(0, int64(f*1e9))
	}
	return true
}

// symfonyTokens: RedisStore's sorted set of base64_encode(random_bytes(32))
// tokens (44 characters ending in '=') and "__write__".
func symfonyTokens(o *keyspace.Key, r *Recognised) bool {
	if len(o.Fields) < 2 {
		return false
	}
	token := false
	for i := 0; i+1 < len(o.Fields); i += 2 {
		m := o.Fields[i]
		switch {
		case m == "__write__":
			r.Metadata = "write lock"
		case len(m) == 44 && m[43] == '=' && isBase64Std(m[:43]):
			token = true
			r.Holders = append(r.Holders, Holder{Owner: m, Value: o.Fields[i+1]})
		default:
			return false
		}
	}
	if token {
		r.Owner = r.Holders[0].Owner
	}
	return token
}

// uuidMembers: redis-semaphore's semaphore, a sorted set of holders'
// random UUIDs (an optional "-<suffix>" after each) scored by when each
// acquired, in ms since the epoch.
func uuidMembers(o *keyspace.Key, r *Recognised) bool {
	if len(o.Fields) < 2 {
		return false
	}
	for i := 0; i+1 < len(o.Fields); i += 2 {
		m := o.Fields[i]
		if len(m) < 36 || len(m) > 36 && m[36] != '-' {
			return false
		}
		if _, ok := keyshape.ParseUUID(m[:36]); !ok {
			return false
		}
		r.Holders = append(r.Holders, Holder{Owner: m, Value: o.Fields[i+1]})
	}
	r.Owner = r.Holders[0].Owner
	if ms, err := strconv.ParseFloat(r.Holders[0].Value, 64); err == nil && ms > 1e12 {
		r.AcquiredAt = time.UnixMilli(int64(ms))
	}
	return true
}

func isBase64Std(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isAlnum(c) || c == '+' || c == '/') {
			return false
		}
	}
	return true
}
