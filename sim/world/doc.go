// Package world is the simulator's physics world: a fixed-step,
// deterministic loop that advances every registered model by the same step,
// in the order the models were added, as a periodic event on the process's
// executor (1 kHz by default).
//
// Determinism rests on three rules. The step length is fixed, and models
// receive it as a number, never a clock reading, so a world paced to the wall
// clock (saint-sim --speed 1) computes exactly what a world run flat out
// (--speed 0) computes. Models step in a fixed order. Noise comes only from
// random streams the world derives from its seed and the stream's name
// (Rand), never from global state. The same seed therefore gives a
// bit-identical trajectory, which Hash summarises.
//
// # Ground truth
//
// With a bus, the world publishes at Options.TruthRate (50 Hz by default)
// the SimWorld clock on /saint/sim/world and each model's ground truth
// (models implementing Truther) on /saint/sim/truth/{model}. Publications
// are made from the step itself, so they too are deterministic.
//
// # Disturbances
//
// Push and Impulse apply a force to a body (any model implementing
// Pushable, or a body added with AddBody) for a duration; CutLink and
// RestoreLink disconnect and reconnect a named link (sim/robot registers
// each chip's I²C connection, servo bus and CAN node); Kill and Revive stop
// and restart a named device (a motor, a servo). The same operations are a
// bus service, /saint/sim/disturb, taking msg.SimDisturbRequest. Timed
// disturbances count physics steps, so they too are deterministic.
package world
