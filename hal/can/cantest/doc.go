// Package cantest is an in-memory CAN bus for tests and for the simulator.
//
// A Bus is a loopback: every frame sent on it is delivered to every receiver,
// stamped with the bus's clock, the way several SocketCAN sockets on one
// interface all see a frame. Device twins (a VESC) and the code under test
// share one Bus; Sent keeps what was transmitted for assertions, and Inject
// puts a frame on the wire as if another node had sent it.
package cantest
