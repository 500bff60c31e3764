package inspect_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestInspectLockLearn: with --learn, the commands seen decide. A worker
// takes locks with SET NX PX and releases them by compare-and-delete
// under a name with no lock word and a value no token-shaped reading
// would call a lock (a counter); another writes its data with a plain
// SET and a TTL. The locks are confirmed, the data is skipped as data,
// each saying what was seen. A user without +monitor is refused with a
// line naming the permission (exit 3).
func TestInspectLockLearn(t *testing.T) {
	p := testenv.WordName("learn")
	c, url := adminClient(t, p)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	release := `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ctx.Err() == nil; n++ {
			// Long-held locks, and one taken and released each turn.
			c.SetNX(ctx, fmt.Sprintf("%s:slot:%d", p, n%5), 1000+n, time.Minute)
			c.SetNX(ctx, fmt.Sprintf("%s:slot:%d", p, 100+n), 1000+n, time.Minute)
			c.Eval(ctx, release, []string{fmt.Sprintf("%s:slot:%d", p, 100+n)}, 1000+n)
			c.Set(ctx, fmt.Sprintf("%s:profile:%d", p, n%5), fmt.Sprint(n), time.Minute)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(100 * time.Millisecond)

	code, stdout, stderr := dupctl(t, "inspect", "lock", "--redis-url", url, "--pattern", p+":*", "--learn", "1s", "-o", "json",
		"--fail-on", "none")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	r := parse(t, stdout)
	var learned bool
	for _, f := range r.Data.Families {
		if f.Template != p+":slot:{int}" {
			t.Errorf("family %s (%s) taken for locks", f.Template, f.Certainty)
			continue
		}
		learned = f.Certainty == "confirmed" && strings.Contains(strings.Join(f.Behaviour, "; "), "seen while learning")
	}
	if !learned {
		t.Errorf("the SET NX PX locks not confirmed by what was seen: %+v", r.Data.Families)
	}
	// Confirmed, their counter values are what they are: weak tokens.
	for _, f := range r.Findings {
		if f.Subject == p+":slot:{int}" && f.Code != "LOCK_TOKEN_LOW_ENTROPY" && f.Code != "LOCK_FENCING_ABSENT" {
			t.Errorf("%s on the locks", f.Code)
		}
	}
	var data bool
	for _, s := range r.Data.Skipped {
		for why := range s.Reasons {
			data = data || s.Template == p+":profile:{int}" && strings.Contains(why, "seen while learning") && strings.Contains(why, "without NX")
		}
	}
	if !data {
		t.Errorf("the plain SET data not skipped as seen written: %+v", r.Data.Skipped)
	}

	ro := aclUser(t, c, url, p+"_reader", "~*", "-@all", "+@read")
	code, _, stderr = dupctl(t, "inspect", "lock", "--redis-url", ro, "--pattern", p+":*", "--learn", "1s")
	if code != 3 || !strings.Contains(stderr, "MONITOR refused") || !strings.Contains(stderr, "+monitor") {
		t.Errorf("without +monitor: exit %d, stderr %s", code, stderr)
	}
}
