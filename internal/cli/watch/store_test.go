package watch_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestWatchStoreStuckRows gives the store check a job's idempotency table
// on the real PostgreSQL (a schema of its own) with rows stuck in
// PROCESSING for two hours and a key written twice (no unique
// constraint), and sees both gauges name the table - and no key.
func TestWatchStoreStuckRows(t *testing.T) {
	s := testenv.NewPGSchema(t, "watch_store")
	s.Exec(`CREATE TABLE {s}.idempotency_keys (idempotency_key text NOT NULL, status text NOT NULL,
		created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
		INSERT INTO {s}.idempotency_keys SELECT 'key-' || g, 'SUCCEEDED', now() - interval '3 hours', now() - interval '3 hours'
			FROM generate_series(1, 50) g;
		INSERT INTO {s}.idempotency_keys VALUES
			('key-stuck-1', 'PROCESSING', now() - interval '2 hours', now() - interval '2 hours'),
			('key-stuck-2', 'PROCESSING', now() - interval '2 hours', now() - interval '2 hours'),
			('key-7', 'SUCCEEDED', now() - interval '1 hour', now() - interval '1 hour');
		ANALYZE {s}.idempotency_keys`)
	table := s.Name + ".idempotency_keys"
	cfg := writeConfig(t, fmt.Sprintf("jobs:\n  - name: payment\n    idempotency:\n      table: %s\n      key_column: idempotency_key\n"+
		"      status_column: status\n", table))
	addr := runWatch(t, "--config", cfg, "--database-url", testenv.Need(t, testenv.Postgres), "--check-interval", "store=1s")
	body := scrape(t, addr, "the stuck rows and the duplicated key of the table", func(m string) bool {
		return value(m, `dupctl_store_stuck_processing_rows{table="`+table+`"}`) == 2 &&
			value(m, `dupctl_store_duplicate_keys{table="`+table+`"}`) == 1
	})
	if value(body, `dupctl_check_up{check="store"}`) != 1 {
		t.Errorf("store check not up:\n%s", grepLines(body, "dupctl_check"))
	}
	for _, key := range []string{"key-stuck-1", "key-7"} {
		if strings.Contains(body, `"`+key+`"`) {
			t.Errorf("key %s is a label value", key)
		}
	}
}

// writeConfig writes a dupctl.yaml of the test's own and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "dupctl.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}
