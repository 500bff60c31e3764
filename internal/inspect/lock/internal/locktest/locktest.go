// Package locktest holds what the inspect lock tests share: a client of
// the test Redis and a unique key prefix.
package locktest

import (
	"context"
	"testing"

	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// Redis connects to the test Redis and returns a unique key prefix;
// the keys prefix+suffix are deleted when the test ends.
func Redis(t *testing.T, name string, suffixes ...string) (*redis.Client, string) {
	t.Helper()
	opts, err := redis.ParseURL(testenv.Need(t, testenv.Redis))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	p := testenv.WordName(name)
	t.Cleanup(func() {
		for _, s := range suffixes {
			c.Del(context.Background(), p+s)
		}
		c.Close()
	})
	return c, p
}
