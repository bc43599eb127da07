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
	arms := jointStatesUpdate(Group{Name: "arms_left", Role: msg.RoleArms, Instance: "left"}, js)
	if arms.Points != nil || arms.Facing != nil {
		t.Fatalf("an arms group's update has points %v", arms.Points)
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
