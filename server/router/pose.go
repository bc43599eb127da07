package router

import (
	"context"
	"encoding/json"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/server/ws"
)

// Frames a pose for arms move_pose is given in.
const (
	FrameRobot = "robot" // x forward, y left, z up from the robot's origin
	FrameBase  = "base"  // the same axes from the arm's shoulder mount
)

// armsMovePose moves an arm's gripper to a pose: the joint angles come
// from the arms' inverse kinematics (package kinematics), seeded with the
// angles last sent to the arm, and go out as an arms move.
//
//	{"arm": "left", "position": [0.35, 0.3, 0.3], "orientation": [1, 0, 0, 0],
//	 "frame": "robot", "speed": 0.5, "immediate": false}
//
// position is in metres; orientation (w, x, y, z, a unit quaternion of the
// gripper frame, whose x axis points out of the hand) may be omitted for
// the position alone; frame is "robot" (default) or "base".
func (r *Router) armsMovePose(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		Arm         string    `json:"arm"`
		Position    []float64 `json:"position"`
		Orientation []float64 `json:"orientation"`
		Frame       string    `json:"frame"`
		Immediate   bool      `json:"immediate"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	targets, err := armTargets(p.Arm, false)
	if err != nil {
		return nil, err
	}
	arm := kinematics.DefaultArm(msg.ArmLeft)
	if targets[0] == TargetArmsRight {
		arm = kinematics.DefaultArm(msg.ArmRight)
	}
	if len(p.Position) != 3 {
		return nil, fieldErr("position", "want [x, y, z] in metres, got %d numbers", len(p.Position))
	}
	var target kinematics.Pose
	for i, v := range p.Position {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fieldErr("position", "element %d is not a finite number", i)
		}
		target.Position[i] = v
	}
	switch p.Frame {
	case "", FrameRobot:
	case FrameBase:
		target.Position = target.Position.Add(arm.Mount)
	default:
		return nil, fieldErr("frame", "want %q or %q, got %q", FrameRobot, FrameBase, p.Frame)
	}
	opts := kinematics.Options{OrientationTolerance: -1}
	switch len(p.Orientation) {
	case 0:
	case 4:
		q := mgl64.Quat{W: p.Orientation[0], V: mgl64.Vec3{p.Orientation[1], p.Orientation[2], p.Orientation[3]}}
		n := q.Len()
		if math.IsNaN(n) || math.IsInf(n, 0) || n < 1e-9 {
			return nil, fieldErr("orientation", "want a unit quaternion [w, x, y, z], got length %g", n)
		}
		target.Rotation = q.Normalize().Mat4().Mat3()
		opts.OrientationTolerance = 0
	default:
		return nil, fieldErr("orientation", "want [w, x, y, z], got %d numbers", len(p.Orientation))
	}
	seed := make([]float64, kinematics.NumJoints)
	if err := r.ex.Do(ctx, func() {
		for i := range seed {
			seed[i] = r.outputs[targets[0]].last[indexed("joint", i)] * math.Pi / 180
		}
	}); err != nil {
		return nil, err
	}
	q, err := arm.Inverse(target, seed, opts)
	if err != nil {
		// Unreachable (*kinematics.UnreachableError says how far off the
		// closest pose stays) or not a pose at all.
		return nil, fieldErr("position", "%v", err)
	}
	joint, _ := r.targets[targets[0]].Property(indexed("joint", 0))
	vals, joints := Values{}, make([]float64, len(q))
	for i, v := range q {
		deg := v * 180 / math.Pi
		if err := joint.Check(indexed("joint", i), deg); err != nil {
			return nil, err
		}
		vals[indexed("joint", i)], joints[i] = deg, deg
	}
	res, err := r.armJointsMove(ctx, params, targets[0], vals, p.Immediate)
	if err != nil {
		return nil, err
	}
	return map[string]any{"joints_deg": joints, "result": res}, nil
}
