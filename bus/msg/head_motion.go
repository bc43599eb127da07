package msg

// TopicHeadMotion carries HeadMotion: the head's motion profile, beside
// HeadState (which has only the positions).
const TopicHeadMotion = "/saint/head/motion"

// HeadAngles are pan, tilt and roll in degrees.
type HeadAngles struct {
	Pan  float32 `json:"pan"`
	Tilt float32 `json:"tilt"`
	Roll float32 `json:"roll"`
}

// HeadMotion is where the head is going and how: published by the head
// role with every HeadState. HeadState.msg has only the current angles;
// the web UI and the scenario runner also want the target, whether the
// head is still moving and whether the last command was cut to the limits.
type HeadMotion struct {
	Header   Header     `json:"header"`
	Position HeadAngles `json:"position"` // the profile's current setpoint, degrees
	Target   HeadAngles `json:"target"`   // the last command, after clamping, degrees
	Velocity HeadAngles `json:"velocity"` // degrees per second
	// Speed is the speed factor in use, 0–1 of the configured maximum.
	Speed  float32 `json:"speed"`
	Moving bool    `json:"moving"`
	// Clamped names the axes the last command asked beyond the role
	// configuration's limits ("pan", "tilt"), empty when none.
	Clamped []string `json:"clamped,omitempty"`
	// CommandTimeout is true when no command arrived for the configured
	// command timeout: the head holds the last commanded position.
	CommandTimeout bool `json:"command_timeout"`
}
