package msg

// ArmState is ArmState.msg, published on ArmStateTopic. Positions are
// joint angles in degrees (as the web UI shows them), velocities in
// degrees per second, efforts in newton-metres; index i is joint_i in the
// arm's role configuration.
type ArmState struct {
	JointPositions  []float32 `json:"joint_positions"`
	JointVelocities []float32 `json:"joint_velocities"`
	JointEfforts    []float32 `json:"joint_efforts"`
	InMotion        bool      `json:"in_motion"`
	ErrorState      bool      `json:"error_state"`
	ErrorMessage    string    `json:"error_message"`
}

// ArmCommand is ArmCommand.msg, taken on ArmCmdTopic.
type ArmCommand struct {
	TargetPositions []float32 `json:"target_positions"` // degrees, per joint
	SpeedFactor     float32   `json:"speed_factor"`     // 0.0 to 1.0
	Immediate       bool      `json:"immediate"`        // abandon the current motion
}

// GripperCommand is GripperCommand.msg, taken on GripperCmdTopic.
type GripperCommand struct {
	Position float32 `json:"position"` // 0.0 closed to 1.0 open
	Force    float32 `json:"force"`    // grip force limit, newtons
}

// GripperState is GripperState.msg, published on GripperStateTopic. Its
// fields mirror GripperCommand and ArmState.
type GripperState struct {
	Position float32 `json:"position"` // 0.0 closed to 1.0 open
	Force    float32 `json:"force"`    // measured grip force, newtons
	// Holding is true when the gripper stopped closing short of its
	// target because it met resistance: it has something.
	Holding      bool   `json:"holding"`
	InMotion     bool   `json:"in_motion"`
	ErrorState   bool   `json:"error_state"`
	ErrorMessage string `json:"error_message"`
}
