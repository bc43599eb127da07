// Package encoder is the simulator's quadrature encoder: from the shaft
// angle the physics gives it, it drives the A and B lines with the edges a
// real encoder would produce, in the right order and with timestamps
// spread evenly between one update and the next, so that the decoder in
// hal/device/encoder counts and times them as on a robot.
//
// Counts follow the decoder's convention: CountsPerRev edges per
// revolution (4 per line of the code wheel), A leading B when the angle
// grows. A shaft that moves more than MaxEdgesPerUpdate counts in one
// update jumps straight to its new state, which a decoder sees as illegal
// transitions, as it would on a real encoder spun too fast.
//
// # Physics-facing API
//
//	enc := encoder.New(pinA, pinB, encoder.Options{CountsPerRev: 2048})
//	enc.SetAngle(wheelRadians, now)   // each physics step
//
// Lines are anything with Set(level, time): a *gpiotest.Pin, or a
// simulated board's pin through BoardLine. Either way each edge carries
// its interpolated time, the instant the shaft crossed it, so counts and
// the speed a decoder measures from edge timestamps are both exact.
package encoder
