package msg

// TrackState is TrackState.msg, published on TopicTracksState.
// Velocities are track surface speeds in m/s, currents in amperes.
type TrackState struct {
	LeftVelocity  float32 `json:"left_velocity"`
	RightVelocity float32 `json:"right_velocity"`
	LeftCurrent   float32 `json:"left_current"`
	RightCurrent  float32 `json:"right_current"`
	EStopActive   bool    `json:"estop_active"`
	MotorsEnabled bool    `json:"motors_enabled"`
}

// MotorCurrent is published on TopicTracksMotorCurrent, faster than
// TrackState, for monitoring stalls and overloads. Amperes. Left and Right
// are the motors' currents where the H-bridges' current sense is wired
// (0 otherwise); Total, added to those two readings, is the battery
// current the supply monitor measures, which is every harness's reading.
type MotorCurrent struct {
	Header Header  `json:"header"`
	Left   float32 `json:"left"`
	Right  float32 `json:"right"`
	Total  float32 `json:"total"`
}

// EStop is taken on TopicTracksEStop (and the balance base's estop topic):
// Active true stops the motors at once and keeps them stopped until a
// message with Active false releases them.
type EStop struct {
	Active bool   `json:"active"`
	Source string `json:"source"` // who asked: "rc", "websocket", "console", "safety"
	Reason string `json:"reason,omitempty"`
}
