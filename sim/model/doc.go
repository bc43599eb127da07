// Package model is the home of the simulator's physics models, one
// subpackage each: a hobby servo (servo), the head (head), the arms (arm), a
// brushed DC motor (dcmotor), a battery (battery), the skid-steer tracked
// base (tracks), the wheeled inverted pendulum of the balancing base
// (balance), and a simple pendulum (pendulum) that exists to check the
// integrators against analytic answers. ode holds the integrator and geom the
// 3-D vector and capsule geometry the models share.
//
// Models speak SI units and physics, not wires: torque, voltage and pulse
// width go in; angles, rates, currents and IMU readings come out. The
// simulator's world (sim/world) steps them at a fixed rate, and sim/robot
// connects them to the simulated boards' pins and chip twins. Keeping the two
// apart lets every model be tested against its equations alone.
//
// Every model is deterministic: it holds no clock and no global random
// state. A model that adds sensor noise takes a *rand.Rand seeded by the
// world. Inputs that make no physical sense (NaN, infinities, negative step
// lengths) are ignored rather than allowed to poison the state, so a bad
// command can never crash the simulator.
package model
