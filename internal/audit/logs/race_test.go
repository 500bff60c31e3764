//go:build race

package logs

// underRace: the race detector slows the corpus tests about tenfold; CI
// runs them with it, `go test ./...` without it at full size.
const underRace = true
