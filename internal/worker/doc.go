// Package worker is the consumer flow of the safe practice, written once:
// receive -> lock by key -> idempotency check / reserve -> side effect ->
// commit status -> release lock with token check -> ack, with retries,
// backoff and a DLQ.
//
// Its face, in the order a reader needs it:
//
//   - Profile: every mitigation is a switch on a Profile; Profiles and
//     ProfileByName name the bundles the simulator's matrix compares.
//   - Flow, Op, Result: the flow is a small state machine that says which
//     operation comes next given the result of the last one (Start, Next),
//     and Reached says which fault Points (Point, Of) a delivery is at.
//   - Step, Observer, Interpret: the one interpreter of an Op. Interpret
//     calls the Observer's method for the step's operation; whoever
//     carries the operation out sets the step's Result and Note, and
//     whoever records it reads them. Flow.Advance is one step of the walk.
//   - Core: the flow over real systems, through the interfaces it declares
//     (Locker, Ledger, CacheReader, Delivery, Hooks).
//
// The simulator (internal/sim) is an Observer that carries operations out
// on its in-memory state, one scheduler step at a time (its engine calls
// the methods on the concrete type, held to Interpret by a test), and
// records them with a second Observer, its timeline; the live runner
// (internal/sim/live) runs Core against Redis, PostgreSQL and RabbitMQ and
// records its steps with an Observer of its own. All of them therefore run the same
// decisions.
package worker
