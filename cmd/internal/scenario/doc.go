// Package scenario runs a scenario: a YAML file that describes a few
// seconds of the simulated robot's life — initial state, a timeline of
// inputs and faults, the signals to record and the metrics they must meet —
// on the whole in-process stack (package stack) at full speed on the
// virtual clock. It is how CI checks the control loops for regressions:
// saint-sim --scenario FILE exits 0 only when every metric holds, and
// writes a JSON report and PNG plots of the chosen signals.
//
// Inputs go in through the same paths as on the robot: WebSocket commands
// over a real connection to the server's gateway, RC sticks through the
// simulated transmitter and the server's receiver, pushes and faults
// through the physics world and the bus. While a WebSocket command is in
// flight the virtual clock stands still, so a scenario gives the same
// result on every run and every machine. docs/scenarios.md describes the
// format.
package scenario
