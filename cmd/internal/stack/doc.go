// Package stack assembles the whole simulated robot in one process: the
// server, the in-process bus, the virtual clock, the physics (sim/robot),
// the six generic nodes on their simulated boards, and the simulated RC
// transmitter on a simulated line to the server's own RC receiver.
//
// saint-sim runs it paced to the wall clock (--speed) for a person at the
// web UI; the scenario runner (package scenario) runs the same stack flat
// out to check the control loops, so both exercise exactly the code a robot
// runs. The stack also offers the faults a scenario injects: a node
// stopped, a node or the server cut off the bus.
package stack
