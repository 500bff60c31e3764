package testenv

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ManagementFixture serves a recorded RabbitMQ management API from dir
// (vhost "/"): nodes.json for /api/nodes, queues.json for the vhost's queue
// list, queue-<name>.json for one queue; anything else is a 404, as the
// API answers for a queue it does not show. It returns the server's URL.
func ManagementFixture(t testing.TB, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		file := ""
		switch p := r.URL.EscapedPath(); {
		case p == "/api/nodes":
			file = "nodes.json"
		case p == "/api/queues/%2F":
			file = "queues.json"
		case strings.HasPrefix(p, "/api/queues/%2F/"):
			file = "queue-" + strings.TrimPrefix(p, "/api/queues/%2F/") + ".json"
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if file == "" || err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
