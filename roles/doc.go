// Package roles is the registry of the role modules compiled into the
// generic node firmware: head, arms, tracks, console and balance, one
// package each below this one. When a node is adopted it looks the
// configuration's role up with New and starts it with a rolekit.Env holding
// the executor, the bus, the board and the role configuration.
//
// A role talks only to hal interfaces (through board.Board) and the bus, so
// the same code drives a simulated board and a real Raspberry Pi. Every
// role is built on rolekit: starting claims the pins the configuration
// maps and puts every actuator in its safe state (servos at neutral, motor
// PWM at zero, outputs low); stopping returns them there and releases the
// pins. Beside the roles: power (the INA219 supply monitor the arms and
// tracks share) and motor (the arms' motor middleware).
package roles
