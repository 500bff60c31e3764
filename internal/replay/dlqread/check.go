package dlqread

import "github.com/dupctl/dupctl/internal/platform/problem"

// Validate checks the options as given: a zero Window is refused here,
// though a read takes it for its default (500).
func (o Options) Validate() error {
	if o.Limit < 0 || o.Window < 1 {
		return problem.Inputf("Limit", "{Limit} must not be negative and {Window} must be positive")
	}
	return nil
}

// check is a verb's first step: the options with the defaults a read
// takes, validated.
func (o Options) check() error {
	if o.Window == 0 {
		o.Window = 500
	}
	return o.Validate()
}
