// Package teleop turns held keys into WebSocket API commands, the same
// commands any client sends (docs/api.md, Robot control): arrows or WASD
// drive the tracks (tracks drive, and one tracks stop on release), IJKL
// move the head (head move, pan and tilt integrated at a fixed rate),
// space engages the e-stop and C clears it. A Script holds keys for given
// durations, so a run can be driven without a keyboard (saint-viz
// --script, the end-to-end test).
package teleop
