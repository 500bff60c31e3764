package replay

import (
	"math"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Validate checks the options as given: a zero Window or an empty
// Router.Via is refused here, though Replay's first step takes them for
// its defaults (1, ViaQueue) before it checks.
func (o ReplayOptions) Validate() error {
	if (o.Queue == "") == (o.File == "") {
		return problem.Inputf("", "give exactly one of {Queue} or {File}")
	}
	if o.Window < 1 || o.Max < 0 || o.Rate < 0 || o.MaxReplays < 0 || o.MaxBounces < 0 {
		return problem.Inputf("Window", "{Window} must be positive; {Max}, {Rate}, {MaxReplays} and {MaxBounces} must not be negative")
	}
	if math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		return problem.Inputf("Rate", "{Rate} %v: want a finite number of messages per second (0: no limit)", o.Rate)
	}
	if err := o.Router.Validate(); err != nil {
		return err
	}
	if o.RetryInDoubt && o.Resume == nil {
		return problem.Inputf("RetryInDoubt", "{RetryInDoubt} needs {Resume} JOURNAL")
	}
	if o.Rewrite.Run != "" {
		if err := CheckRunID(o.Rewrite.Run); err != nil {
			return err
		}
	}
	return o.Filter.Validate()
}

// CheckRunID checks a run's name (Rewrite.Run): it goes into a header
// and the connection names.
func CheckRunID(id string) error {
	if strings.ContainsAny(id, " \t\r\n") || len(id) > 100 {
		return problem.Inputf("Run", "{Run} %q: at most 100 characters, no spaces", id)
	}
	return nil
}

// ParseSucceeded reads what to do with messages already done: leave (in
// the DLQ) or park; park is ParkSucceeded.
func ParseSucceeded(s string) (park bool, err error) {
	switch s {
	case "leave":
		return false, nil
	case "park":
		return true, nil
	}
	return false, problem.Inputf("ParkSucceeded", "{ParkSucceeded} %q: want leave or park", s)
}
