package msg

import "time"

// The types in this file have the shapes of the ROS 2 messages they are
// named after (builtin_interfaces, std_msgs, geometry_msgs, nav_msgs), with
// the same snake_case field names, so that a ROS 2 bridge maps them field by
// field. Units are SI as in ROS: metres, radians, seconds.

// Time is builtin_interfaces/Time: seconds and nanoseconds since the Unix
// epoch (on a simulated robot, of the virtual clock).
type Time struct {
	Sec     int32  `json:"sec"`
	Nanosec uint32 `json:"nanosec"`
}

// TimeOf converts t to a Time.
func TimeOf(t time.Time) Time {
	ns := t.UnixNano()
	return Time{Sec: int32(ns / 1e9), Nanosec: uint32(ns % 1e9)}
}

// Time converts the stamp back to a time.Time in UTC.
func (t Time) Time() time.Time { return time.Unix(int64(t.Sec), int64(t.Nanosec)).UTC() }

// Header is std_msgs/Header: when the data was measured and in which
// coordinate frame ("base_link", "head_camera", "odom").
type Header struct {
	Stamp   Time   `json:"stamp"`
	FrameID string `json:"frame_id"`
}

// Vector3 is geometry_msgs/Vector3.
type Vector3 struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// Point is geometry_msgs/Point: a position, in metres.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// Quaternion is geometry_msgs/Quaternion. Note that the Go zero value is
// not a rotation; use IdentityQuaternion for "no rotation".
type Quaternion struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
	W float64 `json:"w"`
}

// IdentityQuaternion returns the rotation by nothing: {0, 0, 0, 1}.
func IdentityQuaternion() Quaternion { return Quaternion{W: 1} }

// Transform is geometry_msgs/Transform: a translation in metres and a
// rotation.
type Transform struct {
	Translation Vector3    `json:"translation"`
	Rotation    Quaternion `json:"rotation"`
}

// Pose is geometry_msgs/Pose.
type Pose struct {
	Position    Point      `json:"position"`
	Orientation Quaternion `json:"orientation"`
}

// PoseStamped is geometry_msgs/PoseStamped: a pose in the frame the
// header names.
type PoseStamped struct {
	Header Header `json:"header"`
	Pose   Pose   `json:"pose"`
}

// Twist is geometry_msgs/Twist: linear velocity in m/s and angular
// velocity in rad/s. The tracks take Linear.X (forward) and Angular.Z
// (counter-clockwise yaw rate) on TopicTracksCmdVel.
type Twist struct {
	Linear  Vector3 `json:"linear"`
	Angular Vector3 `json:"angular"`
}

// PoseWithCovariance is geometry_msgs/PoseWithCovariance. Covariance is
// the row-major 6×6 matrix over (x, y, z, rotation about x, y, z).
type PoseWithCovariance struct {
	Pose       Pose        `json:"pose"`
	Covariance [36]float64 `json:"covariance"`
}

// TwistWithCovariance is geometry_msgs/TwistWithCovariance.
type TwistWithCovariance struct {
	Twist      Twist       `json:"twist"`
	Covariance [36]float64 `json:"covariance"`
}

// Odometry is nav_msgs/Odometry, published by the tracks on
// TopicTracksOdom: the pose in Header.FrameID ("odom") and the velocity in
// ChildFrameID ("base_link").
type Odometry struct {
	Header       Header              `json:"header"`
	ChildFrameID string              `json:"child_frame_id"`
	Pose         PoseWithCovariance  `json:"pose"`
	Twist        TwistWithCovariance `json:"twist"`
}
