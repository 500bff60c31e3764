package lock

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/testenv"
)

// TestRenewedLeaseIsNoTTLOutlier: three families of 60 s leases, each with
// one odd lock. A 100 ms lease renewed (PEXPIRE) every 50 ms reads far
// below its family's TTL at the scan's instant; read again a moment
// later its TTL went up under the same owner: no outlier, counted as
// renewed. A 100 ms lease taken by a new owner every 50 ms: no outlier,
// counted as re-taken. A 3 s lease and a 1 s lease nobody renews are
// outliers still: each is read again before its TTL runs out (the 1 s one
// after 0.8 s, not when the 3 s one is, 1 s after the scan).
func TestRenewedLeaseIsNoTTLOutlier(t *testing.T) {
	c := testenv.RedisDB(t)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for _, fam := range []string{"lease", "retaken", "short", "brief"} {
		for i := 1; i <= 8; i++ {
			if err := c.Set(ctx, fmt.Sprintf("lock:%s:order:%d", fam, i), uuid(i), time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Set(ctx, "lock:short:order:9", uuid(9), 3*time.Second)
	c.Set(ctx, "lock:brief:order:9", uuid(9), time.Second)
	c.Set(ctx, "lock:lease:order:9", uuid(9), 100*time.Millisecond)
	c.Set(ctx, "lock:retaken:order:9", uuid(0), 100*time.Millisecond)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			c.PExpire(ctx, "lock:lease:order:9", 100*time.Millisecond)             // the same owner renews
			c.Set(ctx, "lock:retaken:order:9", uuid(1000+n), 100*time.Millisecond) // a new owner takes it
		}
	}()
	time.Sleep(200 * time.Millisecond) // the renewer runs

	res, err := Run(context.Background(), c, Options{Top: 50})
	if err != nil {
		t.Fatal(err)
	}
	outliers := map[string][]string{}
	for _, f := range res.Findings {
		if f.Code == judge.RuleTTLOutlier.Code {
			outliers[f.Subject] = f.Evidence
		}
	}
	ttl := map[string]TTLStats{}
	for _, f := range res.Data.Families {
		ttl[f.Template] = f.TTL
	}
	if s := ttl["lock:lease:order:{int}"]; outliers["lock:lease:order:{int}"] != nil || s.OutliersBelow != 0 || s.Renewed != 1 {
		t.Errorf("renewed lease: outlier finding %q, ttl %+v: want none, 1 renewed", outliers["lock:lease:order:{int}"], s)
	}
	if s := ttl["lock:retaken:order:{int}"]; outliers["lock:retaken:order:{int}"] != nil || s.OutliersBelow != 0 ||
		s.Retaken+s.Gone != 1 {
		t.Errorf("re-taken lease: outlier finding %q, ttl %+v: want none, 1 re-taken", outliers["lock:retaken:order:{int}"], s)
	}
	for _, fam := range []string{"short", "brief"} {
		tmpl := "lock:" + fam + ":order:{int}"
		ev := strings.Join(outliers[tmpl], "\n")
		if s := ttl[tmpl]; s.OutliersBelow != 1 || s.Renewed+s.Retaken+s.Gone != 0 ||
			!strings.Contains(ev, "lock:"+fam+":order:9: TTL") || !strings.Contains(ev, "read again, its TTL had only fallen") {
			t.Errorf("%s: a lease nobody renews among 60 s ones: outlier evidence %q, ttl %+v: want it an outlier", tmpl, ev, s)
		}
	}
	t.Logf("notes: %q", res.Data.Notes)
}

func uuid(i int) string { return fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", 0x8d0c5a00+i) }
