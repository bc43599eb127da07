package msg

import (
	"crypto/sha256"
	"encoding/hex"
)

// The arm's motor middleware (pi-plus software system: hightorque_midware).
// Its services and topics live under the arm's prefix:
//
//	/saint/arms/left/request_control  RequestControlRequest → RequestControlResponse
//
// The robot namespace (the pi-plus launch's robot_id) is not part of these
// names: the bus puts every name of the robot inside it
// (bus.WithRobotID), so with robot id 7 the wire carries
// /robot_7/saint/arms/left/request_control.
//
// Angles are radians and torques newton-metres here, as the middleware's
// joint table (joints.yaml) and the pi-plus clients use them; ArmState stays
// in degrees.

// The middleware's names, joined to a prefix by MotorName.
const (
	MotorGetAvailableMotors = "get_available_motors"
	MotorRequestControl     = "request_control"
	MotorReleaseControl     = "release_control"
	MotorResetZero          = "reset_zero"
	MotorControlCommand     = "control_command"
	MotorJointStates        = "joint_states"
	MotorSessionStatus      = "session_status"
	// ArmHome is the arm's home service (ArmHomeRequest → ArmHomeResponse).
	ArmHome = "home"
)

// MotorName returns the topic or service name of one of the middleware's
// interfaces under prefix: MotorName("/saint/arms/left", "reset_zero") is
// "/saint/arms/left/reset_zero".
func MotorName(prefix, name string) string { return prefix + "/" + name }

// Control modes of a ControlCommand.
const (
	ModePosition = "POSITION"
	ModeTorque   = "TORQUE"
	ModeMixed    = "MIXED"
	// ModeVelocity is the mode of speed-controlled drives (the tracks'
	// and the balancing base's wheels): velocities only, each motor's
	// speed loop or the base's balancing loop follows them.
	ModeVelocity = "VELOCITY"
)

// What the motors do when a control session is released or times out.
const (
	BehaviorKeep       = "KEEP_MODE"
	BehaviorDamping    = "DAMPING_MODE"
	BehaviorZeroTorque = "ZERO_TORQUE_MODE"
)

// GetAvailableMotorsRequest asks for the motors the middleware drives.
type GetAvailableMotorsRequest struct{}

// GetAvailableMotorsResponse lists the motors, in joints.yaml order.
type GetAvailableMotorsResponse struct {
	MotorIDs   []int    `json:"motor_ids"`
	JointNames []string `json:"joint_names"`
	// Reachable is true for a motor that answered its last poll.
	Reachable []bool `json:"reachable"`
}

// RequestControlRequest asks for exclusive control of the motors.
type RequestControlRequest struct {
	// Client names the requester in session_status.
	Client string `json:"client"`
	// TimeoutMS is how long the session may go without a command before
	// it times out; 0 means the middleware's default_timeout_ms.
	TimeoutMS int `json:"timeout_ms"`
	// Behavior is what the motors do on release or timeout: KEEP_MODE,
	// DAMPING_MODE or ZERO_TORQUE_MODE; empty means DAMPING_MODE, the
	// recommended behaviour (KEEP_MODE on position servos, which cannot
	// damp).
	Behavior string `json:"behavior"`
	// MotorIDs, at the root middleware only, are the motors the session
	// takes (robot-wide ids); empty means every motor.
	MotorIDs []int `json:"motor_ids"`
	// RoleCommands makes the role's own command messages (HeadCommand,
	// ArmCommand, cmd_vel) drive the motors under the session instead of
	// control_command: the session excludes every other client, each
	// role command keeps it alive, and release or timeout apply its
	// behaviour. The server's router holds its outputs this way.
	RoleCommands bool `json:"role_commands"`
}

// RequestControlResponse carries the session's uuid on success.
type RequestControlResponse struct {
	Success bool   `json:"success"`
	UUID    string `json:"uuid"`
	Message string `json:"message"`
}

// ReleaseControlRequest ends the session uuid.
type ReleaseControlRequest struct {
	UUID string `json:"uuid"`
}

// ReleaseControlResponse says whether the session was released.
type ReleaseControlResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// ControlCommand is one command of a control session, published on
// control_command. Every per-motor list has one entry per motor of
// MotorIDs (joint index of joints.yaml when MotorIDs is empty: all
// joints). POSITION needs Positions (Kp, Kd optional: joints.yaml
// defaults); TORQUE needs Torques; MIXED needs Positions, Torques, Kp and
// Kd. Velocities (desired joint rates) are optional.
type ControlCommand struct {
	UUID       string    `json:"uuid"`
	Mode       string    `json:"mode"`
	MotorIDs   []int     `json:"motor_ids"`
	Positions  []float64 `json:"positions"`  // rad, URDF frame
	Velocities []float64 `json:"velocities"` // rad/s
	Torques    []float64 `json:"torques"`    // N·m feed-forward
	Kp         []float64 `json:"kp"`         // N·m/rad
	Kd         []float64 `json:"kd"`         // N·m·s/rad
}

// SessionStatus is published on session_status at the state rate and
// whenever the session changes. It never carries the uuid.
type SessionStatus struct {
	// State is "idle" (no session yet), "active", "released",
	// "timed_out" or "power_limited" (max_power exceeded); at the root
	// middleware also "node_lost" (a node of the session's groups
	// restarted or went offline; LastError names it).
	State    string `json:"state"`
	Client   string `json:"client"`
	Mode     string `json:"mode"`
	Behavior string `json:"behavior"`
	// Applied is the behaviour the motors are in after a release or
	// timeout (empty while a session is active).
	Applied   string `json:"applied"`
	TimeoutMS int    `json:"timeout_ms"`
	Commands  uint64 `json:"commands"` // accepted in this session
	Rejected  uint64 `json:"rejected"` // refused since start
	// LastError is why the latest refused command was refused.
	LastError string `json:"last_error"`
	// Calibrating is true while reset_zero runs.
	Calibrating bool `json:"calibrating"`
	// Sessions, at the root middleware only, lists every active session;
	// the fields above describe the latest one that changed.
	Sessions []MotorSession `json:"sessions"`
	// Session, at a node middleware only, is SessionTag of the uuid of the
	// latest session granted since the middleware started ("" for none):
	// it tells which session the status is about without carrying the
	// uuid. The root middleware follows its node sessions by it.
	Session string `json:"session"`
}

// SessionTag names a session in status messages without giving its uuid
// away: the first 48 bits of the uuid's SHA-256, in hex; "" for "".
func SessionTag(uuid string) string {
	if uuid == "" {
		return ""
	}
	h := sha256.Sum256([]byte(uuid))
	return hex.EncodeToString(h[:6])
}

// JointStates is sensor_msgs/JointState on joint_states: the joints in
// the URDF frame (direction and urdf_offset applied).
type JointStates struct {
	Header   Header    `json:"header"`
	Name     []string  `json:"name"`
	Position []float64 `json:"position"` // rad
	Velocity []float64 `json:"velocity"` // rad/s
	Effort   []float64 `json:"effort"`   // N·m
}

// ResetZeroRequest asks the middleware to make the motors' present
// positions their zero.
type ResetZeroRequest struct {
	// TimeoutMS bounds the call; 0 means 10000 (10 s).
	TimeoutMS int `json:"timeout_ms"`
}

// ResetZeroResponse reports the calibration. Positions are the motors'
// last reported absolute positions (rad from their zero), in joints.yaml
// order; success means each is within 0.1 rad.
type ResetZeroResponse struct {
	Success   bool      `json:"success"`
	Message   string    `json:"message"`
	Positions []float64 `json:"positions"`
}

// ArmHomeRequest moves the arm to its configured home pose.
type ArmHomeRequest struct {
	SpeedFactor float32 `json:"speed_factor"` // 0 means the configured default
}

// ArmHomeResponse reports whether the move was started.
type ArmHomeResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}
