package msg

// Simulator topics and services. They exist only when the robot runs in the
// physics simulator (saint-sim, tests, scenarios): the simulator publishes
// the ground truth of its models there, which a real robot cannot know, for
// the visualizer and for scenario checks, and takes disturbances.
const (
	// TopicSimWorld carries SimWorld, the simulator's clock, at the ground
	// truth rate.
	TopicSimWorld = "/saint/sim/world"
	// TopicSimTruthPrefix prefixes each model's ground truth topic; see
	// SimTruthTopic.
	TopicSimTruthPrefix = "/saint/sim/truth/"
	// TopicSimAllTruth subscribes to the ground truth of every model.
	TopicSimAllTruth = "/saint/sim/truth/+"
	// ServiceSimDisturb applies a SimDisturbRequest and answers
	// SimDisturbResponse.
	ServiceSimDisturb = "/saint/sim/disturb"
)

// SimTruthTopic is "/saint/sim/truth/{model}", where the model's ground
// truth (SimHead, SimArm, SimTracks, SimBalance) is published.
func SimTruthTopic(model string) string { return TopicSimTruthPrefix + model }

// SimWorld is the simulator's clock: simulated seconds since the world
// started, the number of physics steps taken, the step length and the seed
// of its noise.
type SimWorld struct {
	Time   float64  `json:"time"`   // s
	Steps  uint64   `json:"steps"`  // physics steps taken
	StepS  float64  `json:"step_s"` // s per step
	Seed   uint64   `json:"seed"`
	Models []string `json:"models"` // in stepping order
}

// Disturbance kinds of SimDisturbRequest.
const (
	// DisturbPush applies Force (N, world frame) to the target body for
	// DurationS seconds.
	DisturbPush = "push"
	// DisturbImpulse applies Impulse (N·s, world frame) to the target body
	// in one physics step.
	DisturbImpulse = "impulse"
	// DisturbCutLink disconnects the named link (a chip's I²C connection, a
	// servo bus, a CAN node): the chip stops answering.
	DisturbCutLink = "cut_link"
	// DisturbRestoreLink reconnects a cut link.
	DisturbRestoreLink = "restore_link"
	// DisturbKill makes the named device dead: a motor or servo that no
	// longer produces torque.
	DisturbKill = "kill"
	// DisturbRevive brings a killed device back.
	DisturbRevive = "revive"
)

// SimDisturbRequest asks the simulator to disturb the robot. Target names a
// body (for push and impulse), a link or a device; SimDisturbResponse lists
// the names the simulator knows when the target is not one of them.
type SimDisturbRequest struct {
	Kind      string     `json:"kind"`
	Target    string     `json:"target"`
	Force     [3]float64 `json:"force,omitempty"`      // N, world frame (x forward, y left, z up)
	Impulse   [3]float64 `json:"impulse,omitempty"`    // N·s, world frame
	DurationS float64    `json:"duration_s,omitempty"` // s, for push
}

// SimDisturbResponse answers SimDisturbRequest.
type SimDisturbResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message,omitempty"`
}

// SimHead is the head model's ground truth. Angles in radians, rates in
// rad/s, in the order pan, tilt, roll; the IMU reading is what a perfect
// MPU6050 on the head would measure (specific force m/s², rate rad/s, head
// frame).
type SimHead struct {
	Angles   [3]float64 `json:"angles"`
	Rates    [3]float64 `json:"rates"`
	Torques  [3]float64 `json:"torques"`   // N·m, servo output
	PulsesUS [3]float64 `json:"pulses_us"` // commanded pulse, 0 when none
	Accel    [3]float64 `json:"accel"`
	Gyro     [3]float64 `json:"gyro"`
}

// SimArm is one arm's ground truth. Joint angles in radians, rates in
// rad/s, efforts in N·m, from the shoulder out; positions in metres in the
// robot frame.
type SimArm struct {
	Side        string       `json:"side"`
	Positions   []float64    `json:"positions"`
	Velocities  []float64    `json:"velocities"`
	Efforts     []float64    `json:"efforts"`
	Gripper     float64      `json:"gripper"`       // finger gap, m
	GraspForce  float64      `json:"grasp_force"`   // N on a held object
	Holding     bool         `json:"holding"`       // an object is between the fingers
	Tip         [3]float64   `json:"tip"`           // gripper centre, m
	Joints      [][3]float64 `json:"joints"`        // joint origins, m
	GroundHit   bool         `json:"ground_hit"`    // a link touches the floor
	SelfHit     bool         `json:"self_hit"`      // two links of the arm touch
	OtherArmHit bool         `json:"other_arm_hit"` // a link touches the other arm
}

// SimTracks is the tracked base's ground truth: pose in the world (m, rad),
// body velocities, each track's sprocket and motor state, the battery.
type SimTracks struct {
	X          float64    `json:"x"`
	Y          float64    `json:"y"`
	Heading    float64    `json:"heading"`
	Speed      float64    `json:"speed"`       // m/s forward
	YawRate    float64    `json:"yaw_rate"`    // rad/s
	TrackSpeed [2]float64 `json:"track_speed"` // m/s surface speed, left, right
	Current    [2]float64 `json:"current"`     // A, left, right motor
	Voltage    [2]float64 `json:"voltage"`     // V across each motor
	Encoder    [2]int64   `json:"encoder"`     // quadrature counts
	Distance   [2]float64 `json:"distance"`    // m of track travelled (sprocket)
	BatteryV   float64    `json:"battery_v"`   // terminal voltage
	BatteryA   float64    `json:"battery_a"`   // current drawn
	BatterySoC float64    `json:"battery_soc"` // 0–1
}

// SimBalance is the balancing base's ground truth: body pitch (rad, forward
// lean positive), position along the floor, yaw, wheel rotations.
type SimBalance struct {
	X         float64    `json:"x"`
	Y         float64    `json:"y"`
	Pitch     float64    `json:"pitch"`
	PitchRate float64    `json:"pitch_rate"`
	Speed     float64    `json:"speed"`
	Yaw       float64    `json:"yaw"`
	YawRate   float64    `json:"yaw_rate"`
	Wheel     [2]float64 `json:"wheel"`      // rad, left, right
	WheelRate [2]float64 `json:"wheel_rate"` // rad/s
	Torque    [2]float64 `json:"torque"`     // N·m on each wheel
	Fallen    bool       `json:"fallen"`     // resting on its stop
	Accel     [3]float64 `json:"accel"`      // IMU specific force, body frame
	Gyro      [3]float64 `json:"gyro"`       // IMU rate, body frame
	Slip      [2]float64 `json:"slip"`       // m/s, each wheel's rim speed less its axle's over the floor
	Friction  [2]float64 `json:"friction"`   // floor μ under each wheel
	Z         float64    `json:"z"`          // m, the floor's height under the axle (its bumps)
}
