package connect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/testenv"
)

func TestIsLoopback(t *testing.T) {
	for raw, want := range map[string]bool{
		"redis://127.0.0.1:6379":                  true,
		"redis://localhost:6379/0":                true,
		"redis://127.0.0.1:7000,127.0.0.1:7001":   true,
		"redis://127.0.0.1:7000,10.0.0.2:7001":    false,
		"postgres://u:p@[::1]:5432/db":            true,
		"postgres://u:p@db.internal:5432/db":      false,
		"amqp://guest:guest@127.0.0.2:5672/":      true,
		"host=127.0.0.1 user=x dbname=y":          true,
		"host=prod.example.com user=x dbname=y":   false,
		"postgres:///test?host=/var/run/postgres": false,
	} {
		if got := IsLoopback(raw); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", raw, got, want)
		}
	}
}

func TestErrorsAreRedactedAndClassified(t *testing.T) {
	ctx := context.Background()
	// A closed port on loopback: refused at once.
	_, err := Redis(ctx, "redis://:s3cret@127.0.0.1:1/0")
	if err == nil || !isSystem(err) || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "cannot reach Redis") {
		t.Errorf("Redis: %v", err)
	}
	_, err = Postgres(ctx, "postgres://u:s3cret@127.0.0.1:1/db", PostgresOptions{})
	if err == nil || !isSystem(err) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Postgres: %v", err)
	}
	_, err = AMQP(ctx, "amqp://u:s3cret@127.0.0.1:1/")
	if err == nil || !isSystem(err) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("AMQP: %v", err)
	}
	for _, bad := range []string{"http://x", "redis//x"} {
		if _, err := Redis(ctx, bad); !isInput(err) {
			t.Errorf("Redis(%q): %v, want a usage error", bad, err)
		}
	}
	if _, err := Redis(ctx, ""); err == nil || !strings.Contains(err.Error(), "{RedisURL}") {
		t.Errorf("empty URL: %v", err)
	}
}

func TestConnectToServices(t *testing.T) {
	ctx := context.Background()
	r, err := Redis(ctx, testenv.Need(t, testenv.Redis))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	p, err := Postgres(ctx, testenv.Need(t, testenv.Postgres), PostgresOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var ro string
	if err := p.QueryRow(ctx, "SHOW default_transaction_read_only").Scan(&ro); err != nil || ro != "on" {
		t.Errorf("read-only session: %q %v", ro, err)
	}
	if _, err := p.Exec(ctx, "CREATE TEMP TABLE dupctl_should_fail(x int)"); err == nil {
		t.Error("a read-only session created a table")
	}
	p.Close()
	a, err := AMQP(ctx, testenv.Need(t, testenv.AMQP))
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
}

func isSystem(err error) bool {
	var u *problem.Unavailable
	return errors.As(err, &u)
}

func isInput(err error) bool {
	var in *problem.Input
	return errors.As(err, &in)
}

// TestDialsEndWithTheirContext: against a port that accepts and never
// answers, every dial ends when its context does (--timeout, Ctrl-C),
// long before DialTimeout, and says which it was.
func TestDialsEndWithTheirContext(t *testing.T) {
	addr := testenv.Blackhole(t)
	dials := map[string]func(ctx context.Context) error{
		"redis": func(ctx context.Context) error {
			_, err := Redis(ctx, "redis://:pw@"+addr+"/0")
			return err
		},
		"redis cluster": func(ctx context.Context) error {
			_, err := Redis(ctx, "redis://:pw@"+addr+","+addr)
			return err
		},
		"amqp": func(ctx context.Context) error {
			_, err := AMQP(ctx, "amqp://u:pw@"+addr+"/")
			return err
		},
		"postgres": func(ctx context.Context) error {
			_, err := Postgres(ctx, "postgres://u:pw@"+addr+"/db", PostgresOptions{})
			return err
		},
	}
	for name, dial := range dials {
		t.Run(name+"/timeout", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := dial(ctx)
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %s with a 300ms context", el)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("want a deadline error, got %v", err)
			}
		})
		t.Run(name+"/interrupt", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			err := dial(ctx)
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %s after a cancel at 300ms", el)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("want a cancellation, got %v", err)
			}
		})
	}
}

func TestURLsWithoutHostAreRefused(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{"redis://", "redis://:pw@", "amqp://", "amqps://", "postgres://", "postgresql:///db"} {
		var err error
		switch {
		case strings.HasPrefix(raw, "redis"):
			_, err = Redis(ctx, raw)
		case strings.HasPrefix(raw, "amqp"):
			_, err = AMQP(ctx, raw)
		default:
			_, err = Postgres(ctx, raw, PostgresOptions{})
		}
		if !isInput(err) || !strings.Contains(err.Error(), "no host") {
			t.Errorf("%q: %v, want an input error saying there is no host", raw, err)
		}
	}
}

func TestUnparsableURLsDoNotLeak(t *testing.T) {
	ctx := context.Background()
	for _, pw := range []string{"Zq/Secret9", "Zq#Secret9", "Zq?Secret9", "Zq Secret9"} {
		for _, scheme := range []string{"amqp", "redis", "postgres"} {
			raw := scheme + "://guest:" + pw + "@127.0.0.1:1/x"
			var err error
			switch scheme {
			case "redis":
				_, err = Redis(ctx, raw)
			case "amqp":
				_, err = AMQP(ctx, raw)
			default:
				_, err = Postgres(ctx, raw, PostgresOptions{})
			}
			if err == nil || strings.Contains(err.Error(), "Secret9") {
				t.Errorf("%s: %v", raw, err)
			}
		}
	}
}

// TestNoPermission reads Redis's NOPERM wordings: 6.x/7.0 ("this user
// has no permissions to run the 'info' command") and 7.2+ ("User u has no
// permissions ..."), a key refusal, and errors that are not NOPERM.
func TestNoPermission(t *testing.T) {
	for msg, want := range map[string]struct {
		cmd    string
		denied bool
	}{
		"NOPERM this user has no permissions to run the 'info' command":                   {"info", true},
		"NOPERM User reader has no permissions to run the 'PING' command":                 {"ping", true},
		"NOPERM this user has no permissions to run the 'object|idletime' command":        {"object|idletime", true},
		"NOPERM this user has no permissions to access one of the keys used as arguments": {"", true},
		"WRONGTYPE Operation against a key holding the wrong kind of value":               {"", false},
		"dial tcp 127.0.0.1:1: connect: connection refused":                               {"", false},
	} {
		cmd, denied := NoPermission(msg)
		if cmd != want.cmd || denied != want.denied {
			t.Errorf("NoPermission(%q) = %q %v, want %q %v", msg, cmd, denied, want.cmd, want.denied)
		}
	}
}
