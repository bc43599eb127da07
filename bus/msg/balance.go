package msg

// Balance base (saul-tee) topics and services, under the role's prefix
// TopicPrefix("balance", "") = "/saint/balance".
const (
	// TopicBalanceState carries BalanceState at the role's state rate.
	TopicBalanceState = "/saint/balance/state"
	// TopicBalanceEStop takes EStop: active stops the motors, and the base
	// stays stopped until it is released and re-armed.
	TopicBalanceEStop = "/saint/balance/estop"
	// ServiceBalanceConsole runs one debug console line
	// (BalanceConsoleRequest → BalanceConsoleResponse).
	ServiceBalanceConsole = "/saint/balance/console"
	// TopicBalanceCmdVel takes Twist (linear.x m/s, angular.z rad/s,
	// counter-clockwise positive) from the server's router: the base follows
	// it while it is fresh (the role's can_timeout_ms), unless the Orin's
	// CAN 0x300 frames are; without either it takes the RC sticks.
	TopicBalanceCmdVel = "/saint/balance/cmd_vel"
	// TopicBalanceArm takes BalanceArm, the router's arm switch: held on
	// for the arming hold (3 s) it arms the base, if the base's own checks
	// allow it; switched off it disarms.
	TopicBalanceArm = "/saint/balance/arm"
)

// BalanceArm is the state of the router's arm switch for the balancing
// base.
type BalanceArm struct {
	Arm bool `json:"arm"`
}

// BalanceState is the balancing base's state.
type BalanceState struct {
	// State is disarmed, armed, tilt, estop, watchdog or rc_loss;
	// StateCode its number as CAN telemetry 0x400 carries it.
	State     string `json:"state"`
	StateCode uint8  `json:"state_code"`
	Armed     bool   `json:"armed"`
	// Mode is the CAN 0x302 mode: off, balance, manual, estop.
	Mode string `json:"mode"`
	// Source is where the speed command comes from: "can" while the Orin's
	// 0x300 frames are fresh, else "bus" while the router's cmd_vel is,
	// else "rc".
	Source       string   `json:"source"`
	Pitch        float64  `json:"pitch_deg"`
	PitchRate    float64  `json:"pitch_rate_dps"`
	PIDOut       float64  `json:"pid_out_a"`
	Speed        float64  `json:"speed_mps"`
	TargetSpeed  float64  `json:"target_speed_mps"`
	YawRate      float64  `json:"yaw_rate_rps"`
	SpeedLimit   int      `json:"speed_limit_pct"`
	TiltLimit    float64  `json:"tilt_limit_deg"`
	MaxSpeed     float64  `json:"max_speed_mps"`
	Kp           float64  `json:"kp"`
	Ki           float64  `json:"ki"`
	Kd           float64  `json:"kd"`
	Faults       []string `json:"faults"`
	FaultBits    uint8    `json:"fault_bits"`
	BatteryV     float64  `json:"battery_v"`
	CurrentLeft  float64  `json:"current_left_a"`
	CurrentRight float64  `json:"current_right_a"`
}

// BalanceConsoleRequest is one line of the debug console ("status",
// "pid 2 0 0.15", "speed_limit 20" ...).
type BalanceConsoleRequest struct {
	Line string `json:"line"`
}

// BalanceConsoleResponse is the console's answer. OK is false when the
// command was refused or malformed; Output says why.
type BalanceConsoleResponse struct {
	Output string `json:"output"`
	OK     bool   `json:"ok"`
}
