// Package motors is the robot's motor middleware at the root of the bus:
// one place where clients (WebSocket, ROS 2 through the bridge, the
// router) ask for control of motors, command them and see who holds
// which, whatever node drives them.
//
// Each motor role runs its own middleware on its node (roles/motor), under
// its prefix: it polls the motors, runs sessions' timeouts and release
// behaviours, and calibrates. This feature is their one client. Its names
// are at the root, inside "robot_{id}" when a robot id is set:
//
//	/request_control  /release_control  /control_command  /reset_zero
//	/get_available_motors  /joint_states  /session_status
//
// Motors have robot-wide ids: a group's (a node middleware's) base plus
// the node's motor id (arms_left 10 + 1…5 = 11…15), joint names the
// group's prefix plus the node's (left_elbow). A session takes the groups
// of the motors it asks for (all when it names none); two sessions never
// share a group, so two clients never drive one motor. The feature holds
// one node session per group of a root session and splits each command
// among them; a node session that ends on its own (timeout, max_power),
// or that its node lost (the node restarted, or stopped answering), ends
// the root session, whose other groups are released.
package motors
