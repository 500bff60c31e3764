// Package progress is the small interface long-running capabilities report
// through. The terminal implementation lives in internal/platform/iostreams; a
// capability only ever sees a Meter, so it never decides whether anything is
// drawn.
package progress

// Meter receives progress of one unit of work (keys scanned, bytes read,
// schedules explored).
type Meter interface {
	// SetTotal sets the expected total; 0 means unknown.
	SetTotal(total int64)
	// Add records n more units done.
	Add(n int64)
	// Done ends the meter and clears anything drawn.
	Done()
}

// Nop is a Meter that records nothing.
var Nop Meter = nop{}

type nop struct{}

func (nop) SetTotal(int64) {}
func (nop) Add(int64)      {}
func (nop) Done()          {}

// Or returns m, or Nop when m is nil.
func Or(m Meter) Meter {
	if m == nil {
		return Nop
	}
	return m
}
