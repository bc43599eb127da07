// Package saint is the root of SAINT.OS, a robotics framework: a server that
// adopts, configures and routes commands to generic nodes, each a Raspberry
// Pi running one firmware that takes on a role (head, arms, tracks, console,
// balance) when adopted.
//
// The root package holds no code, only repository-wide tests, such as the
// import rule: roles, node and server never import the simulator or a real
// hardware backend, so the same stack runs on a robot and in simulation, and
// only cmd/ chooses between them.
//
// Layout:
//
//	hal/     hardware interfaces per bus (gpio, pwm, i2c, spi, can, uart,
//	         board), the clock and the executor; fakes in <bus>test/
//	sim/     the simulator: simulated boards (sim/board) and register-level
//	         device twins (sim/twin)
//	bus/     topics and services between processes
//	node/    the generic node
//	roles/   role logic, against hal and bus only
//	server/  adoption, firmware, routing, the web interface
//	cmd/     the programs, which pick real or simulated hardware
package saint
