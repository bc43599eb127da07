// Package scene is what the visualizer knows about the robot, built from
// WebSocket state updates (Apply): the simulator's ground truth (topic
// "sim", present only under saint-sim), the tracks' odometry and state,
// the balancing base's telemetry, both arms, the head, node status and the
// router's routes and e-stop; trails of the tracked base's two poses; and
// the plotted signals (viz/plot).
//
// Arm kinematics (ArmChain) are the kinematics package's, which the server
// (arms move_pose, the router's pose targets) and the simulator's tests use
// too: from the shoulder mount, joint 0
// pans about z, joints 1–3 pitch about y, joint 4 rolls about x, and each
// link runs along the joint frame's x (the first along z) — the geometry of
// the arms in docs/sim.md — so the joint angles a node reports are drawn as
// the arm they describe, next to the ground truth's own joint positions.
package scene
