package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/server/router/target"
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
	arm, err := r.arm(p.Arm)
	if err != nil {
		return nil, fieldErr("arm", "%v", err)
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

// arm returns side's kinematics (Options.Arms), or why it has none.
func (r *Router) arm(side string) (kinematics.Arm, error) {
	if r.o.Arms == nil {
		return kinematics.DefaultArm(side), nil
	}
	return r.o.Arms(side)
}

// bindPoseTargets gives the arms' pose targets their encoders, which need
// the router: the arms' kinematics, and the joint angles last solved as
// the next solution's seed.
func (r *Router) bindPoseTargets() {
	for _, side := range []string{msg.ArmLeft, msg.ArmRight} {
		name, joints := target.ArmsLeftPose, target.ArmsLeft
		if side == msg.ArmRight {
			name, joints = target.ArmsRightPose, target.ArmsRight
		}
		if t := r.targets[name]; t != nil {
			t.encode = r.poseEncoder(side, name, joints)
		}
	}
}

// poseEncoder turns a pose target's values into the arm's commands (see
// poseCommand), seeded with the angles it solved last (at first, those
// last sent to the arm's joint target). Each new reason for not reaching
// the pose is told once as a warning event: a pose out of reach once
// until one is reached again, however far off the following ones stay.
// It runs on the executor.
func (r *Router) poseEncoder(side, name, jointsTarget string) func(t *Target, v Values) []Publication {
	var seed []float64
	var told string
	return func(t *Target, v Values) []Publication {
		if seed == nil {
			seed = make([]float64, kinematics.NumJoints)
			for i := range seed {
				seed[i] = r.outputs[jointsTarget].last[indexed("joint", i)] * math.Pi / 180
			}
		}
		arm, err := r.arm(side)
		out, why := poseCommand(side, arm, err, t, v, seed)
		reason := ""
		var ue *kinematics.UnreachableError
		switch {
		case errors.As(why, &ue):
			reason = "unreachable"
		case why != nil:
			reason = why.Error()
		}
		if reason != "" && reason != told {
			r.event("warn", fmt.Sprintf("router output %s: %v", name, why))
		}
		told = reason
		return out
	}
}

// poseCommand turns a pose target's values into the arm's commands: the
// gripper's pose (x, y, z and, once any is driven, the quaternion qw, qx,
// qy, qz) becomes the ArmCommand with the joint angles of the arm's
// inverse kinematics from seed, which it updates; the gripper properties
// become a GripperCommand. A pose out of reach sends the closest angles
// found, so that a hand-held controller moved beyond the arm's reach has
// the arm reach towards it; an arm without kinematics (armErr) is sent no
// ArmCommand. why says why the pose is not reached, nil when it is.
func poseCommand(side string, arm kinematics.Arm, armErr error, t *Target, v Values, seed []float64) (out []Publication, why error) {
	if driven(v, "x", "y", "z") {
		var cmd *msg.ArmCommand
		if cmd, why = solvePose(arm, armErr, t, v, seed); cmd != nil {
			out = append(out, Publication{msg.ArmCmdTopic(side), *cmd})
		}
	}
	if g, ok := v["gripper"]; ok {
		out = append(out, Publication{msg.GripperCmdTopic(side), msg.GripperCommand{Position: f32(g), Force: f32(t.value(v, "gripper_force"))}})
	}
	return out, why
}

// solvePose returns the ArmCommand for a pose target's values (nil when
// the arm has no kinematics or the pose is not one) and why the pose is
// not reached (a *kinematics.UnreachableError with the closest angles'
// command).
func solvePose(arm kinematics.Arm, armErr error, t *Target, v Values, seed []float64) (*msg.ArmCommand, error) {
	if armErr != nil {
		return nil, armErr
	}
	target := kinematics.Pose{Position: mgl64.Vec3{t.value(v, "x"), t.value(v, "y"), t.value(v, "z")}, Rotation: mgl64.Ident3()}
	if t.value(v, PropertyBaseFrame) >= SwitchOn {
		target.Position = target.Position.Add(arm.Mount)
	}
	opts := kinematics.Options{OrientationTolerance: -1}
	if driven(v, "qw", "qx", "qy", "qz") {
		q := mgl64.Quat{W: t.value(v, "qw"), V: mgl64.Vec3{t.value(v, "qx"), t.value(v, "qy"), t.value(v, "qz")}}
		if n := q.Len(); n > 1e-6 && !math.IsNaN(n) && !math.IsInf(n, 0) {
			target.Rotation = q.Normalize().Mat4().Mat3()
			opts.OrientationTolerance = 0
		}
	}
	q, err := arm.Inverse(target, seed, opts)
	if err != nil {
		var ue *kinematics.UnreachableError
		if !errors.As(err, &ue) {
			return nil, err
		}
		q = ue.Joints
	}
	copy(seed, q)
	cmd := &msg.ArmCommand{TargetPositions: make([]float32, len(q)), SpeedFactor: f32(t.value(v, "speed")),
		Immediate: t.value(v, "immediate") >= SwitchOn}
	for i, a := range q {
		cmd.TargetPositions[i] = f32(a * 180 / math.Pi)
	}
	return cmd, err
}

// driven reports whether v holds any of the properties.
func driven(v Values, names ...string) bool {
	for _, n := range names {
		if _, ok := v[n]; ok {
			return true
		}
	}
	return false
}
