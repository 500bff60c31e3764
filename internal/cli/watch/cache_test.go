package watch_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestWatchCacheDisagreements gives the cache check a job's status cache
// on the real Redis (keys under a prefix of their own) and its table on the
// real PostgreSQL: a key done in the database that the cache says is still
// PROCESSING is counted under its finding code, for the table.
func TestWatchCacheDisagreements(t *testing.T) {
	s := testenv.NewPGSchema(t, "watch_cache")
	s.Exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL);
		INSERT INTO {s}.jobs VALUES ('1', 'SUCCEEDED', now() - interval '1 hour'), ('2', 'SUCCEEDED', now() - interval '1 hour'),
			('3', 'SUCCEEDED', now() - interval '1 hour')`)
	redisURL := testenv.Need(t, testenv.Redis)
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	prefix := testenv.UniqueName("watch_cache")
	ctx := context.Background()
	t.Cleanup(func() { testenv.DeleteKeys(ctx, rdb, prefix) })
	for key, status := range map[string]string{"1": "SUCCEEDED", "2": "PROCESSING", "3": "SUCCEEDED"} {
		if err := rdb.Set(ctx, prefix+":job:status:"+key, status, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	table := s.Name + ".jobs"
	cfg := writeConfig(t, fmt.Sprintf("jobs:\n  - name: payment\n    cache_pattern: %q\n    idempotency:\n      table: %s\n",
		prefix+":job:status:{key}", table))
	addr := runWatch(t, "--config", cfg, "--redis-url", redisURL, "--database-url", testenv.Need(t, testenv.Postgres),
		"--checks", "cache", "--check-interval", "cache=1s", "--check-timeout", "cache=30s")
	body := scrape(t, addr, "the cache check's disagreements", func(m string) bool {
		return value(m, `dupctl_cache_disagreements{code="CACHE_NOT_DONE_DB_SUCCEEDED",table="`+table+`"}`) == 1
	})
	// The three keys were written without a TTL: a class of its own.
	if got := value(body, `dupctl_cache_disagreements{code="CACHE_NO_TTL",table="`+table+`"}`); got != 3 {
		t.Errorf("CACHE_NO_TTL entries = %g, want 3:\n%s", got, grepLines(body, "dupctl_cache"))
	}
	if value(body, `dupctl_findings{check="cache",code="CACHE_NOT_DONE_DB_SUCCEEDED",severity="warn"}`) != 1 {
		t.Errorf("finding not counted:\n%s", grepLines(body, "dupctl_findings"))
	}
	if strings.Contains(body, prefix) {
		t.Error("a cache key is a label value")
	}
}
