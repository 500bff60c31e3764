package classify

import (
	"slices"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
)

// Filter selects which dead letters a replay takes.
type Filter struct {
	Where     []Where
	Reasons   []string
	Groups    []string
	OlderThan time.Duration
}

// Match reports whether a message passes every condition. A message whose
// death time is unknown never passes --older-than.
func (f *Filter) Match(m *deadletter.Message, in *Info, now time.Time) bool {
	if len(f.Reasons) > 0 && !slices.Contains(f.Reasons, in.Reason) {
		return false
	}
	if len(f.Groups) > 0 && !slices.Contains(f.Groups, in.Group) {
		return false
	}
	if f.OlderThan > 0 {
		at := in.DiedAt
		if at.IsZero() {
			at = m.Props.Timestamp
		}
		if at.IsZero() || now.Sub(at) < f.OlderThan {
			return false
		}
	}
	for _, w := range f.Where {
		if !w.match(m) {
			return false
		}
	}
	return true
}
