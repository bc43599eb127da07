package limb_test

import (
	"context"
	"io/fs"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/sim/robot"
)

func config(t *testing.T, from, to string) *roleconfig.Config {
	t.Helper()
	data, err := fs.ReadFile(fixtures.Config(), "humanoid/limb_leg_left.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), from, to, 1)
	if from != "" && bad == string(data) {
		t.Fatalf("no %q", from)
	}
	cfg, err := roleconfig.ParseFile("limb_leg_left.yaml", []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// start starts the limb role on the simulated humanoid's left-leg board.
func start(t *testing.T, cfg *roleconfig.Config) (*robot.Robot, *executor.Executor, bus.Bus, error) {
	t.Helper()
	ex := executor.NewVirtual()
	r, err := robot.New(robot.Options{Exec: ex, Seed: 1, Limbs: []string{"leg_left"}})
	if err != nil {
		t.Fatal(err)
	}
	b := mem.New()
	role, err := roles.New(msg.RoleLimb)
	if err != nil {
		t.Fatal(err)
	}
	err = role.Start(rolekit.Env{Exec: ex, Bus: b, Board: r.Board(robot.LimbPart("leg_left")), Config: cfg, Prefix: msg.TopicPrefix(msg.RoleLimb, "leg_left")})
	if err == nil {
		t.Cleanup(role.Stop)
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Stop)
	}
	return r, ex, b, err
}

// A bad limb configuration stops Start with the file, line and field.
func TestLimbConfigErrors(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"  models: [ak70_10, ak70_10, ak60_6, ak10_9, ak60_6, ak60_6]", "  models: [ak70_10, ak70_10, ak60_6, ak10_9, ak60_6]", "limb_leg_left.yaml:16: actuators.models: 5 values, expected 6"},
		{"  models: [ak70_10, ak70_10, ak60_6, ak10_9, ak60_6, ak60_6]", "  models: [ak70_10, ak70_10, ak60_6, ak10_99, ak60_6, ak60_6]", `limb_leg_left.yaml:16: actuators.models[3]: mitmotor: unknown actuator model "ak10_99"`},
		{"  map_index:   [1, 2, 3, 4, 5, 6]", "  map_index:   [1, 2, 3, 4, 5, 0]", "motor.map_index[5]: 0 is not an actuator CAN id"},
		{"damping_kd: [3.0, 2.0, 1.5, 3.0, 1.0, 0.8]", "damping_kd: [3.0, 2.0, 1.5, 3.0, 1.0]", "limb_leg_left.yaml:24: damping_kd: 5 values, expected 6"},
		{"default_timeout_ms: 500", "default_timeout_ms: 500\nrobot_id: \"7\"", "robot_id: \"7\": the robot namespace is not a role setting"},
		{"control_rate_hz: 200", "control_rate_hz: 0", "control_rate_hz: 0, expected more than 0"},
		{"  bus: can0", "  bus: can3", `limb: can3 (joint actuators)`},
	} {
		_, _, _, err := start(t, config(t, tc.from, tc.to))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
}

// Before any session the leg's actuators are out of motor mode (the leg
// hangs unpowered); a session at the node's own middleware drives them,
// and its timeout damps them.
func TestLimbDrivenOnlyThroughItsMiddleware(t *testing.T) {
	r, ex, b, err := start(t, config(t, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	run := func(d time.Duration) {
		t.Helper()
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	run(500 * time.Millisecond)
	for i := range 6 {
		if r.LimbActuator("leg_left", i).Enabled() {
			t.Fatalf("actuator %d is in motor mode before any session", i+1)
		}
	}
	prefix := msg.TopicPrefix(msg.RoleLimb, "leg_left")
	var resp *msg.RequestControlResponse
	bus.CallAsyncJSON(b, msg.MotorName(prefix, msg.MotorRequestControl), msg.RequestControlRequest{Client: "t", TimeoutMS: 300}, time.Minute, ex,
		func(v msg.RequestControlResponse, err error) {
			if err != nil {
				t.Error(err)
			}
			resp = &v
		})
	run(100 * time.Millisecond)
	if resp == nil || !resp.Success {
		t.Fatalf("request_control: %+v", resp)
	}
	cmd := msg.ControlCommand{UUID: resp.UUID, Mode: msg.ModePosition, Positions: []float64{-0.5, 0, 0, 0.8, 0, 0}}
	tick := ex.Every(100*time.Millisecond, func() { _ = b.Publish(msg.MotorName(prefix, msg.MotorControlCommand), cmd) })
	run(2 * time.Second)
	leg := r.Limb("leg_left")
	if math.Abs(leg.Angle(0)+0.5) > 0.05 || math.Abs(leg.Angle(3)-0.8) > 0.05 {
		t.Errorf("hip_pitch %.3f, knee %.3f; want -0.5 and 0.8", leg.Angle(0), leg.Angle(3))
	}
	tick.Stop()
	run(time.Second)
	// Timed out into DAMPING_MODE: kp 0, the configured damping.
	c, _ := r.LimbActuator("leg_left", 3).Command()
	if c.Kp != 0 || math.Abs(c.Kd-3) > 0.01 {
		t.Errorf("after the timeout the knee's actuator runs %+v, want kp 0, kd 3 (damping_kd)", c)
	}
}
