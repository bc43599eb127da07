// Package bringup resolves a robot's configuration from its robot_type,
// as the PI Plus bringup does from its launch parameters: model_type,
// leg_type and the counts of leg, arm, claw (gripper), head and waist
// motors make the robot_type
//
//	pi_plus-S-12L8A0G2H0W   model_type pi_plus, leg_type S, 12 leg, 8 arm,
//	                        0 claw, 2 head and 0 waist motors
//
// whose directory robot_config/<robot_type>/ in the configuration tree
// holds three files:
//
//	robot_param.yaml   the robot's hardware: robot_id, the motor groups
//	                   (which motor role's node drives which robot-wide
//	                   motor ids) and the nodes
//	joints.yaml        the robot-wide joint table (roles/motor's format):
//	                   joint names, motor ids, directions, limits, gains
//	custom_action.yaml named joint-space motions with timing, played by
//	                   the play_action service
//
// Resolve reads and checks them; a robot_type that is missing, malformed
// or has no directory is an error listing the available ones.
package bringup
