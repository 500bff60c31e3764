package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/dupctl/dupctl/internal/worker"
)

func urls(t *testing.T) (string, string, string) {
	return testenv.Need(t, testenv.Redis), testenv.Need(t, testenv.Postgres), testenv.Need(t, testenv.AMQP)
}

// TestLiveVerdictsEqualVirtual is the live mode's contract: for the five
// scenarios of the issue, under every profile, the real servers find a
// duplicate (and a loss) exactly when the simulator does for the same plan.
func TestLiveVerdictsEqualVirtual(t *testing.T) {
	redisURL, pgURL, amqpURL := urls(t)
	profiles := worker.Profiles()
	if testing.Short() {
		profiles = nil
		for _, n := range []string{"naive", "lock-check", "safe"} {
			p, _ := worker.ProfileByName(n)
			profiles = append(profiles, p)
		}
	}
	for _, name := range []string{"crash", "lock-expiry", "redelivery", "race", "unlock-no-token"} {
		sc, _ := sim.ScenarioByName(name)
		plan := sim.Plans()[name]
		for _, p := range profiles {
			if Playable(p) != nil {
				continue // the replica profile: TestReplicaProfileNotPlayable
			}
			t.Run(name+"/"+p.Name, func(t *testing.T) {
				cfg := sc.Config(p)
				virtual, err := sim.Play(context.Background(), sim.PlayOptions{Scenario: name, Config: cfg, Plan: plan})
				if err != nil {
					t.Fatal(err)
				}
				want := sim.OutcomeOf(virtual.Found)
				o := Options{Scenario: name, Config: cfg, Plan: plan, RedisURL: redisURL, PGURL: pgURL, AMQPURL: amqpURL, Scale: 20 * time.Millisecond}
				out := playLive(t, o)
				// A verdict that differs counts only from a run that kept the
				// plan's timing: no actor more than a virtual second behind it
				// (the servers' timers are the reference), half the plans'
				// narrowest margin, so no two events of the plan can swap. A
				// machine too busy for that plays another schedule than the
				// simulator's, so the run is played again, slower. How far
				// behind a run fell is measured, never guessed.
				for again := 0; sim.OutcomeOf(out.Found) != want && out.Slip > o.Scale && again < 2; again++ {
					t.Logf("live %s fell %s behind the plan's timing at %s per virtual second: again, four times slower",
						sim.OutcomeOf(out.Found), out.Slip.Round(time.Millisecond), o.Scale)
					o.Scale *= 4
					out = playLive(t, o)
				}
				if got := sim.OutcomeOf(out.Found); got != want {
					t.Errorf("live %s (effects %d, DLQ %d, %s behind the plan's timing), virtual %s", got, out.Effects, out.DeadLettered, out.Slip, want)
					for _, ev := range out.Timeline.Events {
						t.Logf("%8s %-5s %s", sim.FormatMillis(ev.T), ev.Lane, ev.Text)
					}
				}
			})
		}
	}
}

func playLive(t *testing.T, o Options) *Result {
	t.Helper()
	out, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLiveLeavesNothingBehind: queues, schema and keys are gone after a
// run, also when its context is cancelled midway - once its schema exists
// (its queues are declared before it), however long that took.
func TestLiveLeavesNothingBehind(t *testing.T) {
	redisURL, pgURL, amqpURL := urls(t)
	sc, _ := sim.ScenarioByName("lock-expiry")
	p, _ := worker.ProfileByName("lock-check")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started, cut := make(chan string, 1), make(chan struct{})
	go cancelOnceSchemaExists(ctx, t, pgURL, started, cut, cancel)
	var prefix string
	_, err := Run(ctx, Options{Scenario: sc.Name, Config: sc.Config(p), Plan: sim.Plans()[sc.Name], RedisURL: redisURL, PGURL: pgURL,
		AMQPURL: amqpURL, OnStart: func(p string) { prefix = p; started <- p }})
	select {
	case <-cut:
	default:
		t.Fatalf("the run ended before its schema was seen (err %v)", err)
	}
	if err == nil {
		t.Fatal("a run cancelled midway reported success")
	}
	assertNoLeftovers(t, prefix, redisURL, pgURL, amqpURL)

	// And after a complete run.
	out, err := Run(context.Background(), Options{Scenario: "crash", Config: sc.Config(p), Plan: sim.Plans()["crash"], RedisURL: redisURL,
		PGURL: pgURL, AMQPURL: amqpURL, OnStart: func(p string) { prefix = p }})
	if err != nil {
		t.Fatal(err)
	}
	if out.Effects == 0 {
		t.Fatal("the complete run ran no side effect")
	}
	assertNoLeftovers(t, prefix, redisURL, pgURL, amqpURL)
}

// cancelOnceSchemaExists cancels a run once the schema named by the
// prefix it is told has been created, and then closes cut.
func cancelOnceSchemaExists(ctx context.Context, t *testing.T, pgURL string, started <-chan string, cut chan<- struct{},
	cancel context.CancelFunc) {
	pool, err := connect.Postgres(context.Background(), pgURL, connect.PostgresOptions{MaxConns: 1})
	if err != nil {
		t.Error(err)
		return
	}
	defer pool.Close()
	var prefix string
	select {
	case prefix = <-started:
	case <-ctx.Done():
		return
	}
	for ctx.Err() == nil {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, prefix).Scan(&n)
		if err == nil && n > 0 {
			close(cut)
			cancel()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRefusesRemote(t *testing.T) {
	err := CheckTargets(false, "redis://127.0.0.1:6379", "postgres://u:pw@db.example.com/x")
	if err == nil || !strings.Contains(err.Error(), "{AllowRemote}") || strings.Contains(err.Error(), ":pw@") {
		t.Fatalf("err = %v", err)
	}
	if err := CheckTargets(true, "postgres://db.example.com/x"); err != nil {
		t.Fatal(err)
	}
}

// TestReplicaProfileNotPlayable: a live run has no read replica, so a
// profile that reads status there is refused before anything is dialled,
// never played against the primary under its name.
func TestReplicaProfileNotPlayable(t *testing.T) {
	sc, _ := sim.ScenarioByName("replica-lag")
	p, _ := worker.ProfileByName("replica")
	_, err := Run(context.Background(), Options{Scenario: sc.Name, Config: sc.Config(p), RedisURL: "redis://127.0.0.1:1/0",
		PGURL: "postgres://postgres@127.0.0.1:1/x", AMQPURL: "amqp://guest:guest@127.0.0.1:1/"})
	if err == nil || !strings.Contains(err.Error(), "reads status from a read replica, and a live run has none") {
		t.Fatalf("live run of the replica profile: %v", err)
	}
}
