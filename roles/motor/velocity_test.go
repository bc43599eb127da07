package motor

import (
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// Speed-controlled drives take VELOCITY only, stop on release and refuse
// KEEP_MODE and what their role refuses.
func TestVelocityDrives(t *testing.T) {
	r := newRigWith(t, Options{VelocityControlled: true,
		RefuseBehaviors: map[string]string{msg.BehaviorZeroTorque: "the base would fall"}})
	r.run(40 * time.Millisecond)
	for _, b := range []struct{ behavior, want string }{
		{msg.BehaviorKeep, "KEEP_MODE would keep these drives running"},
		{msg.BehaviorZeroTorque, "ZERO_TORQUE_MODE: the base would fall"},
	} {
		g, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "c", Behavior: b.behavior})
		if g.Success || !strings.Contains(g.Message, b.want) {
			t.Errorf("request_control %s: %+v, want refused with %q", b.behavior, g, b.want)
		}
	}
	g, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "c", TimeoutMS: 200})
	if !g.Success {
		t.Fatalf("request_control: %+v", g)
	}
	send := func(c msg.ControlCommand) {
		c.UUID = g.UUID
		if err := r.bus.Publish("/robot_7/saint/arms/left/"+msg.MotorControlCommand, c); err != nil {
			t.Fatal(err)
		}
		r.run(40 * time.Millisecond)
	}
	send(msg.ControlCommand{Mode: msg.ModeVelocity, Velocities: []float64{1.5, 2}})
	// Motor b turns the other way (direction −1).
	if !r.owns || !r.out[0].Torque || r.out[0].Velocity != 1.5 || r.out[1].Velocity != -2 {
		t.Fatalf("after VELOCITY: owns %v, outputs %+v", r.owns, r.out)
	}
	for _, c := range []struct {
		cmd  msg.ControlCommand
		want string
	}{
		{msg.ControlCommand{Mode: msg.ModePosition, Positions: []float64{0, 0}}, `mode: "POSITION": these motors are speed-controlled drives`},
		{msg.ControlCommand{Mode: msg.ModeTorque, Torques: []float64{1, 1}}, `mode: "TORQUE": these motors are speed-controlled drives`},
		{msg.ControlCommand{Mode: msg.ModeVelocity, Velocities: []float64{1, 1}, Kp: []float64{1, 1}}, "a VELOCITY command carries velocities only"},
		{msg.ControlCommand{Mode: msg.ModeVelocity, Velocities: []float64{1}}, "velocities: 1 values, expected 2"},
	} {
		send(c.cmd)
		if !strings.Contains(r.mw.lastError, c.want) {
			t.Errorf("%+v: last_error %q, want %q", c.cmd, r.mw.lastError, c.want)
		}
	}
	if r.out[0].Velocity != 1.5 {
		t.Errorf("a refused command changed the outputs: %+v", r.out)
	}
	// Quiet for the timeout: DAMPING_MODE (the default) stops the drives.
	r.run(300 * time.Millisecond)
	if r.mw.state != stateTimedOut || r.mw.applied != msg.BehaviorDamping {
		t.Fatalf("after the timeout: state %s, applied %s", r.mw.state, r.mw.applied)
	}
	if !r.owns || !r.out[0].Torque || r.out[0].Velocity != 0 || r.out[1].Velocity != 0 {
		t.Errorf("timed out: owns %v, outputs %+v, want stopped", r.owns, r.out)
	}
}

// VELOCITY is refused on motors that are not drives.
func TestVelocityRefusedOnJoints(t *testing.T) {
	j, err := ParseJoints([]byte(table))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []motorKind{positionServos, torqueActuators} {
		_, err := decode(j, msg.ControlCommand{Mode: msg.ModeVelocity, Velocities: []float64{1, 1}}, k)
		if err == nil || !strings.Contains(err.Error(), `"VELOCITY" is for speed-controlled drives`) {
			t.Errorf("kind %d: %v", k, err)
		}
	}
}
