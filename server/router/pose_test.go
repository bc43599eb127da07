package router_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
)

// TestWebSocketArmsMovePose: arms move_pose sends the arm joint angles
// whose forward kinematics put the gripper at the pose asked for, in the
// robot frame and in the arm's base frame, with and without orientation.
func TestWebSocketArmsMovePose(t *testing.T) {
	l := startLive(t, t.TempDir())
	c := l.dial()
	left := kinematics.DefaultArm(msg.ArmLeft)
	reaches := func(want kinematics.Pose, orient bool) func(msg.ArmCommand) bool {
		return func(a msg.ArmCommand) bool {
			if len(a.TargetPositions) != kinematics.NumJoints {
				return false
			}
			q := make([]float64, len(a.TargetPositions))
			for i, d := range a.TargetPositions {
				q[i] = float64(d) * math.Pi / 180
			}
			got := left.Forward(q)
			// The command carries float32 degrees: 1e-5° over 0.7 m is
			// well under a millimetre.
			if got.Position.Sub(want.Position).Len() > 1e-3 {
				return false
			}
			if !orient {
				return true
			}
			return got.Rotation.Col(0).Sub(want.Rotation.Col(0)).Len() < 1e-3 &&
				got.Rotation.Col(1).Sub(want.Rotation.Col(1)).Len() < 1e-3
		}
	}

	// A pose the arm reaches at known joint angles.
	want := left.Forward([]float64{0.3, 0.8, -1.1, 0.4, 0.2})
	p := want.Position
	c.ok(fmt.Sprintf(`{"type": "command", "target": "arms", "action": "move_pose",
		"params": {"arm": "left", "position": [%.9f, %.9f, %.9f], "speed": 0.5}}`, p[0], p[1], p[2]))
	waitFor(l, msg.ArmCmdTopic(msg.ArmLeft), reaches(want, false))

	q := mgl64.Mat4ToQuat(want.Rotation.Mat4())
	b := p.Sub(left.Mount)
	c.ok(fmt.Sprintf(`{"type": "command", "target": "arms", "action": "move_pose",
		"params": {"arm": "left", "frame": "base", "position": [%.9f, %.9f, %.9f], "orientation": [%.9f, %.9f, %.9f, %.9f]}}`,
		b[0], b[1], b[2], q.W, q.V[0], q.V[1], q.V[2]))
	waitFor(l, msg.ArmCmdTopic(msg.ArmLeft), reaches(want, true))

	for _, tc := range []struct{ req, field string }{
		{`{"type": "command", "target": "arms", "action": "move_pose", "params": {"arm": "left", "position": [3, 0, 0.5]}}`, "position"},
		{`{"type": "command", "target": "arms", "action": "move_pose", "params": {"arm": "left", "position": [0.3, 0]}}`, "position"},
		{`{"type": "command", "target": "arms", "action": "move_pose", "params": {"arm": "left", "position": [0.3, 0.2, 0.4], "orientation": [0, 0, 0, 0]}}`, "orientation"},
		{`{"type": "command", "target": "arms", "action": "move_pose", "params": {"arm": "left", "position": [0.3, 0.2, 0.4], "frame": "world"}}`, "frame"},
		{`{"type": "command", "target": "arms", "action": "move_pose", "params": {"arm": "both", "position": [0.3, 0.2, 0.4]}}`, "arm"},
	} {
		c.fails(tc.req, tc.field)
	}
}
