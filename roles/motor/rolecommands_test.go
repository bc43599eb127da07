package motor

import (
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// A session under role commands: the role drives with its own commands,
// each keeps the session alive, every other client is refused, and
// control_command is refused; quiet, it times out into its behaviour:
// under KEEP_MODE the role's last command goes on, ZERO_TORQUE_MODE
// takes the motors.
func TestRoleCommandsSession(t *testing.T) {
	r := newRigWith(t, Options{})
	r.run(40 * time.Millisecond)
	g, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "router (head)", TimeoutMS: 200, Behavior: msg.BehaviorKeep, RoleCommands: true})
	if !g.Success {
		t.Fatalf("request_control: %+v", g)
	}
	if r.owns {
		t.Fatal("under role commands the middleware took the motors from the role")
	}
	other, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "teleop"})
	if other.Success || !strings.Contains(other.Message, `control is held by client "router (head)"`) {
		t.Errorf("a second client: %+v, want refused naming the router", other)
	}
	// The role's commands keep it alive well past its timeout.
	for i := 0; i < 10; i++ {
		r.ex.Post(func() {
			if err := r.mw.Yield(); err != nil {
				t.Errorf("a role command under its session: %v", err)
			}
		})
		r.fb[0].Position = float64(i) / 20 // the role moves the motor
		r.run(100 * time.Millisecond)
	}
	if r.mw.state != stateActive || r.owns {
		t.Fatalf("after a second of role commands: state %s, owns %v", r.mw.state, r.owns)
	}
	if err := r.bus.Publish("/robot_7/saint/arms/left/"+msg.MotorControlCommand, msg.ControlCommand{UUID: g.UUID, Mode: msg.ModePosition, Positions: []float64{0, 0}}); err != nil {
		t.Fatal(err)
	}
	r.run(40 * time.Millisecond)
	if !strings.Contains(r.mw.lastError, "drives through the role's own commands") {
		t.Errorf("control_command under role commands: last_error %q", r.mw.lastError)
	}
	// Quiet: timed out; under KEEP_MODE the role goes on.
	r.run(300 * time.Millisecond)
	if r.mw.state != stateTimedOut || r.owns {
		t.Errorf("after the timeout: state %s, owns %v; want the role's last command going on", r.mw.state, r.owns)
	}
	// ZERO_TORQUE_MODE takes the motors when the session ends.
	z, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "router (head)", Behavior: msg.BehaviorZeroTorque, RoleCommands: true})
	if !z.Success {
		t.Fatalf("request_control: %+v", z)
	}
	rel, _ := call[msg.ReleaseControlResponse](r, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: z.UUID})
	r.run(40 * time.Millisecond)
	if !rel.Success || !r.owns || r.out[0].Torque {
		t.Errorf("released into ZERO_TORQUE_MODE: %+v, owns %v, outputs %+v", rel, r.owns, r.out)
	}
	// The next role command takes the motors back.
	if err := r.mw.Yield(); err != nil || r.mw.Owns() {
		t.Errorf("a role command after the session: %v, owns %v", err, r.mw.Owns())
	}
}
