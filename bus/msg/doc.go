// Package msg holds the bus's message types and names: the Go form of the
// saint_os interface's .msg and .srv files (ros2/saint_os: NodeGPIOStatus.msg,
// AdoptNode.srv, HeadState.msg ...), ROS 2-shaped standard messages (Twist,
// Odometry, Image), and the topic and service names of the node protocol.
//
// Every field has an explicit snake_case JSON name, the .msg file's field
// name where there is one, so a payload on the bus is the same JSON the
// WebSocket API shows and a ROS 2 bridge can map it field by field. The
// fields of GripperState, ConsoleInput, SystemStatus, RouteStatus,
// LiveLinkSubject and SystemCommand were chosen here, and each type's doc
// comment says what was chosen and why; fields added later to a message
// (HeadCommand's jaw) are marked the same way, and as "addition" in its
// .msg file.
//
// Head and arm angles are in degrees, as the web UI shows them, and
// everything else in SI units; each type's comment states them. Timestamps
// are seconds since the Unix epoch as float64, as in the WebSocket API,
// except in the ROS-shaped types, which carry a Header with a Time.
//
// The types are plain values with no behaviour beyond small accessors, so
// any package may use them without pulling in the bus.
package msg
