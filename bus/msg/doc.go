// Package msg holds the bus's message types and names: the Go form of the
// spec's msg/ and srv/ files (NodeGPIOStatus.msg, AdoptNode.srv,
// HeadState.msg ...), ROS 2-shaped standard messages (Twist, Odometry,
// Image), and the topic and service names of the spec's Node
// Specifications.
//
// Every field has an explicit snake_case JSON name, the spec's own where
// the spec lists the message's fields, so a payload on the bus is the same
// JSON the WebSocket API shows and a ROS 2 bridge can map it field by field.
// Where the spec names a message but gives no fields (GripperState,
// ConsoleInput, SystemStatus, RouteStatus, LiveLinkSubject, SystemCommand)
// the type's doc comment says what was chosen and why; additions to a
// message the spec does define (HeadCommand's jaw) are marked the same way.
//
// Units follow the spec where it gives them (head and arm angles in
// degrees, as the web UI shows them) and SI otherwise; each type's comment
// states them. Timestamps are seconds since the Unix epoch as float64,
// the spec's convention, except in the ROS-shaped types, which carry a
// Header with a Time.
//
// The types are plain values with no behaviour beyond small accessors, so
// any package may use them without pulling in the bus.
package msg
