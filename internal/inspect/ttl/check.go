package ttl

import (
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/worker"
)

// ParseTZ reads the zone of log times written without one (TZ): an IANA
// name, or UTC.
func ParseTZ(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, problem.Inputf("TZ", "{TZ} %q: unknown time zone: want an IANA name such as Europe/Berlin, or UTC", name)
	}
	return loc, nil
}

// ParseProfiles reads the profiles a simulation compares
// (SimulateOptions.Profiles) by name.
func ParseProfiles(names []string) ([]worker.Profile, error) {
	var out []worker.Profile
	for _, name := range names {
		p, err := worker.ProfileByName(name)
		if err != nil {
			return nil, problem.Inputf("Profiles", "%w", err)
		}
		out = append(out, p)
	}
	return out, nil
}
