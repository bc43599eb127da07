// Package urdf describes the robots' links and joints as ROS expects them:
// a URDF (Unified Robot Description Format) model for the reference robot
// (tracked base, torso, two five-joint arms, pan/tilt/roll head) and one for
// the PI Plus–like humanoid (legs, arms and neck on a torso held by a test
// stand), built from the kinematics package, the one source of the numbers
// the simulator, the server, the web UI and the arms' inverse kinematics
// use. Joint limits are the built-in robot configurations' joints.yaml
// limits, which the motor middleware clamps commands to.
//
// go generate ./ros2/urdf writes the models as saint.urdf and pi_plus.urdf
// beside this file; a test fails when they are stale, another runs Debian's
// check_urdf on them, and another parses them back and checks their forward
// kinematics against the kinematics package's at several poses.
//
// The ROS 2 bridge publishes a model on /robot_description and the
// transforms of its joints on /tf and /tf_static (Robot.Transform,
// Robot.FixedTransforms), as robot_state_publisher does for a ROS 2 robot.
// Joint names are the robot-wide ones of the root motor middleware's
// /joint_states (left_shoulder_pan, head_tilt, left_hip_pitch …), so a
// JointState from the robot moves the model as it is.
package urdf
