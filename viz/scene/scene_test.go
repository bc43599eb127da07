package scene

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/sim/model/arm"
)

const tol = 1e-9

func TestArmChainMatchesTheSimulatedArm(t *testing.T) {
	for _, side := range []string{msg.ArmLeft, msg.ArmRight} {
		for _, pose := range [][]float64{{0, 0, 0, 0, 0}, {0.4, -0.7, 1.1, 0.3, -0.5}, {-1.2, 0.5, -0.2, 1.0, 2}} {
			a := arm.New(arm.Default(side))
			for i, q := range pose {
				a.Joint(i).SetAngle(q)
			}
			a.Step(1e-6)
			truth := a.Truth().(msg.SimArm)
			got := ArmChain(DefaultArm(side), truth.Positions)
			for i, j := range truth.Joints {
				if got[i].Sub(mgl64.Vec3(j)).Len() > 1e-4 {
					t.Errorf("%s %v: joint %d at %v, simulator says %v", side, pose, i, got[i], j)
				}
			}
			if got[5].Sub(mgl64.Vec3(truth.Tip)).Len() > 1e-4 {
				t.Errorf("%s %v: tip at %v, simulator says %v", side, pose, got[5], truth.Tip)
			}
		}
	}
}

func TestArmChainStraightOut(t *testing.T) {
	got := ArmChain(DefaultArm("left"), nil)
	want := mgl64.Vec3{0.25 + 0.22 + 0.06 + 0.10, 0.22, 0.45 + 0.05}
	if got[5].Sub(want).Len() > tol {
		t.Errorf("tip at zero = %v, want %v", got[5], want)
	}
	got = ArmChain(DefaultArm("left"), []float64{math.Pi / 2})
	if want := (mgl64.Vec3{0, 0.22 + 0.63, 0.5}); got[5].Sub(want).Len() > tol {
		t.Errorf("tip panned 90° = %v, want %v", got[5], want)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestApplySimOdomAndTrails(t *testing.T) {
	s := New(10)
	for i := 0; i <= 10; i++ {
		x := float64(i) * 0.05
		snap := map[string]any{
			"world":   msg.SimWorld{Time: float64(i) * 0.1},
			"tracks":  msg.SimTracks{X: x, Y: 0.5, Heading: 0.3, TrackSpeed: [2]float64{0.5, 0.5}},
			"balance": msg.SimBalance{Pitch: 0.1, WheelRate: [2]float64{1, 2}},
		}
		if err := s.Apply("sim", float64(i)*0.1, mustJSON(t, snap)); err != nil {
			t.Fatal(err)
		}
	}
	if !s.HasTruth || math.Abs(s.Truth.X-0.5) > tol || s.Truth.Y != 0.5 || s.Truth.Heading != 0.3 {
		t.Errorf("truth = %+v", s.Truth)
	}
	if len(s.TruthTrail) != 11 {
		t.Errorf("trail has %d poses, want 11 (one per 5 cm)", len(s.TruthTrail))
	}
	if _, v, _ := s.Signal("balance pitch").Last(); math.Abs(v-0.1*180/math.Pi) > tol {
		t.Errorf("pitch plotted %v deg", v)
	}
	// Odometry: yaw from the quaternion.
	var o msg.Odometry
	o.Pose.Pose.Position = msg.Point{X: 1, Y: 2}
	o.Pose.Pose.Orientation = msg.Quaternion{Z: math.Sin(0.25), W: math.Cos(0.25)}
	if err := s.Apply("odom", 2, mustJSON(t, o)); err != nil {
		t.Fatal(err)
	}
	if !s.HasOdom || s.Odom.X != 1 || s.Odom.Y != 2 || math.Abs(s.Odom.Heading-0.5) > tol {
		t.Errorf("odom = %+v, want (1, 2, 0.5)", s.Odom)
	}
	if err := s.Apply("odom", 3, []byte(`{"pose": 7}`)); err == nil {
		t.Error("an odometry that does not decode was accepted")
	}
}

func TestJointErrorAgainstTruth(t *testing.T) {
	s := New(10)
	arms := map[string]any{"positions": []float64{0, 0.1, 0, 0, 0}, "side": "left", "joints": [][3]float64{}}
	if err := s.Apply("arms", 1, []byte(`{"arm":"left","joint_positions":[0,10,0,0,0]}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply("sim", 1.1, mustJSON(t, map[string]any{"arm_left": arms})); err != nil {
		t.Fatal(err)
	}
	_, v, ok := s.Signal("arm L joint error").Last()
	if want := 10 - 0.1*180/math.Pi; !ok || math.Abs(v-want) > 1e-4 {
		t.Errorf("joint error = %v (ok %v), want %v", v, ok, want)
	}
}

func TestApplyNodesAndRouter(t *testing.T) {
	s := New(10)
	_ = s.Apply("nodes", 1, []byte(`{"node_id":"sim-tracks","state":"ACTIVE","role":"tracks"}`))
	_ = s.Apply("nodes", 1, []byte(`{"node_id":"sim-head","state":"ACTIVE","role":"head"}`))
	_ = s.Apply("router", 1, []byte(`{"estop_active":true,"estop_source":"websocket","outputs":[{"target":"tracks","route_ids":["websocket_direct"]}]}`))
	if ids := s.NodeIDs(); len(ids) != 2 || ids[0] != "sim-head" {
		t.Errorf("nodes = %v", ids)
	}
	if !s.Router.EStopActive || s.Router.Outputs[0].RouteIDs[0] != "websocket_direct" {
		t.Errorf("router = %+v", s.Router)
	}
}

func TestApplyConsoleFramebuffer(t *testing.T) {
	s := New(10)
	fb := make([]byte, 1024)
	fb[0], fb[1023] = 0x01, 0x80
	if err := s.Apply("console", 1, mustJSON(t, map[string]any{"framebuffer": fb})); err != nil {
		t.Fatal(err)
	}
	if len(s.Console) != 1024 || s.Console[0] != 0x01 || s.Console[1023] != 0x80 {
		t.Errorf("console = %d bytes, first %x, last %x", len(s.Console), s.Console[:1], s.Console[len(s.Console)-1:])
	}
}

func TestBalancePitchPlotsOneSource(t *testing.T) {
	s := New(10)
	_ = s.Apply("balance", 1, []byte(`{"pitch_deg": -1.5, "pid_out_a": 2}`))
	if _, v, _ := s.Signal("balance pitch").Last(); v != -1.5 {
		t.Fatalf("pitch from telemetry = %v, want -1.5", v)
	}
	_ = s.Apply("sim", 2, mustJSON(t, map[string]any{"balance": msg.SimBalance{Pitch: 0}}))
	_ = s.Apply("balance", 3, []byte(`{"pitch_deg": -1.5}`))
	p := s.Signal("balance pitch")
	if p.Len() != 1 {
		t.Errorf("pitch series has %d samples after the truth arrived, want only the truth's 1", p.Len())
	}
	if s.Series[0] != p {
		t.Error("the plotted series is not the one Signal returns")
	}
}

// The humanoid's limbs come from two topics: joint_states with the points
// the server placed (as the node reports the limb), and the simulator's
// truth (limb_<instance> joint states), placed here by the same
// kinematics; a knee bent back folds the shank behind it in both.
func TestHumanoidLimbsFromTheirTopics(t *testing.T) {
	s := New(10)
	if s.HasHumanoid() {
		t.Fatal("a humanoid before any update")
	}
	truth := `{"world": {"time": 1}, "limb_leg_left": {"name": ["hip_pitch", "hip_roll", "hip_yaw", "knee"], "position": [0, 0, 0, 1.5707963267948966]}}`
	if err := s.Apply("sim", 1, []byte(truth)); err != nil {
		t.Fatal(err)
	}
	leg, ok := s.LimbTruth["leg_left"]
	if !ok || len(leg.Points) != 7 || !s.HasHumanoid() {
		t.Fatalf("truth: %+v, want the left leg's 7 points", s.LimbTruth)
	}
	knee, sole := leg.Points[3], leg.Points[6]
	if math.Abs(sole[2]-knee[2]) > tol || math.Abs(knee[0]-sole[0]-0.22) > tol {
		t.Fatalf("knee %v, sole %v: want the sole 0.22 m behind the knee, at its height", knee, sole)
	}
	reported := `{"group": "leg_left", "role": "limb", "instance": "leg_left", "name": ["knee"], "position": [1.2],
		"points": [[0, 0.075, 0.7], [0, 0.075, 0.2]], "facing": [0, 0, -1]}`
	if err := s.Apply("joint_states", 2, []byte(reported)); err != nil {
		t.Fatal(err)
	}
	if l := s.Limbs["leg_left"]; len(l.Points) != 2 || l.Points[1][2] != 0.2 || l.Facing[2] != -1 {
		t.Fatalf("reported: %+v", s.Limbs)
	}
	// Another role's joint states (the arms') are not a limb.
	if err := s.Apply("joint_states", 3, []byte(`{"group": "arms_left", "role": "arms", "instance": "left", "points": [[0, 0, 0]]}`)); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Limbs["left"]; ok || len(s.Limbs) != 1 {
		t.Fatalf("an arms group became a limb: %+v", s.Limbs)
	}
	if err := s.Apply("sim", 4, []byte(`{"limb_neck": {"position": "x"}}`)); err == nil {
		t.Fatal("a limb truth that does not decode: no error")
	}
}

// Seen from the front, a head panned to its left shows its face on the
// viewer's right, and a head tilted down (positive tilt, as the head's
// physics has it) shows its face lower.
func TestFaceOffset(t *testing.T) {
	if r, d := FaceOffset(math.Pi/4, 0); r < 0.7 || math.Abs(d) > 1e-12 {
		t.Errorf("panned 45° left: face %.2f right, %.2f down; want right of centre, level", r, d)
	}
	if r, d := FaceOffset(0, math.Pi/6); math.Abs(r) > 1e-12 || d < 0.49 {
		t.Errorf("tilted 30° down: face %.2f right, %.2f down; want below centre", r, d)
	}
}
