package judge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// family judges keys (name, value, PTTL) as the scan would and folds
// them into one family.
func family(t *testing.T, keys [][3]any) *Tally {
	t.Helper()
	var f *Tally
	for _, k := range keys {
		j := Judged{Observed: keyspace.Key{Key: k[0].(string), Type: "string", PTTL: int64(k[2].(int)), Idle: 0, Read: true,
			Value: k[1].(string)}}
		j.Segs = keyshape.Split(j.Observed.Key, testNow)
		judgeKey(&j, testNow)
		if f == nil {
			f = newFamily(keyshape.Template(j.Segs), j.Segs)
		}
		f.Add(&j, testNow, 0, DefaultMinConfidence)
	}
	return f
}

// randomToken draws n characters from alphabet, as go-zero's
// stringx.Randn does from letters and digits.
func randomToken(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestBehaviourDecidesUnnamedLocks: locks of a library no catalogue has
// read, under a name with no lock word (go-zero's RedisLock on
// order:pay:<id>: 16 letters and digits, SET NX PX 30500), are a likely
// family by what their keys do - tokens of the family's alphabet, one
// granted lease - including the draws that happened to get no digit,
// which are not low-entropy tokens.
func TestBehaviourDecidesUnnamedLocks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var keys [][3]any
	for i := range 8 {
		keys = append(keys, [3]any{fmt.Sprintf("order:pay:%d", 9000+i), randomToken(r, alnum, 16), 30_500})
	}
	keys = append(keys, [3]any{"order:pay:9100", "ZoOFdTWEjqSKqYbL", 30_500}) // no digit drawn
	f := family(t, keys)
	if c := f.Certainty(DefaultMinConfidence); c != Likely {
		t.Fatalf("certainty %s, behaviour %+v", c, f.behaviour())
	}
	out, fs := f.Report(Options{MinConfidence: DefaultMinConfidence})
	if len(fs) != 0 || len(out.Behaviour) != 3 {
		t.Errorf("findings %v, behaviour %q", fs, out.Behaviour)
	}
	if bits := f.TokenBits("ZoOFdTWEjqSKqYbL"); bits != 95 {
		t.Errorf("a letters-only draw of the family: %d bits, want 16 x log2(62) = 95", bits)
	}
}

// TestBehaviourIsNotEnoughForData: what data shares of a lock's behaviour
// does not make it one - timestamps under a lease (last-seen times), one
// token per key without a TTL (device tokens), tokens whose TTLs
// disagree, or fewer than three keys.
func TestBehaviourIsNotEnoughForData(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const hex = "0123456789abcdef"
	for name, keys := range map[string][][3]any{
		"last seen": {{"seen:user:1", "1765120000", 120_000}, {"seen:user:2", "1765120010", 120_000},
			{"seen:user:3", "1765120020", 120_000}, {"seen:user:4", "1765120030", 120_000}},
		"no TTL": {{"push:device:1", randomToken(r, hex, 64), -1}, {"push:device:2", randomToken(r, hex, 64), -1},
			{"push:device:3", randomToken(r, hex, 64), -1}},
		"TTLs apart": {{"ref:a:1", randomToken(r, hex, 32), 5_000}, {"ref:a:2", randomToken(r, hex, 32), 600_000},
			{"ref:a:3", randomToken(r, hex, 32), 3_000_000}, {"ref:a:4", randomToken(r, hex, 32), 60_000}},
		"two keys": {{"ref:b:1", randomToken(r, hex, 32), 60_000}, {"ref:b:2", randomToken(r, hex, 32), 60_000}},
	} {
		if b := family(t, keys).behaviour(); b.Likely {
			t.Errorf("%s: a likely lock family by behaviour: %q", name, b.Why)
		}
	}
}

// TestMultiKeyLocksShareNoToken: one token on each lock's fixed group of
// keys (rueidislock's rueidislock:<0..2>:<name>, a redlock over three
// resources) is the lock's design, not LOCK_TOKEN_SHARED; one token on
// every lock a process holds still is.
func TestMultiKeyLocksShareNoToken(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const hex = "0123456789abcdef"
	var multi, shared [][3]any
	for lock := range 4 {
		tok := randomToken(r, hex, 32)
		for i := range 3 {
			multi = append(multi, [3]any{fmt.Sprintf("rl:%d:settle-%d", i, lock), tok, 5_000})
		}
	}
	tok := randomToken(r, hex, 32)
	for i := range 5 {
		shared = append(shared, [3]any{fmt.Sprintf("lock:page:%d", i), tok, 60_000})
	}
	out, fs := family(t, multi).Report(Options{MinConfidence: DefaultMinConfidence})
	if slices.Contains(out.Problems, RuleTokenShared.Code) || out.MultiKey != 3 {
		t.Errorf("multi-key locks: problems %v, multi_key %d: %v", out.Problems, out.MultiKey, fs)
	}
	out, _ = family(t, shared).Report(Options{MinConfidence: DefaultMinConfidence})
	if !slices.Contains(out.Problems, RuleTokenShared.Code) {
		t.Errorf("one token on every lock of a process: problems %v, want LOCK_TOKEN_SHARED", out.Problems)
	}
}

// TestPossibleFamilyDefects: a possible family's defects that do not
// depend on what wrote it are info, with the pattern that confirms it.
func TestPossibleFamilyDefects(t *testing.T) {
	f := family(t, [][3]any{{"job:flag:1", "1", -1}, {"job:flag:2", "1", -1}})
	fs := f.PossibleDefects(Options{MinConfidence: DefaultMinConfidence}, "job:flag:*")
	var codes []string
	for _, fi := range fs {
		codes = append(codes, fi.Code)
		if fi.Severity.String() != "info" || fi.Message[:len("if these are locks (possible; confirm with {LockPatterns} 'job:flag:*')")] !=
			"if these are locks (possible; confirm with {LockPatterns} 'job:flag:*')" {
			t.Errorf("%s %s: %s", fi.Severity, fi.Code, fi.Message)
		}
	}
	if !slices.Equal(codes, []string{RuleNoTTL.Code, RuleTokenConstant.Code}) {
		t.Errorf("codes %v", codes)
	}
}
