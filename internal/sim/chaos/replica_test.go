package chaos_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/testenv"
)

// The replica-lag scenario on goworker against a real streaming standby
// (testenv.PGStandby): the workers get {replica} as READ_DATABASE_URL;
// dupctl pauses the standby's WAL replay as the victim's first write goes
// to the primary and publishes a second copy when it commits. One standby
// serves every case.
func TestReplicaLag(t *testing.T) {
	sb := testenv.PGStandby(t)
	setupReplica := func(t *testing.T, switches ...string) *fixture {
		f := setup(t, "replica-lag", append([]string{"READ_DATABASE_URL={replica}", "LOCK_TTL=5s"}, switches...)...)
		f.opts.ReplicaURL, f.deps.Replica = sb.URL, sb.Standby
		f.opts.Runs, f.opts.Keys = 1, 1
		sb.CatchUp() // the worker's tables are on the standby before it reads them
		return f
	}
	notPaused := func(t *testing.T) {
		t.Helper()
		var paused bool
		if err := sb.Standby.QueryRow(context.Background(), "SELECT pg_is_wal_replay_paused()").Scan(&paused); err != nil || paused {
			t.Errorf("the standby's replay is still paused after the run (%v)", err)
		}
	}

	// A worker that asks the replica "already done?" and then acts (no
	// claim) charges twice: the second copy's read found no row.
	t.Run("status on the replica runs the effect twice", func(t *testing.T) {
		f := setupReplica(t, "STATUS=replica", "IDEM=check")
		res := f.run(t)
		only(t, res, "DUP "+cause.StaleCache.Code)
		rr := res.Runs[0]
		k := rr.Keys[0]
		for _, want := range []string{"committed on the primary", "paused its WAL replay", "read the status of", "(no row)",
			"a status read routed to a lagging replica is a stale cache"} {
			if !strings.Contains(k.Why, want) {
				t.Errorf("why %q does not say %q", k.Why, want)
			}
		}
		if k.Effects != 2 || !slices.Contains(k.Deciding, rr.Fault.Seq) || len(k.Deciding) < 4 {
			t.Errorf("%d effects, deciding %v (fault %d)\n%s", k.Effects, k.Deciding, rr.Fault.Seq, describe(res))
		}
		kinds := map[string]int{}
		for _, e := range rr.Events {
			kinds[e.Kind]++
		}
		if kinds["replica-pause"] != 1 || kinds["replica-resume"] != 1 || kinds["stale-replica-read"] == 0 {
			t.Errorf("events by kind %v: want one pause, one resume and a stale read on the replica", kinds)
		}
		notPaused(t)
	})

	// The same read on the replica, then the claim and the charge in one
	// transaction on the primary: the claim finds the key taken, one
	// charge, and the run did reach its condition.
	t.Run("claim in one transaction charges once", func(t *testing.T) {
		f := setupReplica(t, "STATUS=replica", "IDEM=txn")
		res := f.run(t)
		clean(t, res)
		if k := res.Runs[0].Keys[0]; k.Effects != 1 {
			t.Errorf("%d effects, want 1", k.Effects)
		}
		notPaused(t)
	})

	// A worker that reads its status on the primary never asks the
	// replica: one charge, but the run proves nothing about a lagging
	// replica and says so, never "ok".
	t.Run("status on the primary is not reached", func(t *testing.T) {
		f := setupReplica(t, "STATUS=db", "IDEM=check")
		f.opts.Attempts = 1
		res := f.run(t)
		rr := res.Runs[0]
		if rr.Fault != nil || rr.Keys[0].Effects != 1 ||
			!strings.Contains(rr.Missing, "no read of "+rr.Plan.Victim+" reached the replica while its replay was paused") ||
			!strings.Contains(rr.Missing, "on the primary at t=") {
			t.Fatalf("fault %+v, effects %d, missing %q\n%s", rr.Fault, rr.Keys[0].Effects, rr.Missing, describe(res))
		}
		found := false
		for _, fd := range res.Report().Findings {
			found = found || fd.Code == chaos.RuleNotReached.Code
		}
		if !found {
			t.Errorf("no %s finding: a run that never read the lagging replica passed", chaos.RuleNotReached.Code)
		}
		notPaused(t)
	})
}

// TestReplicaLagRefusesAPrimary: a "replica" that is not in recovery has
// no replay to pause; dupctl changes nothing and says so.
func TestReplicaLagRefusesAPrimary(t *testing.T) {
	f := setup(t, "replica-lag", "READ_DATABASE_URL={replica}", "STATUS=replica")
	f.opts.ReplicaURL, f.deps.Replica = f.opts.DatabaseURL, f.deps.Postgres
	_, err := chaos.Run(context.Background(), f.deps, f.opts)
	var in *problem.Input
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "not in recovery") {
		t.Fatalf("err %v, want an input error saying the replica is not in recovery", err)
	}
}

// TestReplicaLagNeedsTheReplica: the scenario needs the standby's URL and
// the workers reading through {replica}.
func TestReplicaLagNeedsTheReplica(t *testing.T) {
	base := chaos.Options{Scenario: "replica-lag", Worker: "w", Publish: ":q", EffectsSQL: "select 1, 1",
		AMQPURL: "amqp://127.0.0.1", DatabaseURL: "postgres://127.0.0.1/test"}
	for name, tc := range map[string]struct {
		replica string
		env     []string
		want    string
	}{
		"no replica URL":        {"", []string{"R={postgres}"}, "ReplicaURL"},
		"{replica} unused":      {"postgres://127.0.0.1:5433/test", []string{"R={postgres}"}, "Env"},
		"not on loopback":       {"postgres://10.1.2.3/test", []string{"R={replica}"}, ""},
		"{replica} without URL": {"", []string{"R={replica}"}, "ReplicaURL"},
	} {
		o := base
		o.ReplicaURL, o.Env = tc.replica, tc.env
		err := chaos.Validate(o)
		var in *problem.Input
		if !errors.As(err, &in) || in.Field != tc.want {
			t.Errorf("%s: err %v, want an input error about %q", name, err, tc.want)
		}
	}
}
