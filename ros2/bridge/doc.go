// Package bridge maps the robot's bus onto a ROS 2 network: the logic of
// saint-ros2, in pure Go, against a small DDS interface that the
// Cyclone DDS participant (ros2/cyclone) implements and a fake in tests.
//
// Names follow ROS 2's DDS conventions: the bus topic /saint/head/state
// is the DDS topic rt/saint/head/state; a service /saint/nodes/adopt is
// the request topic rq/saint/nodes/adoptRequest and the reply topic
// rr/saint/nodes/adoptReply, whose samples start with rmw_cyclonedds_cpp's
// request header (ros2.RequestHeader), copied from request to reply so
// the client pairs them. Node ids that are not valid ROS names are
// mapped reversibly (ROSNodeName).
//
// State goes out as it is on the bus, converted to a standard ROS 2 type
// where one fits (nav_msgs/Odometry, sensor_msgs/Image,
// JointState, Imu, BatteryState) and to a saint_os type otherwise.
// Commands come in as the router's source "ros2" (msg.SourceROS2, below
// WebSocket and above LiveLink), on the router's input topic exactly as
// the other inputs do, so priorities, blending and the e-stop hold for
// them. The motor middlewares' commands — the root's and each motor
// group's node middleware's (Options.MotorNodes, a robot configuration's
// motor_groups: a humanoid's limbs) — go to the middleware, which accepts
// them only inside a control session.
//
// Which roles' names are bridged follows the robot configuration
// (Options.Roles, RolesOf): the reference robot's head, arms, tracks,
// console and balancing base by default, a humanoid's limbs alone with
// its robot type; the root middleware's, the nodes', the router's and the
// server's names are bridged on every robot.
//
// With Options.Model (ModelOf: the robot's URDF from ros2/urdf) the
// bridge does what robot_state_publisher does for a ROS 2 robot: the URDF
// latched on /robot_description, the fixed joints latched on /tf_static,
// and on /tf each moving joint's transform from the root middleware's
// joint states, with odom → base_link from the tracks' odometry.
//
// Bad input never moves anything: a sample that does not decode, a NaN
// or infinite number, a value out of range is dropped with a warning
// naming the topic and the field; a service call that fails is answered
// with success false and the reason.
package bridge
