package inspect_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestLockHTMLSlotMap: inspect lock -o html on a real 3-master cluster
// draws the slot map - every master scanned, each read on itself, every
// one of the 16384 slots read - and on one server draws none.
func TestLockHTMLSlotMap(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	addrs := testenv.RedisCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	ctx := context.Background()
	for i := range 60 {
		if err := c.Set(ctx, fmt.Sprintf("lock:order:%d", i), fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", i), time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	code, page, stderr := dupctl(t, "inspect", "lock", "--redis-url", "redis://"+strings.Join(addrs, ","), "-o", "html", "--fail-on", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(page, "<p>3 masters scanned; 16,384 of 16,384 hash slots read.</p>") {
		t.Errorf("no slot map summary for the cluster:\n%s", page)
	}
	// The page gives each cell its column's name (data-label, for phone
	// cards): the row is matched whatever attributes its cells carry.
	for _, a := range addrs {
		row := regexp.MustCompile(`<tr><th [^>]*scope="row"[^>]*><code>` + regexp.QuoteMeta(a) + `</code></th>`)
		loc := row.FindStringIndex(page)
		if loc == nil {
			t.Errorf("master %s has no row in the slot map", a)
			continue
		}
		i := loc[0]
		end := i + strings.Index(page[i:], "</tr>")
		readOnItself := regexp.MustCompile(`<td[^>]*>` + regexp.QuoteMeta(a) + `</td><td[^>]*><span class="badge pass">read</span>`)
		if !readOnItself.MatchString(page[i:end]) {
			t.Errorf("master %s: %s, want read on itself", a, page[i:end])
		}
	}
	if n := strings.Count(page, `<rect class="slots read"`); n != 3 || strings.Contains(page, `class="slots unread"`) {
		t.Errorf("%d read bars, want one per master and no unread one", n)
	}

	one := testenv.RedisDB(t)
	o := one.Options()
	url := fmt.Sprintf("redis://%s/%d", o.Addr, o.DB)
	code, page, stderr = dupctl(t, "inspect", "lock", "--redis-url", url, "-o", "html", "--fail-on", "none")
	if code != 0 {
		t.Fatalf("one server: exit %d: %s", code, stderr)
	}
	if strings.Contains(page, "slot-map") || !strings.Contains(page, "keys scanned on") {
		t.Errorf("one server: want the lock page without a slot map:\n%s", page)
	}
}
