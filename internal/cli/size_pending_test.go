package cli_test

// pendingFuncs are the functions over the size limits, each at its size
// when listed (lines, cyclomatic) and why it is still whole: a figure may
// only go down, and an entry leaves when its function is split.
var pendingFuncs = map[string]funcSize{
	// runs on every key of a scan: the reply of each command read in one switch
	// (measured hot loop: bench/inspect-lock/run.sh, docs/benchmarks.md "dupctl inspect lock")
	"internal/inspect/lock/internal/keyspace/raw.go Node.apply": {46, 28},
	// runs on every console line: one switch over the timestamp layouts
	// (measured hot loop: BenchmarkTimestampLen)
	"internal/logs/console.go timestampLen": {75, 58},
	// measured hot loop: BenchmarkLine (every JSON line)
	"internal/logs/extract.go extractor.object": {110, 41},
	// measured hot loop: BenchmarkParseRFC3339 vs BenchmarkTimeParse (every timestamp, without time.Parse)
	"internal/logs/normalize.go parseRFC3339": {88, 50},
	// a table: the scenarios, one literal each (149 lines before its long
	// lines were wrapped, issue 28's second pass)
	"internal/sim/scenario.go Scenarios": {154, 1},
}

// pendingLongLines counts, per file, the lines over maxLineChars when the
// limit came in: a count may only go down.
var pendingLongLines = map[string]int{
	"internal/inspect/ttl/logs_test.go":     7,
	"internal/sim/chaos/effectslog_test.go": 3,
}
