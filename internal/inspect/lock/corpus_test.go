package lock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestCorpusLibrariesBesideAppData seeds locks written byte for byte as
// the catalogue's cited sources write them, beside application data of
// the same shapes (carts, id caches, presence, offers, sessions, rate
// limits, counters, job libraries' queues, throttle counters at 1), and
// checks with default settings: no non-lock key at warn or error or among
// the locks, every library found and named, every planted problem found.
func TestCorpusLibrariesBesideAppData(t *testing.T) {
	p := testenv.WordName("corpus")
	// Every key is read (no pattern): a database of its own, so no other
	// test's keys join these families.
	c := testenv.RedisDB(t)
	ctx := context.Background()
	set := func(k, v string, ttl time.Duration) {
		if err := c.Set(ctx, k, v, ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	const uuid = "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"
	for i := range 6 {
		n := fmt.Sprint(i)
		// Locks, as their libraries write them.
		// python-redis-lock, expire=None
		set("lock:"+p+"-report-"+n, []string{"u/NJwtqJ8DmQ6Lx0oP3RkE+s", "hBvQzKPLmwRtXgaNcYdeJfSu", "Qm9x/ZkLp2+aB7cD9eF1gH3i"}[i%3], 0)
		// pottery / RedLock.net
		set("redlock:"+p+"-printer-"+n, fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", 0x8d0c5a00+i), 10*time.Second)
		// Hangfire: one OwnerId per process
		set("{hangfire}:"+p+":lock:recurring-"+n, uuid, 30*time.Second)
		// celery_once
		set("qo_"+p+"_send_invoice_invoice_id-"+n, fmt.Sprintf("5b0f3e0ab7d111ef9c3e0242ac1200%02d", i), time.Hour)
		// WithoutOverlapping, no expireAfter
		set("laravel_database_laravel_cache_:"+p+":laravel-queue-overlap:App\\Jobs\\Sync:"+n, "Xq3LkP9aZ2mN7vB"+n, 0)
		// redlock-php uniqid()
		set(p+":lock:php:"+n, fmt.Sprintf("6752f1a3c9e4%x", i), 5*time.Second)
		// pid@host
		set(p+":lock:java:"+n, fmt.Sprintf("%d@worker-%d.internal", 4000+i, i), time.Minute)
		// a 4-digit token
		set(p+":lock:pin:"+n, fmt.Sprint(4821+i), time.Minute)
		// Symfony Lock
		c.ZAdd(ctx, p+":x-pdf-report-"+n, redis.Z{Score: 1.7646699e12, Member: "r0fQk0Yl7w6hY1n4c1Zq9J0bq1G3k3o2bV5n1w8t0X" + n + "="})
		c.PExpire(ctx, p+":x-pdf-report-"+n, 5*time.Minute)
		// Application data of the same shapes.
		c.HSet(ctx, p+":cart:"+n, uuid+":"+n, "2", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed:1", "1") // no TTL
		set(p+":user:"+n+":org", uuid, time.Minute)                                               // a shared org id for 60 s
		set(p+":presence:user:"+n, "Xy3_kL9aB2cD4eF6gH8"+n, time.Minute)                          // a socket id
		set(p+":order:"+n+":offer", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed", time.Minute)          // a courier for each order
		set(p+":session:"+n, `{"user_id":42}`, time.Hour)
		set(p+":ratelimit:user:"+n, "17", time.Minute)
		set(p+":stats:views:"+n, "1234", 0)
		c.RPush(ctx, "bull:"+p+":wait", n)
		c.HSet(ctx, "bull:"+p+":"+n, "name", "welcome", "data", "{}")
		c.RPush(ctx, "queue:"+p, `{"class":"X","jid":"2b9c7f6e5d4c3b2a19080706"}`)
		// Rack::Attack throttle counters (rack/rack-attack lib/rack/attack/
		// cache.rb key_and_expiry: rack::attack:<epoch / period>:<name>:
		// <discriminator>, INCRBY then EXPIRE): half the clients at their
		// first request, holding 1.
		set("rack::attack:29847123:"+p+"-req/ip:10.0.0."+n, fmt.Sprint([]int{1, 4, 1, 7, 1, 2}[i]), time.Minute)
	}
	res, err := lock.Run(ctx, c, lock.Options{All: true, Top: 0})
	if err != nil {
		t.Fatal(err)
	}
	d, rep := &res.Data, res.Report()
	// A family is this test's when its example keys are (a template may
	// have lost the prefix to a placeholder: lock:{id}).
	ours := map[string]string{}
	for _, f := range d.Families {
		if len(f.Examples) > 0 && strings.Contains(f.Examples[0], p) {
			ours[f.Template] = f.Examples[0]
		}
	}
	mine := func(s string) bool { return strings.Contains(s, p) || ours[s] != "" }
	appData := []string{":cart:", ":org", ":presence:", ":offer", ":session:", ":ratelimit:", ":stats:", "bull:", "queue:", "rack::attack:"}
	named := map[string]string{}
	for _, f := range d.Families {
		if !mine(f.Template) {
			continue
		}
		for _, bad := range appData {
			if strings.Contains(f.Template, bad) {
				t.Errorf("application data %s taken for %s locks", f.Template, f.Certainty)
			}
		}
		for m := range f.Makers {
			named[ours[f.Template]] = m
		}
	}
	for _, fi := range rep.Findings {
		if !mine(fi.Subject) || fi.Severity < 1 {
			continue
		}
		fi.Subject = ours[fi.Subject] + " " + fi.Subject
		for _, bad := range appData {
			if strings.Contains(fi.Subject, bad) {
				t.Errorf("%s %s about application data %s", fi.Severity, fi.Code, fi.Subject)
			}
		}
	}
	for want, maker := range map[string]string{"lock:": "python-redis-lock", "redlock:": "pottery/redlock.net",
		"{hangfire}:": "hangfire-redis", "qo_": "celery-once", "laravel-queue-overlap": "laravel", "-pdf-report-": "symfony-lock",
		":lock:php:": "redlock-php"} {
		found := false
		for tmpl, m := range named {
			if strings.Contains(tmpl, want) && m == maker {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s family named %s: %v", want, maker, named)
		}
	}
	codesOf := func(part string) []string {
		var out []string
		for _, fi := range rep.Findings {
			if mine(fi.Subject) && strings.Contains(ours[fi.Subject]+" "+fi.Subject, part) {
				out = append(out, fi.Code)
			}
		}
		slices.Sort(out)
		return out
	}
	for part, code := range map[string]string{"lock:" + p + "-report": "LOCK_NO_TTL", "laravel-queue-overlap": "LOCK_NO_TTL",
		":lock:php:": "LOCK_TOKEN_LOW_ENTROPY", ":lock:java:": "LOCK_TOKEN_HOST", ":lock:pin:": "LOCK_TOKEN_LOW_ENTROPY"} {
		if !slices.Contains(codesOf(part), code) {
			var fams []string
			for _, f := range d.Families {
				if strings.Contains(ours[f.Template]+" "+f.Template, part) {
					fams = append(fams, fmt.Sprintf("%s: %d keys, %s, confidence %.2f, signals %v", f.Template, f.Keys, f.Certainty,
						f.Confidence, f.Signals))
				}
			}
			for _, f := range d.Possible {
				if strings.Contains(f.Template, part) {
					fams = append(fams, fmt.Sprintf("possible %+v", f))
				}
			}
			var now []string // what Redis says of the keys now (idle time and PTTL weigh the TTL signal)
			for _, k := range c.Keys(ctx, "*"+part+"*").Val() {
				now = append(now, fmt.Sprintf("%s idle %v pttl %v", k, c.ObjectIdleTime(ctx, k).Val(), c.PTTL(ctx, k).Val()))
			}
			msg := fmt.Sprintf("%s: findings %v, want %s; families %v; keys now %v", part, codesOf(part), code, fams, now)
			t.Errorf("%s", msg)
		}
	}
	if got := codesOf("{hangfire}"); slices.Contains(got, "LOCK_TOKEN_SHARED") {
		t.Errorf("Hangfire's process-wide OwnerId reported as shared: %v", got)
	}
}
