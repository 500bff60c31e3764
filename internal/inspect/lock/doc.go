// Package lock is `dupctl inspect lock`: every lock in a Redis server or
// cluster, found by its shape, read-only - its TTL, idle time, owner and
// the library that made it - and what is wrong with it.
//
// Run streams: SCAN per master (deduplicated with a fixed-size filter),
// one pipelined round trip per batch reading PTTL and OBJECT IDLETIME
// before the value (GETRANGE or the first HSCAN page, whichever the key's
// template needs; TYPE first, the value in a second round trip, for a
// template not typed yet; internal/keyspace), then evidence from value, TTL and
// name weighed into a confidence per key (internal/judge): candidates go to
// an aggregation per key family (the key with its varying segments
// replaced by their shape: lock:payment:order:{uuid}) into counters,
// histograms and bounded example lists; the rest is counted per family
// with why it was skipped. Memory stays the same for a thousand keys or a
// hundred million. Findings are judged per family at the end (judge):
// keys built from per-run ids, owner values that are not tokens, TTLs
// missing or far from their siblings, orphans (only across two
// observations), missing fencing counters, and Redis settings that lose
// locks - at warn or error only for families of at least
// Options.MinConfidence.
//
// Maker recognition cites, next to each rule, the library source that
// writes the bytes it matches (internal/makers); key segments get their
// shapes in internal/keyshape. This package keeps the face: Run, Options,
// Result and its JSON data, the Redis settings that lose locks, and the
// observation passes of the orphan check.
package lock
