package motors

import (
	"math"
	"testing"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
)

// A limb's update carries its joints' places at the positions it reports,
// taken by name whatever the order the node lists them in; other groups'
// carry none.
func TestJointStatesUpdatePoints(t *testing.T) {
	leg := Group{Name: "leg_left", Role: msg.RoleLimb, Instance: kinematics.LegLeft}
	js := msg.JointStates{Name: []string{"knee", "hip_pitch"}, Position: []float64{math.Pi / 2, 0}}
	u := jointStatesUpdate(leg, js)
	if u.Group != "leg_left" || u.Role != msg.RoleLimb || u.Instance != kinematics.LegLeft || len(u.Name) != 2 {
		t.Fatalf("update %+v does not say where it comes from", u)
	}
	if len(u.Points) != 7 {
		t.Fatalf("%d points, want the six joints and the sole", len(u.Points))
	}
	// The knee bent 90°: the sole level with the knee, 0.22 m behind it.
	knee, sole := u.Points[3], u.Points[6]
	if math.Abs(sole[2]-knee[2]) > 1e-9 || math.Abs(knee[0]-sole[0]-0.22) > 1e-9 {
		t.Fatalf("knee %v, sole %v: want the sole 0.22 m behind the knee at its height", knee, sole)
	}
	// The foot folded back with the shank: its toes point down.
	if f := u.Facing; f == nil || math.Abs(f[2]+1) > 1e-9 {
		t.Fatalf("facing %v, want straight down", f)
	}
	tracks := jointStatesUpdate(Group{Name: "tracks", Role: msg.RoleTracks}, msg.JointStates{Name: []string{"left_track"}, Position: []float64{3}})
	if tracks.Points != nil || tracks.Facing != nil {
		t.Fatalf("the tracks' update has points %v", tracks.Points)
	}
	if u := jointStatesUpdate(Group{Name: "tail", Role: msg.RoleLimb, Instance: "tail"}, js); u.Points != nil {
		t.Fatalf("a limb the humanoid has not got points %v", u.Points)
	}
}

// BenchmarkJointStatesUpdate is the cost of placing a leg's joints for the
// joint_states topic, paid for each joint_states a limb publishes (50 a
// second per limb).
func BenchmarkJointStatesUpdate(b *testing.B) {
	leg := Group{Name: "leg_left", Role: msg.RoleLimb, Instance: kinematics.LegLeft}
	js := msg.JointStates{Name: []string{"hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll"},
		Position: []float64{-0.6, 0.1, 0.05, 1.2, -0.6, 0.02}}
	b.ReportAllocs()
	for b.Loop() {
		_ = jointStatesUpdate(leg, js)
	}
}

// The reference robot's arm is placed by the arms' kinematics, its joints
// taken by name, bare or prefixed as a robot configuration names them; its
// head faces where pan and tilt turn it.
func TestReferenceRobotPoints(t *testing.T) {
	q := []float64{0.3, -0.8, 1.1, 0.4, 0.2}
	want := kinematics.DefaultArm("right").Chain(q)
	for _, names := range [][]string{
		{"shoulder_pan", "shoulder_lift", "elbow", "wrist_pitch", "wrist_roll"},
		{"right_wrist_roll", "right_elbow", "right_shoulder_pan", "right_wrist_pitch", "right_shoulder_lift", "right_gripper"},
	} {
		pos := make([]float64, len(names))
		for k, n := range names {
			for i, j := range kinematics.ArmJointNames() {
				if n == j || n == "right_"+j {
					pos[k] = q[i]
				}
			}
		}
		u := jointStatesUpdate(Group{Name: "arms_right", Role: msg.RoleArms, Instance: "right"}, msg.JointStates{Name: names, Position: pos})
		if len(u.Points) != len(want) {
			t.Fatalf("%v: %d points, want %d", names, len(u.Points), len(want))
		}
		for i := range want {
			if d := want[i].Sub(u.Points[i]).Len(); d > 1e-12 {
				t.Errorf("%v: point %d at %v, the kinematics have %v", names, i, u.Points[i], want[i])
			}
		}
		// The right arm hangs on the robot's right.
		if u.Points[0][1] >= 0 {
			t.Errorf("the right shoulder at %v, not on the right (y < 0)", u.Points[0])
		}
	}

	for _, c := range []struct {
		pan, tilt float64
		want      [3]float64
	}{
		{0, 0, [3]float64{1, 0, 0}},
		{math.Pi / 2, 0, [3]float64{0, 1, 0}},           // panned left
		{0, math.Pi / 6, [3]float64{0.866, 0, -0.5}},    // looking down
		{-math.Pi / 4, 0, [3]float64{0.707, -0.707, 0}}, // panned right
	} {
		u := jointStatesUpdate(Group{Name: "head", Role: msg.RoleHead}, msg.JointStates{Name: []string{"pan", "tilt", "roll"}, Position: []float64{c.pan, c.tilt, 0}})
		if u.Facing == nil || len(u.Points) != 3 {
			t.Fatalf("head update %+v: want three points and a facing", u)
		}
		for i := range c.want {
			if math.Abs(u.Facing[i]-c.want[i]) > 1e-3 {
				t.Errorf("pan %.2f tilt %.2f: facing %v, want %v", c.pan, c.tilt, *u.Facing, c.want)
				break
			}
		}
		if !(u.Points[0][2] < u.Points[1][2] && u.Points[1][2] < u.Points[2][2]) {
			t.Errorf("head points %v: want the torso's top, the head's bottom and its top, rising", u.Points)
		}
	}
}
