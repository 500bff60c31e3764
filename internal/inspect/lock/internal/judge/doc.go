// Package judge weighs what was read of each key and of each family of
// keys: the owner value's class and randomness (token.go), the evidence
// from value, TTL and name weighed into a confidence that the key is a
// lock (evidence.go), the aggregation per key family into counters,
// histograms and bounded example lists (family.go, sketch.go), and at the
// end each family's findings: keys built from per-run ids, owner values
// that are not tokens, TTLs missing or far from their siblings, orphans
// (judge.go). Its rules are every rule of inspect lock (rules.go).
package judge
