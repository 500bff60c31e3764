package topology

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// TestManagementShapes reads the management API's answers as RabbitMQ
// 3.x and 4.x write them: testdata/mgmt-3.10.8 was recorded from a 3.10.8
// broker (no effective_policy_definition on a fresh quorum queue, policy
// null); testdata/mgmt-4.x is written in the shapes 4.x answers with
// (policy "", effective_policy_definition [] as 4.2.5 writes it or "" as
// earlier 4.2 did, consumer_details with an auto-ack consumer). Both are
// read without error and give the same findings a broker of either
// version would.
func TestManagementShapes(t *testing.T) {
	for dir, want := range map[string][]string{
		"mgmt-3.10.8": {"TOPO_QUORUM_NO_DELIVERY_LIMIT"},
		"mgmt-4.x":    {"TOPO_AUTO_ACK_CONSUMER"},
		// No x-delivery-limit: 4.x's default of 20 applies (no finding),
		// unless the leader reports "unlimited".
		"mgmt-4.x-default":   {"TOPO_AUTO_ACK_CONSUMER"},
		"mgmt-4.x-unlimited": {"TOPO_QUORUM_NO_DELIVERY_LIMIT", "TOPO_AUTO_ACK_CONSUMER"},
	} {
		t.Run(dir, func(t *testing.T) {
			files := map[string]string{
				"/api/queues/%2F/rec-work":                   "queue-work.json",
				"/api/queues/%2F/rec-work.dlq":               "queue-dlq.json",
				"/api/exchanges/%2F/rec-dlx":                 "exchange.json",
				"/api/exchanges/%2F/rec-dlx/bindings/source": "bindings.json",
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f, ok := files[r.URL.EscapedPath()]
				if !ok {
					http.NotFound(w, r)
					return
				}
				b, err := os.ReadFile(filepath.Join("testdata", dir, f))
				if err != nil {
					t.Error(err)
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(b)
			}))
			defer srv.Close()
			m, err := NewManagement(srv.URL, "/")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, q := range []string{"rec-work", "rec-work.dlq"} {
				if _, err := m.Queue(ctx, q); err != nil {
					t.Fatalf("queue %s: %v", q, err)
				}
			}
			r := &findings.Report{}
			if err := checkQueue(ctx, r, m, Job{Name: "payments", Queue: "rec-work", DLQ: "rec-work.dlq"}, 0); err != nil {
				t.Fatalf("checkQueue: %v", err)
			}
			var got []string
			for _, f := range r.Findings {
				got = append(got, f.Code)
			}
			if !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v (%+v)", got, want, r.Findings)
			}
		})
	}
}

// TestSettingsShapes: arguments and effective policies as an object, an
// empty list, an empty string or null.
func TestSettingsShapes(t *testing.T) {
	for _, in := range []string{`{}`, `[]`, `[ ]`, `""`, `null`, `{"dead-letter-exchange":"dlx"}`} {
		var s Settings
		if err := s.UnmarshalJSON([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
		if (len(s) == 1) != (in[0] == '{' && len(in) > 2) {
			t.Errorf("%s: read as %v", in, s)
		}
	}
	var s Settings
	if err := s.UnmarshalJSON([]byte(`[1,2]`)); err == nil {
		t.Error("a non-empty list read as settings")
	}
}
