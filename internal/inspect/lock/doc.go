// Package lock is `dupctl inspect lock`: every lock in a Redis server or
// cluster, read-only - its TTL, idle time, owner and the library that made
// it - and what is wrong with it.
//
// The scan streams: SCAN per master (deduplicated with a fixed-size
// filter), one pipeline per page reading PTTL and OBJECT IDLETIME before
// the value, and an aggregation per key family (the key with its varying
// segments replaced by their shape: lock:payment:order:{uuid}) into
// counters, histograms and bounded example lists, so memory stays the same
// for a thousand keys or a hundred million. Findings are judged per family
// at the end: keys built from per-run ids, owner values that are not
// tokens, TTLs missing or far from their siblings, orphans (only across two
// observations), missing fencing counters, and Redis settings that lose
// locks.
//
// Maker recognition cites, next to each rule, the library source that
// writes the bytes it matches (maker.go).
package lock
