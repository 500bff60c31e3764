package testenv

import "testing"

// A service pointed elsewhere by its variable is probed there, not at the
// default port (else a CI with Redis on 6380 fails every test for a server
// it never uses).
func TestProbeFollowsTheOverride(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "127.0.0.1:6379"},
		{"redis://127.0.0.1:6380/2", "127.0.0.1:6380"},
		{"redis://localhost/0", "localhost:6379"},
		{"not a url", "127.0.0.1:6379"},
	} {
		t.Setenv(Redis.Env, c.env)
		if got := Redis.hostPort(); got != c.want {
			t.Errorf("%s=%q: probes %s, want %s", Redis.Env, c.env, got, c.want)
		}
	}
}
