package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/store"
)

// TestPartitioned: declaratively partitioned idempotency tables on the real
// PostgreSQL, one per way of splitting rows. A partition key outside the
// idempotency key makes every unique index per-partition, and the data
// proves it: the same key in two partitions.
func TestPartitioned(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`
		CREATE TABLE {s}.by_month (idempotency_key text NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL,
		  CONSTRAINT by_month_key UNIQUE (idempotency_key, created_at)) PARTITION BY RANGE (created_at);
		CREATE TABLE {s}.by_month_2026_11 PARTITION OF {s}.by_month FOR VALUES FROM ('2026-11-01') TO ('2026-12-01');
		CREATE TABLE {s}.by_month_2026_12 PARTITION OF {s}.by_month FOR VALUES FROM ('2026-12-01') TO ('2027-01-01');
		CREATE TABLE {s}.by_month_2027_01 PARTITION OF {s}.by_month FOR VALUES FROM ('2027-01-01') TO ('2027-02-01');
		CREATE TABLE {s}.by_month_2027_02 PARTITION OF {s}.by_month FOR VALUES FROM ('2027-02-01') TO ('2027-03-01');
		INSERT INTO {s}.by_month VALUES
		  ('pay:1', 'SUCCEEDED', '2026-11-30T23:59:58Z'), ('pay:1', 'SUCCEEDED', '2026-12-01T00:00:03Z'),
		  ('pay:2', 'SUCCEEDED', '2026-12-01T10:00:00Z'), ('pay:2', 'FAILED', '2026-12-01T10:00:05Z'),
		  ('pay:3', 'SUCCEEDED', '2026-12-01T11:00:00Z');

		CREATE TABLE {s}.by_region (idempotency_key text NOT NULL, region text NOT NULL, status text NOT NULL,
		  PRIMARY KEY (idempotency_key, region)) PARTITION BY LIST (region);
		CREATE TABLE {s}.by_region_eu PARTITION OF {s}.by_region FOR VALUES IN ('eu');
		CREATE TABLE {s}.by_region_us PARTITION OF {s}.by_region FOR VALUES IN ('us');
		CREATE TABLE {s}.by_region_other PARTITION OF {s}.by_region DEFAULT;
		INSERT INTO {s}.by_region VALUES ('pay:1', 'eu', 'SUCCEEDED'), ('pay:1', 'us', 'SUCCEEDED'), ('pay:2', 'eu', 'SUCCEEDED');

		CREATE TABLE {s}.by_hash (idempotency_key text PRIMARY KEY, status text NOT NULL) PARTITION BY HASH (idempotency_key);
		CREATE TABLE {s}.by_hash_0 PARTITION OF {s}.by_hash FOR VALUES WITH (MODULUS 4, REMAINDER 0);
		CREATE TABLE {s}.by_hash_1 PARTITION OF {s}.by_hash FOR VALUES WITH (MODULUS 4, REMAINDER 1);
		CREATE TABLE {s}.by_hash_2 PARTITION OF {s}.by_hash FOR VALUES WITH (MODULUS 4, REMAINDER 2);
		CREATE TABLE {s}.by_hash_3 PARTITION OF {s}.by_hash FOR VALUES WITH (MODULUS 4, REMAINDER 3);
		INSERT INTO {s}.by_hash SELECT 'pay:' || i, 'SUCCEEDED' FROM generate_series(1, 100) i;

		CREATE TABLE {s}.tenant_month (tenant_id int NOT NULL, idempotency_key text NOT NULL, status text NOT NULL,
		  created_at timestamptz NOT NULL, UNIQUE (tenant_id, idempotency_key, created_at)) PARTITION BY LIST (tenant_id);
		CREATE TABLE {s}.tenant_month_1 PARTITION OF {s}.tenant_month FOR VALUES IN (1) PARTITION BY RANGE (created_at);
		CREATE TABLE {s}.tenant_month_1_2026_11 PARTITION OF {s}.tenant_month_1 FOR VALUES FROM ('2026-11-01') TO ('2026-12-01');
		CREATE TABLE {s}.tenant_month_1_2026_12 PARTITION OF {s}.tenant_month_1 FOR VALUES FROM ('2026-12-01') TO ('2027-01-01');
		CREATE TABLE {s}.tenant_month_2 PARTITION OF {s}.tenant_month FOR VALUES IN (2);
		INSERT INTO {s}.tenant_month VALUES (1, 'pay:1', 'SUCCEEDED', '2026-11-30T23:59:59Z'), (1, 'pay:1', 'SUCCEEDED', '2026-12-01T00:00:01Z'),
		  (2, 'pay:1', 'SUCCEEDED', '2026-12-01T00:00:01Z');

		CREATE TABLE {s}.tenant_hash (tenant_id int NOT NULL, idempotency_key text NOT NULL, status text NOT NULL,
		  PRIMARY KEY (tenant_id, idempotency_key)) PARTITION BY LIST (tenant_id);
		CREATE TABLE {s}.tenant_hash_1 PARTITION OF {s}.tenant_hash FOR VALUES IN (1) PARTITION BY HASH (idempotency_key);
		CREATE TABLE {s}.tenant_hash_1_0 PARTITION OF {s}.tenant_hash_1 FOR VALUES WITH (MODULUS 2, REMAINDER 0);
		CREATE TABLE {s}.tenant_hash_1_1 PARTITION OF {s}.tenant_hash_1 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
		CREATE TABLE {s}.tenant_hash_2 PARTITION OF {s}.tenant_hash FOR VALUES IN (2);

		CREATE TABLE {s}.by_expr (idempotency_key text NOT NULL, status text NOT NULL, created_at timestamp NOT NULL)
		  PARTITION BY RANGE (date_trunc('month', created_at));
		CREATE TABLE {s}.by_expr_2026_12 PARTITION OF {s}.by_expr FOR VALUES FROM ('2026-12-01') TO ('2027-01-01');
		CREATE TABLE {s}.by_lower (idempotency_key text NOT NULL, status text NOT NULL) PARTITION BY HASH (lower(idempotency_key));
		CREATE TABLE {s}.by_lower_0 PARTITION OF {s}.by_lower FOR VALUES WITH (MODULUS 1, REMAINDER 0)`)

	// The database itself refuses the fix a plain table would get: proof
	// that the finding's reason is PostgreSQL's rule, not dupctl's.
	_, err := fx.Admin.Exec(context.Background(), "CREATE UNIQUE INDEX ON "+fx.table("by_month")+" (idempotency_key)")
	if err == nil || !strings.Contains(err.Error(), "must include all partitioning columns") {
		t.Fatalf("unique index on the key alone of a partitioned table: %v", err)
	}
	// Hash on the key: the same key can never be written twice.
	_, err = fx.Admin.Exec(context.Background(), "INSERT INTO "+fx.table("by_hash")+" VALUES ('pay:7', 'SUCCEEDED')")
	if err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("second row for a key in a hash-partitioned table: %v", err)
	}

	all := []string{store.CheckCatalog, store.CheckDuplicates}
	cases := []struct {
		table, key string
		coverage   string
		want       []string
		describe   string
		across     int64 // -1: not counted
		message    string
	}{
		{table: "by_month", coverage: "unique only within one partition: unique constraint by_month_key (idempotency_key, created_at)",
			want:     []string{"error STORE_DUPLICATE_KEYS", "error STORE_UNIQUE_PER_PARTITION"},
			describe: "RANGE (created_at), 4 partitions", across: 1,
			message: "partitioned by RANGE (created_at): by_month_key (idempotency_key, created_at) is unique only within one partition; " +
				"the same key written with a created_at of another partition is a second row"},
		{table: "by_region", coverage: "unique only within one partition: primary key by_region_pkey (idempotency_key, region)",
			want:     []string{"error STORE_DUPLICATE_KEYS", "error STORE_UNIQUE_PER_PARTITION"},
			describe: "LIST (region), 3 partitions", across: 1},
		{table: "by_hash", coverage: "unique: primary key by_hash_pkey (idempotency_key)",
			describe: "HASH (idempotency_key), 4 partitions", across: 0},
		{table: "tenant_month", key: "tenant_id,idempotency_key",
			coverage: "unique only within one partition: unique constraint tenant_month_tenant_id_idempotency_key_created_at_key " +
				"(tenant_id, idempotency_key, created_at)",
			want:     []string{"error STORE_DUPLICATE_KEYS", "error STORE_UNIQUE_PER_PARTITION"},
			describe: "LIST (tenant_id), 3 partitions; level 1: RANGE (created_at) in 1", across: 1},
		{table: "tenant_hash", key: "tenant_id,idempotency_key", coverage: "unique: primary key tenant_hash_pkey (tenant_id, idempotency_key)",
			describe: "LIST (tenant_id), 3 partitions; level 1: HASH (idempotency_key) in 1", across: 0},
		{table: "by_expr", coverage: "not unique: no unique index or constraint on the key",
			want:     []string{"error STORE_NO_UNIQUE_KEY", "error STORE_UNIQUE_PER_PARTITION"},
			describe: "RANGE (date_trunc('month'::text, created_at)), 1 partition", across: 0,
			message: "partitioned by RANGE (date_trunc('month'::text, created_at)), outside the key (idempotency_key): " +
				"no unique index on the key alone is possible here, so nothing stops a key from landing in two partitions"},
		// An expression of the key alone still sends one key to one
		// partition; the missing unique index is the ordinary finding.
		{table: "by_lower", coverage: "not unique: no unique index or constraint on the key",
			want: []string{"error STORE_NO_UNIQUE_KEY"}, describe: "HASH (lower(idempotency_key)), 1 partition", across: 0},
		// A partition read alone: its line says so; its own index is judged as
		// a plain table's.
		{table: "by_month_2026_12", coverage: "not fully unique: by_month_2026_12_idempotency_key_created_at_key (extra columns)",
			want: []string{"error STORE_DUPLICATE_KEYS", "error STORE_UNIQUE_TOO_WIDE"}, across: -1,
			describe: "a partition of " + fx.Name + ".by_month: only its own rows are read (inspect the partitioned table)"},
	}
	for _, c := range cases {
		rep, res := fx.inspect(store.Options{Table: fx.table(c.table), KeyColumns: c.key, Checks: all})
		tr := res.Tables[0]
		if tr.Coverage != c.coverage {
			t.Errorf("%s: coverage %q, want %q", c.table, tr.Coverage, c.coverage)
		}
		if got := codes(rep); !slices.Equal(got, c.want) {
			t.Errorf("%s: findings %q, want %q", c.table, got, c.want)
		}
		if tr.Partitioning == nil || tr.Partitioning.Describe() != c.describe {
			t.Errorf("%s: partitioning %+v, want %q", c.table, tr.Partitioning, c.describe)
		}
		switch d := tr.Duplicates; {
		case c.across < 0 && d.AcrossPartitions != nil:
			t.Errorf("%s: counted keys across partitions of a partition: %d", c.table, *d.AcrossPartitions)
		case c.across >= 0 && (d.AcrossPartitions == nil || *d.AcrossPartitions != c.across):
			t.Errorf("%s: keys across partitions %v, want %d", c.table, d.AcrossPartitions, c.across)
		}
		if c.message != "" {
			if f := finding(t, rep, "STORE_UNIQUE_PER_PARTITION"); f.Message != c.message {
				t.Errorf("%s: message\n%s\nwant\n%s", c.table, f.Message, c.message)
			}
		}
	}

	// The evidence: every level's key, the first leaves, the keys in two
	// partitions; the duplicate rows say where each one is.
	rep, _ := fx.inspect(store.Options{Table: fx.table("by_month"), Checks: all})
	f := finding(t, rep, "STORE_UNIQUE_PER_PARTITION")
	want := []string{
		"partitioning: RANGE (created_at), 4 partitions (" +
			"by_month_2026_11 FOR VALUES FROM ('2026-11-01 00:00:00+00') TO ('2026-12-01 00:00:00+00'); " +
			"by_month_2026_12 FOR VALUES FROM ('2026-12-01 00:00:00+00') TO ('2027-01-01 00:00:00+00'); " +
			"by_month_2027_01 FOR VALUES FROM ('2027-01-01 00:00:00+00') TO ('2027-02-01 00:00:00+00'); 1 more)",
		"a unique index on (idempotency_key) alone is refused: it must include the partition key column(s) created_at",
		`keys in more than one partition today: 1 ("pay:1" in by_month_2026_11 and by_month_2026_12)`,
	}
	if !slices.Equal(f.Evidence, want) {
		t.Errorf("evidence\n%q\nwant\n%q", f.Evidence, want)
	}
	dup := finding(t, rep, "STORE_DUPLICATE_KEYS")
	wantDup := []string{
		`key "pay:1": 2 rows: SUCCEEDED created_at 2026-11-30T23:59:58Z in by_month_2026_11; ` +
			`SUCCEEDED created_at 2026-12-01T00:00:03Z in by_month_2026_12`,
		`key "pay:2": 2 rows: SUCCEEDED created_at 2026-12-01T10:00:00Z in by_month_2026_12; ` +
			`FAILED created_at 2026-12-01T10:00:05Z in by_month_2026_12`,
	}
	wantMsg := "2 keys have more than one row (4 rows, 2 extra); 1 of them in more than one partition"
	if dup.Message != wantMsg || !slices.Equal(dup.Evidence, wantDup) {
		t.Errorf("duplicates: %s\n%q\nwant\n%q", dup.Message, dup.Evidence, wantDup)
	}

	// The catalog alone still judges the partitioning, without the data.
	rep, _ = fx.inspect(store.Options{Table: fx.table("tenant_month"), KeyColumns: "tenant_id,idempotency_key",
		Checks: []string{store.CheckCatalog}})
	f = finding(t, rep, "STORE_UNIQUE_PER_PARTITION")
	wantEv := "partitioning: LIST (tenant_id), 3 partitions; level 1: RANGE (created_at) in 1 ("
	if len(f.Evidence) != 2 || !strings.HasPrefix(f.Evidence[0], wantEv) {
		t.Errorf("catalog only: %q", f.Evidence)
	}
}
