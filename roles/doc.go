// Package roles holds the role modules compiled into the generic node
// firmware: head, arms, tracks, console and balance (spec: Role Modules).
// A role talks only to hal interfaces (through board.Board) and the bus, so
// the same code drives a simulated board and a real Raspberry Pi.
//
// When a node is adopted it builds the role with New and starts it with an
// Env holding the executor, the bus, the board and the role configuration.
// Starting claims the pins the configuration maps and puts every actuator in
// its safe state (servos at neutral, motor PWM at zero, outputs low);
// stopping returns them there and releases the pins.
package roles
