package judge

import (
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
)

// OwnerClass says what a lock's owner value is, judged by the safe flow's rule:
// the value must be a token unique per acquisition, so that only its
// holder can release the lock (compare-and-delete).
type OwnerClass string

const (
	OwnerUUID       OwnerClass = "uuid4"       // a random UUID: a good token
	OwnerUUIDTime   OwnerClass = "uuid-time"   // a v1/v6/v7 UUID: unique per acquisition
	OwnerRandom     OwnerClass = "random"      // 64+ random bits: a good token
	OwnerHost       OwnerClass = "host"        // hostname, pod, IP or pid, nothing random
	OwnerTimestamp  OwnerClass = "timestamp"   // a time and nothing random
	OwnerCounter    OwnerClass = "counter"     // a small number (a pid, a thread id, a counter)
	OwnerConstant   OwnerClass = "constant"    // "1", "locked", "true", the key itself, empty
	OwnerLowEntropy OwnerClass = "low-entropy" // some randomness, under 64 bits
	OwnerJobID      OwnerClass = "job-id"      // names the job that holds it (dedup keys)
	OwnerNone       OwnerClass = "none"        // no owner value: not a string or hash lock, or not read
)

// good reports classes that make token-checked release work.
func (c OwnerClass) good() bool {
	switch c {
	case OwnerUUID, OwnerUUIDTime, OwnerRandom, OwnerJobID, OwnerNone:
		return true
	}
	return false
}

// sentinels are values people store instead of a token (research 6.2).
var sentinels = map[string]bool{
	"": true, "1": true, "0": true, "true": true, "false": true, "yes": true, "y": true, "ok": true,
	"locked": true, "lock": true, "busy": true, "running": true, "x": true, "null": true, "nil": true,
	"none": true, "on": true, "taken": true, "held": true, "processing": true, "pending": true,
	"in_progress": true, "in-progress": true, "inprogress": true, "started": true, "active": true, "t": true,
}

const maxSentinel = len("in_progress")

// MinTokenBits is the least randomness an owner token needs (research 6.2:
// below ~64 bits two acquisitions can collide or be guessed).
const MinTokenBits = 64

// Owner is a classified owner value.
type Owner struct {
	Class OwnerClass
	Bits  int // estimated random bits
}

// classifyOwner judges an owner value stored on key; now places the
// times in it.
func classifyOwner(v, key string, now time.Time) Owner {
	t := strings.TrimSpace(v)
	if (len(t) <= maxSentinel && sentinels[strings.ToLower(t)]) || t == key {
		return Owner{Class: OwnerConstant}
	}
	if !utf8.ValidString(t) {
		return Owner{Class: OwnerRandom, Bits: 8 * len(t)} // raw random bytes
	}
	if o, ok := tokenPart(t, now); ok {
		return o
	}
	// A composite: ADDED:<time>@<host>:<uuid>, <uuid>:<thread>, host:pid.
	parts := strings.FieldsFunc(t, func(r rune) bool {
		return r == ':' || r == '@' || r == '|' || r == ',' || r == ';' || r == ' ' || r == '\t'
	})
	return tallyParts(parts, now).owner()
}

// ownerParts tallies the parts of a composite owner value.
type ownerParts struct {
	n                      int   // parts
	bits                   int   // random bits in the token parts
	best                   Owner // the token part with the most bits
	host, when, num, words int   // hostnames, times, numbers, other words
}

func tallyParts(parts []string, now time.Time) ownerParts {
	t := ownerParts{n: len(parts)}
	for _, p := range parts {
		if o, ok := tokenPart(p, now); ok {
			t.bits += o.Bits
			if t.best.Bits < o.Bits {
				t.best = o
			}
			continue
		}
		switch {
		case isHostname(p):
			t.host++
		case isTimePart(p, now):
			t.when++
		case keyshape.AllDigits(p):
			t.num++
		default:
			t.words++
		}
	}
	return t
}

// owner classifies the composite: by its randomness, else by what names
// a host, a time or a counter.
func (t ownerParts) owner() Owner {
	switch {
	case t.bits >= MinTokenBits:
		if t.best.Bits >= MinTokenBits {
			return Owner{Class: t.best.Class, Bits: t.bits}
		}
		return Owner{Class: OwnerRandom, Bits: t.bits}
	case t.bits > 0:
		return Owner{Class: OwnerLowEntropy, Bits: t.bits}
	case t.host > 0 || (t.n == 2 && t.num == 1 && t.words == 1):
		return Owner{Class: OwnerHost}
	case t.when > 0 && t.words <= 1 && t.num <= 2:
		return Owner{Class: OwnerTimestamp}
	case t.num == t.n && t.num > 0:
		return Owner{Class: OwnerCounter}
	}
	return Owner{Class: OwnerLowEntropy, Bits: 0}
}

// tokenPart recognises a piece that is a token on its own and estimates
// its random bits.
func tokenPart(p string, now time.Time) (Owner, bool) {
	sh := keyshape.Classify(p, now)
	switch sh.Kind {
	case keyshape.KindUUID:
		switch sh.Version {
		case 4:
			return Owner{Class: OwnerUUID, Bits: 122}, true
		case 7:
			return Owner{Class: OwnerUUIDTime, Bits: 74}, true
		case 1, 6: // 14 random clock bits + time + node: unique per acquisition
			return Owner{Class: OwnerUUIDTime, Bits: 64}, true
		}
		return Owner{Class: OwnerRandom, Bits: 122}, true
	case keyshape.KindULID:
		return Owner{Class: OwnerUUIDTime, Bits: 80}, true
	case keyshape.KindHex:
		if uniqidTime(p, now) {
			return Owner{Class: OwnerTimestamp, Bits: 20}, true // uniqid(): microseconds of the clock
		}
		fallthrough
	case keyshape.KindJID, keyshape.KindObjectID, keyshape.KindMD5, keyshape.KindSHA1, keyshape.KindSHA256:
		if len(p) < 16 {
			return Owner{Class: OwnerLowEntropy, Bits: 4 * len(p)}, true
		}
		return Owner{Class: OwnerRandom, Bits: 4 * len(p)}, true
	case keyshape.KindBase64:
		return Owner{Class: OwnerRandom, Bits: base64Bits(p)}, true
	case keyshape.KindEpoch:
		return Owner{}, false
	}
	return Owner{}, false
}

// base64Bits estimates a random token's bits from the alphabet it
// actually uses and its length: 24 letters of both cases are 24 x
// log2(52) = 137 bits, 16 lower-case letters and digits 16 x log2(36).
func base64Bits(p string) int {
	t := strings.TrimRight(p, "=")
	var digits, lower, upper, punct bool
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		default:
			punct = true
		}
	}
	size := 0
	for _, class := range []struct {
		in bool
		n  int
	}{{digits, 10}, {lower, 26}, {upper, 26}, {punct, 2}} {
		if class.in {
			size += class.n
		}
	}
	if size < 2 {
		return 0
	}
	return int(float64(len(t)) * math.Log2(float64(size)))
}

// uniqidTime reports PHP's uniqid(): 13 hex digits, the first 8 the
// seconds and the rest microseconds - a clock, not a token.
func uniqidTime(p string, now time.Time) bool {
	if len(p) != 13 || !keyshape.IsHex(p) {
		return false
	}
	sec, err := strconv.ParseInt(p[:8], 16, 64)
	if err != nil {
		return false
	}
	t := time.Unix(sec, 0)
	return t.After(time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC)) && t.Before(now.Add(24*time.Hour))
}

// podName matches Kubernetes pod names: deployment-<hash>-<5> and
// statefulset-<ordinal>.
var podName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?-([a-z0-9]{6,10}-[a-z0-9]{5}|[0-9]{1,4})$`)

// isHostname recognises an IP, localhost, a dotted DNS name or a pod name.
func isHostname(p string) bool {
	if net.ParseIP(strings.Trim(p, "[]")) != nil || strings.EqualFold(p, "localhost") {
		return true
	}
	if podName.MatchString(p) {
		return true
	}
	labels := strings.Split(p, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i] | 0x20
			if !(c >= 'a' && c <= 'z' || l[i] >= '0' && l[i] <= '9' || l[i] == '-') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	return keyshape.HasLetter(tld) && !keyshape.HasDigit(tld)
}

// isTimePart recognises an epoch or an ISO-8601 date-time (or a piece of
// one that a ':' split left: 2021-05-12T13, 45.006Z).
func isTimePart(p string, now time.Time) bool {
	if keyshape.Classify(p, now).Kind == keyshape.KindEpoch {
		return true
	}
	if len(p) >= 10 && keyshape.IsDate(p[:10]) {
		return true
	}
	if strings.HasSuffix(p, "Z") && keyshape.AllDigits(strings.ReplaceAll(strings.TrimSuffix(p, "Z"), ".", "")) {
		return true
	}
	return false
}
