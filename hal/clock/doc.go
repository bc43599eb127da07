// Package clock defines the Clock that every SAINT.OS process takes its time
// from, with two implementations: Real (wall time, on a robot) and Virtual
// (discrete-event time, in the simulator and in tests).
//
// Role, router and node code does not call time.Now or time.Sleep; it runs on
// an executor (package hal/executor) that owns a Clock. That single rule is
// what makes a simulated robot deterministic: same scenario and seed, same
// result, bit for bit.
package clock
