// Package ros2 holds SAINT.OS's ROS 2 interfaces and what turns them into
// bytes on a DDS wire.
//
// The folder saint_os/ is a ROS 2 interface package (package.xml,
// CMakeLists.txt with rosidl_generate_interfaces, msg/ and srv/) that a
// ROS 2 user builds with colcon; std/ holds the standard messages the robot
// uses (builtin_interfaces, std_msgs, geometry_msgs, nav_msgs, sensor_msgs,
// tf2_msgs, and rmw_dds_common's graph messages), field for field as ROS 2
// Humble defines them, without their constants.
// Both are embedded, parsed by Load into a Registry, and are the single
// source of:
//
//   - the OMG IDL in idl/ (go generate; ROS 2's naming: module
//     saint_os { module msg { module dds_ { struct HeadState_ ... }}},
//     type name saint_os::msg::dds_::HeadState_), which idlc compiles for
//     Cyclone DDS and fastddsgen for Fast DDS;
//   - the CDR encoder and decoder (Encode, Decode), which turn the bus's
//     JSON payloads into the XCDR1 little-endian bytes rosidl's type
//     support puts on the wire and back, by field name: the field names of
//     the .msg files are the JSON names of the bus's Go types (a test in
//     this package keeps the two in agreement);
//   - the "ros2msg" schemas that MCAP recordings carry, in rosbag2's
//     format (Registry.Schema), and their parser (ParseSchema), with which
//     a recording decodes with the definitions it was written with.
//
// Service requests and replies carry, before their fields, the request
// header rmw_cyclonedds_cpp puts there to pair a reply with its request:
// the client's 64-bit id and a 64-bit sequence number (RequestHeader).
// Fast DDS's ROS 2 middleware carries that pairing out of band instead,
// which is why ROS 2 does not pair services across DDS vendors.
package ros2
