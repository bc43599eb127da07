// Package cantest is an in-memory CAN bus for tests and for the simulator.
//
// A Bus is a loopback: every frame sent on it is delivered to every receiver,
// the sender's own included (SocketCAN with recv_own_msgs set), stamped with
// the bus's clock. Device twins (a VESC) and the code under test
// share one Bus; Sent keeps what was transmitted for assertions, and Inject
// puts a frame on the wire as if another node had sent it.
package cantest
