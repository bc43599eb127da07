// Package limb is the limb role: a chain of torque-controlled MIT-mode CAN
// actuators — a humanoid's leg, arm or neck — driven through the motor
// middleware alone (roles/motor). It has no commands of its own: clients
// take a session (request_control under the role's prefix, or the robot's
// root middleware), send POSITION, TORQUE or MIXED commands, and release
// it; the release behaviour (KEEP_MODE, DAMPING_MODE, ZERO_TORQUE_MODE)
// then applies until the next session. Before the first session the
// actuators are out of motor mode: no torque, the limb hangs as it may.
//
// Every control period (control_rate_hz) the role sends each actuator
// its output — one command frame, whose reply is the next period's
// feedback — or the disable frame when the output has no torque;
// joint_states and session_status go out at state_rate_hz. An actuator
// that stops answering shows as unreachable in get_available_motors and
// refuses reset_zero.
//
// Configuration (a limb_<instance>.yaml, e.g. limb_leg_left.yaml):
//
//	actuators: {bus: can0, models: [ak70_10, …], host_id: 0}
//	control_rate_hz: 200
//	state_rate_hz: 50
//	default_timeout_ms: 500
//	damping_kd: [...]      # DAMPING_MODE's gains; joints.yaml's kd when absent
//	motor: {joints.yaml's table: joint_names, map_index (CAN ids), ...}
package limb
