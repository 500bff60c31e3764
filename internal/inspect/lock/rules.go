package lock

import (
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Rules are every rule of `inspect lock`, for the catalog.
func Rules() []findings.Rule { return judge.Rules() }

// RuleRandomKey is the rule for a lock key built from a per-run id (doctor
// maps it to its checklist line on business keys).
var RuleRandomKey = judge.RuleRandomKey

// DefaultMinConfidence is the confidence a family needs for its findings
// to keep their warn or error severity (Options.MinConfidence 0).
const DefaultMinConfidence = judge.DefaultMinConfidence

// FormatMs shows a duration in ms rounded to two significant digits, in
// the largest unit that keeps it at least 1: 1h, 10m, 8.1s, 250ms.
func FormatMs(ms int64) string { return judge.FormatMs(ms) }

// RereadShort words what a family's second reads found, for a table
// cell: "1 renewed, 2 gone" ("" for none).
func RereadShort(t TTLStats) string { return judge.RereadShort(t.Renewed, t.Retaken, t.Gone) }

// SlotsText words hash slot ranges: "0-5460, 10923".
func SlotsText(rs []SlotRange) string { return keyspace.SlotsText(rs) }
