package worker

// RiskRow is one profile's expected damage, per million jobs: what the
// simulator's risk mode estimates and inspect ttl reports, defined here
// because both speak of profiles and neither may import the other.
type RiskRow struct {
	Profile            string  `json:"profile"`
	Jobs               int     `json:"jobs"`
	LockExpiriesPerM   float64 `json:"lock_expiries_per_million"`
	DuplicatesPerM     float64 `json:"duplicates_per_million"`
	LossesPerM         float64 `json:"losses_per_million"`
	DeadLetteredPerM   float64 `json:"dead_lettered_per_million"`
	DuplicatesCI95High float64 `json:"duplicates_per_million_ci95_high"`
}
