// Package arms is the arms role (instance left or right): five joint
// servos and a gripper, Feetech STS smart servos on the node's serial bus,
// moved along synchronised trajectories, driven through the motor
// middleware (roles/motor) while a client holds a control session, and
// watched for collisions, stalls and the supply's power. See Arms and
// docs/roles/arms.md.
package arms
