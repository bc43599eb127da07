// Package control holds the balance loop's arithmetic, free of hardware
// and time sources so that it can be tested on its own: the complementary
// filter that turns the QMI8658's accelerometer and gyroscope into a pitch
// angle, a PID controller, and Balancer, the cascade the saul-tee base runs
// at 1 kHz: a speed loop choosing the lean, the pitch PID turning lean
// error into wheel current, and a yaw-rate loop splitting it between the
// wheels.
//
// Conventions follow the simulator and the VESC wiring: pitch positive
// leaning forward, yaw positive turning left, positive current drives a
// wheel forward. Angles are in degrees at the interfaces (gains in A per
// degree, as the reference's console takes them) and in radians inside.
package control
