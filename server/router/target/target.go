package target

// Output target names: what routes (output.target), console overrides,
// router inputs and RouteStatus use.
const (
	Head      = "head"
	ArmsLeft  = "arms.left"
	ArmsRight = "arms.right"
	// ArmsLeftPose and ArmsRightPose drive an arm by its gripper's pose;
	// the joint angles come from inverse kinematics.
	ArmsLeftPose  = "arms.left.pose"
	ArmsRightPose = "arms.right.pose"
	Tracks        = "tracks"
	Balance       = "balance"
	Console       = "console"
	// Any is a passthrough route's target: the target each command names.
	Any = "*"
)

// Arm is the joint target of the arm on side ("left"): "arms.left".
func Arm(side string) string { return "arms." + side }

// ArmPose is the pose target of the arm on side: "arms.left.pose".
func ArmPose(side string) string { return Arm(side) + ".pose" }

// Limits of the targets' properties: a command outside them is refused,
// not clamped, whichever way it comes (a route, the WebSocket API, ROS 2).
const (
	// MaxPan, MaxTilt and MaxRoll bound the head's angles, degrees either
	// way.
	MaxPan  = 180.0
	MaxTilt = 90.0
	MaxRoll = 45.0
	// MaxEyesPan and MaxEyesTilt bound the head's eyes, degrees.
	MaxEyesPan  = 45.0
	MaxEyesTilt = 30.0
	// MaxJoints is how many arm joints (joint_0 … joint_15) a command may
	// drive, and MaxJointAngle their angle, degrees either way.
	MaxJoints     = 16
	MaxJointAngle = 360.0
	// MaxGripperForce bounds a gripper's force limit, newtons.
	MaxGripperForce = 1000.0
	// MaxPoseDistance bounds a pose target's position, metres from the
	// robot's origin (or the arm's shoulder mount): well beyond any arm's
	// reach, so that a pose out of reach is still taken and the arm
	// reaches towards it.
	MaxPoseDistance = 5.0
	// MaxLinear and MaxAngular bound the tracks' velocities (m/s, rad/s);
	// the tracks role applies its own, lower limits.
	MaxLinear  = 10.0
	MaxAngular = 20.0
	// MaxBalanceLinear and MaxBalanceAngular bound what may be asked of
	// the balancing base (m/s, rad/s); the base caps it again with its own
	// speed limit (10 % of 2 m/s at power-on) and steer limit.
	MaxBalanceLinear  = 2.0
	MaxBalanceAngular = 2.0
)

// Commands of the WebSocket API that drive targets, which are also the
// commands a router input carries.
const (
	// CommandDrive sets a drive's velocities (linear, angular); those not
	// given are the target's stop values.
	CommandDrive = "drive"
	// CommandStop sends the target its stop values.
	CommandStop = "stop"
	// CommandMove moves a target's joints; CommandHome to their zero.
	CommandMove    = "move"
	CommandHome    = "home"
	CommandCamera  = "camera"
	CommandGripper = "gripper"
	// CommandMovePose moves an arm's gripper to a pose.
	CommandMovePose = "move_pose"
	// CommandEStop engages or releases the emergency stop.
	CommandEStop = "estop"
)

// Spec is what other packages know of one output target.
type Spec struct {
	Name string
	// Command is the WebSocket API's command target that drives it
	// ("arms" for both arms' targets, with an "arm" parameter).
	Command string
	// Commands are the WebSocket commands on Command that drive it.
	Commands []string
	// MotorGroup is the motor group behind it (the root middleware's
	// group name, a role key), "" for none. An arm's joint and pose
	// targets share its group: one of them drives the arm at a time.
	MotorGroup string
}

// Table returns every output target, in the order the web UI shows them.
func Table() []Spec {
	return []Spec{
		{Name: Head, Command: "head", Commands: []string{CommandMove, CommandHome, CommandCamera}, MotorGroup: "head"},
		{Name: ArmsLeft, Command: "arms", Commands: []string{CommandMove, CommandHome, CommandGripper}, MotorGroup: "arms_left"},
		{Name: ArmsRight, Command: "arms", Commands: []string{CommandMove, CommandHome, CommandGripper}, MotorGroup: "arms_right"},
		{Name: ArmsLeftPose, Command: "arms", Commands: []string{CommandMovePose}, MotorGroup: "arms_left"},
		{Name: ArmsRightPose, Command: "arms", Commands: []string{CommandMovePose}, MotorGroup: "arms_right"},
		{Name: Tracks, Command: "tracks", Commands: []string{CommandDrive, CommandStop}, MotorGroup: "tracks"},
		{Name: Balance, Command: "balance", Commands: []string{CommandDrive, CommandStop}, MotorGroup: "balance"},
		{Name: Console},
	}
}

// Lookup returns the target named name, and whether there is one.
func Lookup(name string) (Spec, bool) {
	for _, s := range Table() {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// MotorGroup is the motor group behind target name, "" for none.
func MotorGroup(name string) string {
	s, _ := Lookup(name)
	return s.MotorGroup
}

// Drives lists the targets driven by CommandDrive and CommandStop, in the
// table's order.
func Drives() []Spec {
	var out []Spec
	for _, s := range Table() {
		if has(s.Commands, CommandDrive) {
			out = append(out, s)
		}
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
