// Package kinematics is the arms' forward and inverse kinematics: where the
// gripper is for a set of joint angles (mathgl transforms), and which joint
// angles put it at a pose (damped least squares on the Jacobian, gonum),
// within the joints' limits, with an error that says how far off an
// unreachable pose stays.
//
// The arm is five revolute joints from a shoulder mount — shoulder_pan
// about z, shoulder_lift, elbow and wrist_pitch about y, wrist_roll about x
// — each turning the frame the next link is drawn in: the bracket along z,
// the other links along x. Frames are the robot's: x forward, y left, z up,
// metres and radians. The gripper frame's x axis points out of the hand.
//
// It also holds the geometry of the PI Plus–like humanoid's limbs
// (HumanoidLimb: legs, arms and neck on a torso held by a test stand, each
// a chain of hinges with its offsets and axes) and their forward
// kinematics (Limb.Chain). The simulator builds its limb models on these
// numbers, so the server, the web UI and the visualizer draw the body the
// physics moves.
//
// Nothing here depends on the simulator or on hardware: the arms role, the
// server and the visualizer use it alike.
package kinematics
