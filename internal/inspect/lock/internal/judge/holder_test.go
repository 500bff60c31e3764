package judge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// hashFamily judges hash keys (name, fields, PTTL) as the scan would and
// folds them into one family.
func hashFamily(t *testing.T, keys []keyspace.Key) *Tally {
	t.Helper()
	var f *Tally
	for _, o := range keys {
		o.Type, o.Read = "hash", true
		j := Judged{Observed: o}
		j.Segs = keyshape.Split(o.Key, testNow)
		judgeKey(&j, testNow)
		if f == nil {
			f = newFamily(keyshape.Template(j.Segs), j.Segs)
		}
		f.Add(&j, testNow, 0, DefaultMinConfidence)
	}
	return f
}

func uuid4(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()&(1<<48-1))
}

// TestHolderHashUnderALockWord: a lock that keeps its holder in a hash of
// one named field (ioredfour's lock:<job id> = {index: <global counter>},
// PEXPIRE) is a lock by its lock word, its TTL and its small hash - no
// record of named fields - and, keyed by a random job id, is
// LOCK_KEY_RANDOM_ID at warn; the field's name is no owner shared by the
// family's locks. Without the lock word, or with a record's several named
// fields, the same keys are no likely locks.
func TestHolderHashUnderALockWord(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := func(prefix string, fields func(i int) []string) []keyspace.Key {
		var out []keyspace.Key
		for i := range 6 {
			out = append(out, keyspace.Key{Key: prefix + uuid4(r), PTTL: 60_000, Fields: fields(i)})
		}
		return out
	}
	index := func(i int) []string { return []string{"index", fmt.Sprint(1 + i)} } // a global counter from 1
	f := hashFamily(t, keys("lock:", index))
	if c := f.Certainty(DefaultMinConfidence); c != Likely {
		t.Fatalf("lock:<uuid> {index: n}: certainty %s, want likely", c)
	}
	out, fs := f.Report(Options{MinConfidence: DefaultMinConfidence})
	var codes []string
	for _, fi := range fs {
		codes = append(codes, fi.Code+" "+fi.Severity.String())
	}
	if !slices.Contains(codes, RuleRandomKey.Code+" warn") || slices.Contains(out.Problems, RuleTokenShared.Code) ||
		slices.Contains(out.Problems, RuleTokenConstant.Code) {
		t.Errorf("findings %v, want %s at warn, no %s, no %s", codes, RuleRandomKey.Code, RuleTokenShared.Code, RuleTokenConstant.Code)
	}

	for name, ks := range map[string][]keyspace.Key{
		"no lock word": keys("job:", index),
		"a record": keys("lock:", func(i int) []string {
			return []string{"name", "user", "email", "u@example.com", "plan", "pro"}
		}),
	} {
		if c := hashFamily(t, ks).Certainty(DefaultMinConfidence); c >= Likely {
			t.Errorf("%s: certainty %s, want below likely", name, c)
		}
	}
}

// TestTTLAloneMakesNoCandidate: a key whose only evidence for a lock is
// its lease TTL (a last-seen time under two minutes) is no lock
// candidate, not even a possible one; the same value under a lock word
// is.
func TestTTLAloneMakesNoCandidate(t *testing.T) {
	seen := fmt.Sprint(testNow.Add(-30 * time.Second).Unix())
	for key, want := range map[string]bool{"seen:user:601": false, "lock:user:601": true} {
		j := Judged{Observed: keyspace.Key{Key: key, Type: "string", PTTL: 120_000, Read: true, Value: seen}}
		j.Segs = keyshape.Split(key, testNow)
		judgeKey(&j, testNow)
		if got := j.Certainty > NotLock; got != want {
			t.Errorf("%s = %s, PTTL 2m: certainty %s (signals %v)", key, seen, j.Certainty, j.Verdict.Set.Names())
		}
	}
}

// TestLeaseReadAcrossTheIdleClocksSecond: a 2-minute lease read 0.3 s
// after it was taken (PTTL 119700) shows OBJECT IDLETIME 1 as often as 0;
// either way it is a lease, so one family's keys do not fall on both
// sides of the edge (those read at idle 1 were no candidates, and the
// family shrank to a possible one of the rest).
func TestLeaseReadAcrossTheIdleClocksSecond(t *testing.T) {
	for _, idle := range []int64{0, 1} {
		var v Verdict
		v.weighTTL(&keyspace.Key{PTTL: 119_700, Idle: idle})
		if !v.Set.has(sigLeaseTTL) {
			t.Errorf("PTTL 119700, idle %d s: %v, want a lease", idle, v.Set.Names())
		}
	}
	var v Verdict
	v.weighTTL(&keyspace.Key{PTTL: 119_700, Idle: 3})
	if v.Set.has(sigLeaseTTL) {
		t.Errorf("PTTL 119700, idle 3 s (granted over 2m): %v, want no lease", v.Set.Names())
	}
}
