package connect

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/testenv"
)

func TestParseSentinel(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want Sentinel
	}{
		{"redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster",
			Sentinel{Master: "mymaster", Sentinels: []string{"127.0.0.1:26379", "127.0.0.1:26380"}}},
		{"redis+sentinel://app:s3cret@s1,s2:26390/cache/2",
			Sentinel{Master: "cache", Sentinels: []string{"s1:26379", "s2:26390"}, DB: 2, Username: "app", Password: "s3cret"}},
		{"rediss+sentinel://:p%40ss@s1/m/?sentinel_username=sen&sentinel_password=x%26y",
			Sentinel{Master: "m", Sentinels: []string{"s1:26379"}, Password: "p@ss", SentinelUsername: "sen", SentinelPassword: "x&y", TLS: true}},
		{"REDIS+SENTINEL://[::1]:26379/m", Sentinel{Master: "m", Sentinels: []string{"[::1]:26379"}}},
	} {
		got, err := ParseSentinel(tt.raw)
		if err != nil {
			t.Errorf("%s: %v", tt.raw, err)
			continue
		}
		got.raw = ""
		if !slices.Equal(got.Sentinels, tt.want.Sentinels) || got.Master != tt.want.Master || got.DB != tt.want.DB ||
			got.Username != tt.want.Username || got.Password != tt.want.Password || got.SentinelUsername != tt.want.SentinelUsername ||
			got.SentinelPassword != tt.want.SentinelPassword || got.TLS != tt.want.TLS {
			t.Errorf("%s: got %+v, want %+v", tt.raw, *got, tt.want)
		}
	}
}

// TestSentinelURLErrors: a Sentinel URL that says too little or too much
// is bad input (exit 2) naming what is wrong, never the password.
func TestSentinelURLErrors(t *testing.T) {
	for raw, want := range map[string]string{
		"redis+sentinel://:s3cret@127.0.0.1:26379":                  "no master name",
		"redis+sentinel://:s3cret@127.0.0.1:26379/":                 "no master name",
		"redis+sentinel://:s3cret@127.0.0.1:26379/m/x":              `database "x"`,
		"redis+sentinel://:s3cret@127.0.0.1:26379/m/1/2":            "want /master_name[/db]",
		"redis+sentinel://:s3cret@127.0.0.1:26379/m?master_name=x":  `unknown option "master_name"`,
		"redis+sentinel://:s3cret@/m":                               "no host",
		"redis+sentinel://:s3cret@h1,,h2/m":                         "no host",
		"redis+sentinel://:s3c/ret@127.0.0.1:26379/m":               "ends it early",
		"redis+sentinel://h:26379/m?sentinel_password=s3cret#x":     "ends it early",
		"redis+sentinel://h:26379/m?sentinel_password=s3cret&y&z=1": "ends it early",
		"redis+sentinel://127.0.0.1:1/m?sentinel_password=s3cret":   "", // read; the Sentinel is unreachable
	} {
		_, err := Redis(context.Background(), raw)
		if want == "" {
			if err == nil || isInput(err) {
				t.Errorf("%s: %v, want it read (and the Sentinel unreachable)", raw, err)
			}
			continue
		}
		var in *problem.Input
		if !errors.As(err, &in) || !strings.Contains(in.Render(nil), want) {
			t.Errorf("%s: %v, want a usage error saying %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error()+in.Render(nil), "s3c") {
			t.Errorf("%s: the error holds the password: %v", raw, err)
		}
	}
}

// TestSentinelUnreachable: no Sentinel answers: a system failure naming
// each Sentinel, redacted.
func TestSentinelUnreachable(t *testing.T) {
	raw := "redis+sentinel://app:s3cret@127.0.0.1:1,127.0.0.1:2/mymaster?sentinel_password=hunter2"
	_, err := Redis(context.Background(), raw)
	if err == nil || !isSystem(err) {
		t.Fatalf("%v, want a system failure", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cret") || strings.Contains(msg, "hunter2") || !strings.Contains(msg, "127.0.0.1:1") ||
		!strings.Contains(msg, "127.0.0.1:2") {
		t.Errorf("error: %s", msg)
	}
}

func TestIsLoopbackSentinel(t *testing.T) {
	for raw, want := range map[string]bool{
		"redis+sentinel://127.0.0.1:26379,localhost/m": true,
		"redis+sentinel://127.0.0.1,10.0.0.3/m":        false,
		"redis+sentinel://127.0.0.1/m":                 true,
	} {
		if got := IsLoopback(raw); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", raw, got, want)
		}
	}
}

// Agreed names the master every Sentinel names, a kept Node client
// reaches a data node with the URL's password (and is the same client when
// asked again), and one Sentinel that does not answer is no agreement.
func TestSentinelAgreedAndNode(t *testing.T) {
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{Password: "agreed-pw"})
	ctx := context.Background()
	sen, err := ParseSentinel(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	k := sen.Keep()
	defer k.Close()
	addr, err := k.Agreed(ctx)
	if err != nil || addr != s.MasterAddr(t) {
		t.Fatalf("Agreed: %q %v, want %s", addr, err, s.MasterAddr(t))
	}
	n := k.Node(addr)
	if role, err := n.Do(ctx, "ROLE").Slice(); err != nil || role[0] != "master" {
		t.Errorf("ROLE on %s: %v %v", addr, role, err)
	}
	if k.Node(addr) != n || k.Sentinel(sen.Sentinels[0]) != k.Sentinel(sen.Sentinels[0]) {
		t.Error("a second ask made a second client")
	}
	sen.Sentinels = append(sen.Sentinels, "127.0.0.1:1")
	if _, err := k.Agreed(ctx); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1: ") {
		t.Errorf("with a Sentinel that does not answer: %v", err)
	}
}
