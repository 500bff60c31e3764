// Package sim is dupctl's deterministic simulator: N workers running the
// consumer flow (internal/worker) over an in-memory at-least-once broker,
// Redis lock semantics, a database ledger and a lagging status cache, with a
// virtual clock and a seeded scheduler deciding every interleaving.
//
// It is a pure step machine: no goroutine, clock or network inside. Its
// state is a plain value; the engine's enabled lists what may happen next
// and apply makes one thing happen, a worker's step being one operation of
// the flow carried out by the engine's worker.Observer (called on its
// concrete type, as worker.Interpret would call it: the hot path cannot
// afford the interface). Random exploration,
// exhaustive exploration, replay, shrinking and risk estimation are all
// drivers over those two functions, so the same seed always gives the same
// run, byte for byte.
//
// Callers drive the machine through its verbs, each
// X(ctx, XOptions) (*XResult, error) with (*XResult).Report() turning what
// it found into findings (the simulator reads nothing outside itself, so no
// verb takes dependencies):
//
//   - Run explores one scenario under one or more profiles
//     (`dupctl simulate <scenario>`);
//   - Matrix explores every scenario under every profile against the
//     documented matrix (`dupctl simulate matrix`);
//   - Replay replays a schedule from its token (`dupctl simulate replay`);
//   - Risk estimates duplicates per million jobs (`dupctl simulate risk`);
//   - Play plays one scenario's fault plan with the default policy, the
//     simulator's side of a live run (internal/sim/live).
package sim
