package replay

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/replay/internal/consume"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/dlqread"

	amqp "github.com/rabbitmq/amqp091-go"
)

// source is where a replay reads: a DLQ (ack removes, hold leaves) or an
// export file (nothing to settle: the journal is the record).
type source interface {
	items() <-chan consume.Item
	seen(consume.Item) error
	// ackMany acks; on an error it names the delivery tags whose ack
	// certainly never left.
	ackMany([]*item) ([]uint64, error)
	// acked is how many DLQ acks were sent or tried.
	acked() int
	hold(*item) error
	stop()
	rest() []consume.Item
	release() error
	// settle waits until the broker shows every ack and requeue applied
	// (false when it did not within budget) and returns the last reading.
	settle(ctx context.Context, others, atStart int, budget time.Duration) (dlqread.QueueState, bool)
	// generations is how many consumers the source started on the DLQ
	// (restarts for held messages and the prefetch start new ones);
	// stranded bounds the deliveries a killed node can leave with the
	// ones it cancelled (consume.Consumer.Stranded).
	generations() int
	stranded(counted int) int
	closed() <-chan *amqp.Error
	// probe reads the queue's counts (false: no queue, or no answer to
	// trust); taken is how many deliveries the consumer has seen.
	probe() (dlqread.QueueState, bool)
	taken() int
	bound() int // messages to read at most (-1: until the end)
	endReason() string
	err() error
	close()
}

type queueSource struct {
	c    *consume.Consumer
	conn *amqp.Connection
	n    int
}

func (q *queueSource) items() <-chan consume.Item { return q.c.Deliveries() }

func (q *queueSource) seen(si consume.Item) error { return q.c.Seen(si.Delivery) }

func (q *queueSource) ackMany(its []*item) ([]uint64, error) {
	tags := make([]uint64, len(its))
	for i, it := range its {
		tags[i] = it.d.DeliveryTag
	}
	return q.c.AckMany(tags)
}
func (q *queueSource) acked() int                 { return q.c.Acked() }
func (q *queueSource) hold(it *item) error        { return q.c.Hold(it.d) }
func (q *queueSource) stop()                      { _ = q.c.Stop() }
func (q *queueSource) release() error             { return q.c.ReleaseAll() }
func (q *queueSource) closed() <-chan *amqp.Error { return q.c.Closed() }

func (q *queueSource) bound() int        { return q.n }
func (q *queueSource) endReason() string { return "queue drained" }
func (q *queueSource) err() error        { return nil }
func (q *queueSource) close()            { q.conn.Close() }

func (q *queueSource) probe() (dlqread.QueueState, bool) { return q.c.Probe() }

func (q *queueSource) taken() int { return q.c.Taken() }

func (q *queueSource) settle(ctx context.Context, others, atStart int, budget time.Duration) (dlqread.QueueState, bool) {
	st, ok, err := q.c.Settle(ctx, others, atStart, budget)
	return st, ok && err == nil
}

func (q *queueSource) generations() int         { return q.c.Generations() }
func (q *queueSource) stranded(counted int) int { return q.c.Stranded(counted) }

func (q *queueSource) rest() []consume.Item {
	q.stop()
	var out []consume.Item
	for si := range q.items() {
		out = append(out, si)
	}
	return out
}

type fileSource struct {
	out  chan consume.Item
	done chan struct{}
	mu   sync.Mutex
	rerr error
	once sync.Once
}

var errStopped = errors.New("stopped")

func newFileSource(r io.Reader) *fileSource {
	f := &fileSource{out: make(chan consume.Item), done: make(chan struct{})}
	go func() {
		defer close(f.out)
		err := deadletter.ReadRecords(r, func(m *deadletter.Message) error {
			select {
			case f.out <- consume.Item{Msg: m}:
				return nil
			case <-f.done:
				return errStopped
			}
		})
		if err != nil && !errors.Is(err, errStopped) {
			f.mu.Lock()
			f.rerr = err
			f.mu.Unlock()
		}
	}()
	return f
}

func (f *fileSource) items() <-chan consume.Item        { return f.out }
func (f *fileSource) seen(consume.Item) error           { return nil }
func (f *fileSource) ackMany([]*item) ([]uint64, error) { return nil, nil }
func (f *fileSource) hold(*item) error                  { return nil }
func (f *fileSource) stop()                             { f.once.Do(func() { close(f.done) }) }
func (f *fileSource) release() error                    { return nil }
func (f *fileSource) closed() <-chan *amqp.Error        { return nil }
func (f *fileSource) probe() (dlqread.QueueState, bool) { return dlqread.QueueState{}, false }
func (f *fileSource) taken() int                        { return 0 }
func (f *fileSource) acked() int                        { return 0 }
func (f *fileSource) settle(context.Context, int, int, time.Duration) (dlqread.QueueState, bool) {
	return dlqread.QueueState{}, true
}
func (f *fileSource) generations() int  { return 0 }
func (f *fileSource) stranded(int) int  { return 0 }
func (f *fileSource) bound() int        { return -1 }
func (f *fileSource) endReason() string { return "end of file" }
func (f *fileSource) close()            { f.stop() }

func (f *fileSource) rest() []consume.Item {
	f.stop()
	for range f.out {
	}
	return nil
}

func (f *fileSource) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rerr
}
