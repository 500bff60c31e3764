package dlqread

import (
	"testing"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Reads back to back count exactly what is in the queue: each read ends
// only when the messages it took are back, and starts only when an
// earlier reader's are (issue 21: four stats in a row on 20,000 dead
// letters printed 20,000, 8,501, 19,000 and 1,151).
func TestBackToBackReadsCountTheSame(t *testing.T) {
	const n = 20_000
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			r := dlqtest.NewRig(t, qt)
			must(t, r.Ch.Confirm(false))
			body := []byte(`{"orderId":1}`)
			for i := 0; i < n; i++ {
				_, err := r.Ch.PublishWithDeferredConfirmWithContext(t.Context(), "", r.DLQ, false, false, amqp.Publishing{Body: body})
				must(t, err)
			}
			r.WaitCount(r.DLQ, n)
			for i := 0; i < 5; i++ {
				none := func(*deadletter.Message) error { return nil }
				res, err := readQueue(t.Context(), Deps{Dial: r.Dial}, Options{Queue: r.DLQ}, none, false, nil)
				must(t, err)
				if res.AtStart.Messages != n || res.Read != n || !res.Settled {
					t.Fatalf("read %d: %d at the start, %d read, settled %v; want %d, %d, true", i+1, res.AtStart.Messages, res.Read, res.Settled, n, n)
				}
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	dlqtest.Must(t, err)
}
