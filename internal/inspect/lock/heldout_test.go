package lock_test

import (
	"cmp"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
)

// TestInspectHeldOutLibraries runs inspect lock with its defaults on a
// keyspace written by libraries dupctl's catalogue was not built from
// (issue 30: "a keyspace of other libraries and other application data"),
// each by its own code in its default layout and held live:
// testdata/npm-heldout (node-resque 9.3.8, redis-lock 1.0.0,
// node-redis-warlock 1.0.2, Bee-Queue 1.7.1, Bottleneck 2.19.5,
// express-session 1.18.1 with connect-redis 7.1.1, rate-limit-redis
// 4.2.0, rate-limiter-flexible 5.0.5, @keyv/redis 2.8.5) and
// testdata/go-heldout (gocraft/work v0.5.1, gocron-redis-lock v2.0.1,
// adjust/rmq v5.2.0, go-redis/redis_rate v10.0.1, ulule/limiter
// v3.11.2, go-redis/cache v9.0.0, rbcervilla/redisstore v9.0.0). Every
// lock is found, named and judged for what its library really does;
// nothing else is a lock or raises a warning, and the data is skipped
// saying what it is.
func TestInspectHeldOutLibraries(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if testenv.Required() {
			t.Fatalf("DUPCTL_INTEGRATION=required: no go on PATH to build testdata/go-heldout")
		}
		t.Skip("no go on PATH to build testdata/go-heldout")
	}
	c := testenv.RedisDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Its own module (go.mod, go.sum): the libraries stay out of dupctl's.
	// Built before any fixture runs: a first build downloads and compiles
	// for minutes, longer than the fixtures' one-minute leases.
	bin := filepath.Join(t.TempDir(), "heldout")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", "go-heldout")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/go-heldout: %v\n%s", err, out)
	}
	holdNodeFixture(ctx, t, "npm-heldout", c)
	golibs := exec.CommandContext(ctx, bin)
	golibs.Env = append(os.Environ(), redisURLEnv(c))
	holdFixture(t, golibs)

	// The CLI's defaults (--max-ttl 1h).
	res, err := lock.Run(ctx, c, lock.Options{All: true, Top: 100, MaxTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	d, rep := &res.Data, res.Report()

	// The locks, and what their libraries make of them: findings a
	// library's own design earns stay (a timestamp for a token, a host
	// for a leader), none other.
	type want struct {
		maker     string
		problems  []string
		certainty string // "" is confirmed
	}
	locks := map[string]want{
		// TheDeveloper/warlock lib/warlock.js lock: <key>:lock = base64 of a uuid v1.
		"export:{int}:lock": {"node-redis-warlock", nil, ""},
		// errorception/redis-lock index.js: lock.<name> = its expiry in ms, released by an unchecked DEL.
		"lock.{id}": {"redis-lock", []string{"LOCK_TOKEN_LOW_ENTROPY"}, ""},
		// actionhero/node-resque src/plugins/QueueLock.ts: a dedup key per job and arguments.
		`resque:lock:sendInvoice:billing:[{"invoiceId":{int}}]`: {"node-resque", nil, ""},
		// src/plugins/JobLock.ts: held while the job runs, its expiry time for a value.
		"resque:workerslock:rebuildIndex:search:{id}": {"node-resque", []string{"LOCK_TOKEN_LOW_ENTROPY"}, ""},
		// src/core/scheduler.ts tryForLeader: <hostname>:<pid>.
		"resque:resque_scheduler_leader_lock": {"node-resque", []string{"LOCK_TOKEN_HOST"}, ""},
		// gocraft/work redis.go redisLuaEnqueueUnique: 1, EX 86400.
		"shop-work:unique:export_report:{\"report_id\":{int}}\n": {"gocraft-work", []string{"LOCK_TTL_LONG"}, ""},
		// redis.go redisLuaFetchJob: the MaxConcurrency count, no TTL by design.
		"shop-work:jobs:send_receipt:lock": {"gocraft-work", nil, ""},
		// gocron-redis-lock (go-co-op/gocron-redis-lock redislock.go Lock:
		// a redsync mutex named by the job alone) names its locks by
		// nothing but the job: no catalogue entry and no lock word, a
		// likely lock family by what its keys do (redsync's random
		// tokens, one lease) - issue 42.
		"{id}": {"redsync", nil, "likely"},
	}
	lockFamilies := map[string]bool{}
	for _, f := range d.Families {
		lockFamilies[f.Template] = true
		w, ok := locks[f.Template]
		if !ok {
			t.Errorf("%q (%s, %d keys, %v, e.g. %v) taken for a lock family", f.Template, f.Certainty, f.Keys, f.Makers, f.Examples)
			continue
		}
		delete(locks, f.Template)
		if cert := cmp.Or(w.certainty, "confirmed"); f.Certainty != cert || f.Makers[w.maker] != f.Keys {
			t.Errorf("%q: %s, makers %v; want all %d %s %s", f.Template, f.Certainty, f.Makers, f.Keys, cert, w.maker)
		}
		if !slices.Equal(f.Problems, w.problems) && !(len(f.Problems) == 0 && w.problems == nil) {
			t.Errorf("%q: problems %v, want %v", f.Template, f.Problems, w.problems)
		}
	}
	for tmpl, w := range locks {
		t.Errorf("%s locks %q not found; skipped: %+v", w.maker, tmpl, d.Skipped)
	}
	var possible []string
	for _, p := range d.Possible {
		possible = append(possible, p.Template+" -> "+p.Suggest)
	}
	if len(possible) > 0 {
		t.Errorf("possible families %q, want none", possible)
	}
	for _, fi := range rep.Findings {
		if fi.Severity >= findings.Warn && !lockFamilies[fi.Subject] {
			t.Errorf("%s %s %s: %s", fi.Severity, fi.Code, fi.Subject, fi.Message)
		}
	}

	// The data, skipped saying what it is: by the library that keeps it
	// (catalogue entries of role queue or data) or by its shape.
	why := map[string]string{}
	for _, s := range d.Skipped {
		reasons := slices.Sorted(maps.Keys(s.Reasons))
		for _, ex := range s.Examples {
			why[ex] = strings.Join(reasons, "; ")
		}
	}
	for prefix, reason := range map[string]string{
		"rl:": "rate-limit-redis", "rlflx:": "rate-limiter-flexible", "rate:user:": "redis_rate", "limiter:": "a rate limit",
		"sess:": "a session", "session:": "a session", "product:": "document value", "keyv:product:": "document value",
		"bq:thumbnails:stallBlock": "Bee-Queue", "b_mail-api_job_weights": "Bottleneck", "rmq::connection::": "adjust/rmq",
		"resque:worker:": "node-resque", "shop-work:jobs:send_receipt:lock_info": "lock companion",
	} {
		found := false
		for ex, r := range why {
			if strings.HasPrefix(ex, prefix) {
				found = true
				if !strings.Contains(r, reason) {
					t.Errorf("%s skipped as %q, want %q", ex, r, reason)
				}
			}
		}
		if !found {
			t.Errorf("no %s* key among the skipped: %v", prefix, why)
		}
	}
}
