package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/server/router/target"
)

// vrRoutes: a LiveLink transform subject drives the left gripper's pose,
// its trigger the gripper; WebSocket passthrough at 200.
const vrRoutes = `
blending: {mode: priority, source_timeout_ms: 500}
routes:
  - id: vr_left_hand
    enabled: true
    priority: 100
    input: {source: livelink, subject: VR_Controller_L, type: transform}
    output: {target: arms.left.pose}
    mapping:
      - {from: x, to: x}
      - {from: y, to: y}
      - {from: z, to: z}
      - {from: qw, to: qw}
      - {from: qx, to: qx}
      - {from: qy, to: qy}
      - {from: qz, to: qz}
      - {from: trigger, to: gripper, scale: -1, offset: 1}
  - id: websocket_direct
    enabled: true
    priority: 200
    input: {source: websocket, command_types: [move, gripper]}
    output: {target: "*"}
    mapping: passthrough
`

// transformInput is a LiveLink transform subject's frame as the router
// takes it.
func transformInput(subject string, p kinematics.Pose, props map[string]float32) Input {
	q := mgl64.Mat4ToQuat(p.Rotation.Mat4())
	f := msg.LiveLinkFrame{SubjectName: subject, SubjectType: msg.SubjectTransform,
		Transform: msg.Transform{Translation: msg.Vector3{X: p.Position[0], Y: p.Position[1], Z: p.Position[2]},
			Rotation: msg.Quaternion{W: q.W, X: q.V[0], Y: q.V[1], Z: q.V[2]}}}
	for k, v := range props {
		f.PropertyNames, f.PropertyValues = append(f.PropertyNames, k), append(f.PropertyValues, v)
	}
	return LiveLinkInput(f)
}

// reached is the pose of an ArmCommand's joint angles.
func reached(arm kinematics.Arm, c msg.ArmCommand) kinematics.Pose {
	q := make([]float64, len(c.TargetPositions))
	for i, d := range c.TargetPositions {
		q[i] = float64(d) * math.Pi / 180
	}
	return arm.Forward(q)
}

func poseOff(want, got kinematics.Pose) (metres, axes float64) {
	return got.Position.Sub(want.Position).Len(),
		math.Max(got.Rotation.Col(0).Sub(want.Rotation.Col(0)).Len(), got.Rotation.Col(1).Sub(want.Rotation.Col(1)).Len())
}

// TestPoseTargetFollowsTransformSubject: a LiveLink transform subject
// routed to arms.left.pose moves the arm so that its gripper is at the
// subject's pose (position and orientation), follows it as it moves, and
// opens the gripper from another of the subject's properties; a pose out
// of reach has the arm reach towards it and is told once.
func TestPoseTargetFollowsTransformSubject(t *testing.T) {
	var events []string
	arm := kinematics.DefaultArm(msg.ArmLeft)
	rg := newRigOpts(t, Options{Presets: fstest.MapFS{"default.yaml": {Data: []byte(vrRoutes)}},
		OnEvent: func(level, text string) { events = append(events, level+": "+text) }})
	for i, q := range [][]float64{{0.3, 0.8, -1.1, 0.4, 0.2}, {0.35, 0.75, -1.05, 0.45, 0.25}, {-0.5, 0.2, -0.6, 1.0, -0.4}} {
		want := arm.Forward(q)
		rg.reset()
		if err := rg.submit(transformInput("VR_Controller_L", want, map[string]float32{"trigger": 0.25})); err != nil {
			t.Fatal(err)
		}
		rg.run(40 * time.Millisecond)
		cmds := decodeAll[msg.ArmCommand](rg, msg.ArmCmdTopic(msg.ArmLeft))
		if len(cmds) == 0 {
			t.Fatalf("pose %d: no ArmCommand", i)
		}
		last := cmds[len(cmds)-1]
		if len(last.TargetPositions) != kinematics.NumJoints || last.SpeedFactor != 1 || last.Immediate {
			t.Fatalf("pose %d: command %+v", i, last)
		}
		if dp, dr := poseOff(want, reached(arm, last)); dp > 1e-3 || dr > 1e-3 {
			t.Errorf("pose %d: the command's gripper is %.2g m and %.2g (axes) from the subject's pose", i, dp, dr)
		}
		grips := decodeAll[msg.GripperCommand](rg, msg.GripperCmdTopic(msg.ArmLeft))
		if len(grips) == 0 || grips[len(grips)-1].Position != 0.75 {
			t.Errorf("pose %d: gripper commands %+v, want opening 0.75", i, grips)
		}
	}
	if len(events) != 0 {
		t.Errorf("reachable poses told %v", events)
	}

	// Far out in front: the arm stretches towards it, and says so once.
	far := kinematics.Pose{Position: mgl64.Vec3{2, 0.22, 0.5}, Rotation: mgl64.Ident3()}
	rg.reset()
	if err := rg.submit(transformInput("VR_Controller_L", far, nil)); err != nil {
		t.Fatal(err)
	}
	rg.run(100 * time.Millisecond)
	cmds := decodeAll[msg.ArmCommand](rg, msg.ArmCmdTopic(msg.ArmLeft))
	if len(cmds) < 2 {
		t.Fatalf("%d ArmCommands for a pose out of reach, want one per tick", len(cmds))
	}
	tip := reached(arm, cmds[len(cmds)-1]).Position
	if d := tip.Sub(arm.Mount).Len(); d < arm.Reach()*0.95 || tip[0] < 0.5 {
		t.Errorf("out of reach: the gripper goes to %v, %.3f m from the shoulder, want the arm stretched forward (reach %.3f m)", tip, d, arm.Reach())
	}
	// The controller moves on, still out of reach: no new warning.
	if err := rg.submit(transformInput("VR_Controller_L", kinematics.Pose{Position: mgl64.Vec3{1.5, 0.5, 0.9}, Rotation: mgl64.Ident3()}, nil)); err != nil {
		t.Fatal(err)
	}
	rg.run(100 * time.Millisecond)
	if len(events) != 1 || !strings.Contains(events[0], "arms.left.pose") || !strings.Contains(events[0], "unreachable") {
		t.Errorf("events %q, want one warning that the pose is out of reach", events)
	}
	// Back within reach, and out again: told again.
	if err := rg.submit(transformInput("VR_Controller_L", arm.Forward([]float64{0.3, 0.8, -1.1, 0.4, 0.2}), nil)); err != nil {
		t.Fatal(err)
	}
	rg.run(100 * time.Millisecond)
	if err := rg.submit(transformInput("VR_Controller_L", far, nil)); err != nil {
		t.Fatal(err)
	}
	rg.run(100 * time.Millisecond)
	if len(events) != 2 {
		t.Errorf("events %q, want a second warning after the pose was reached in between", events)
	}
}

// TestPoseTargetBaseFrameAndPositionOnly: base_frame puts x, y, z at the
// shoulder mount; a route that drives no quaternion asks for the position
// only.
func TestPoseTargetBaseFrameAndPositionOnly(t *testing.T) {
	arm := kinematics.DefaultArm(msg.ArmRight)
	rg := newRig(t, vrRoutes)
	want := arm.Forward([]float64{-0.4, 0.6, -1.2, 0.9, 0})
	b := want.Position.Sub(arm.Mount)
	if err := rg.submit(wsCmd(target.ArmsRightPose, target.CommandMove, map[string]float64{"x": b[0], "y": b[1], "z": b[2], PropertyBaseFrame: 1, "speed": 0.3})); err != nil {
		t.Fatal(err)
	}
	cmds := decodeAll[msg.ArmCommand](rg, msg.ArmCmdTopic(msg.ArmRight))
	if len(cmds) != 1 {
		t.Fatalf("%d ArmCommands for one WebSocket command, want 1 at once", len(cmds))
	}
	if d := reached(arm, cmds[0]).Position.Sub(want.Position).Len(); d > 1e-3 || cmds[0].SpeedFactor != 0.3 {
		t.Errorf("command %+v: gripper %.2g m from the position", cmds[0], d)
	}
	// A zero quaternion (ROS 2's unset orientation) asks for the position
	// only too.
	rg.reset()
	if err := rg.submit(wsCmd(target.ArmsRightPose, target.CommandMove, map[string]float64{"x": b[0], "y": b[1], "z": b[2], PropertyBaseFrame: 1,
		"qw": 0, "qx": 0, "qy": 0, "qz": 0})); err != nil {
		t.Fatal(err)
	}
	cmds = decodeAll[msg.ArmCommand](rg, msg.ArmCmdTopic(msg.ArmRight))
	if len(cmds) != 1 || reached(arm, cmds[0]).Position.Sub(want.Position).Len() > 1e-3 {
		t.Errorf("a zero quaternion: commands %+v", cmds)
	}
}

// TestPoseTargetWithoutKinematics: an arm whose configuration says it has
// no kinematics is sent no ArmCommand from its pose target, the gripper
// still works, and the reason is told; arms move_pose is refused naming
// the arm.
func TestPoseTargetWithoutKinematics(t *testing.T) {
	noKin := errors.New("the left arm does not support kinematics (supports_kinematics: false)")
	var events []string
	rg := newRigOpts(t, Options{Presets: fstest.MapFS{"default.yaml": {Data: []byte(vrRoutes)}},
		OnEvent: func(level, text string) { events = append(events, level+": "+text) },
		Arms: func(side string) (kinematics.Arm, error) {
			if side == msg.ArmLeft {
				return kinematics.Arm{}, noKin
			}
			return kinematics.DefaultArm(side), nil
		}})
	if err := rg.submit(transformInput("VR_Controller_L", kinematics.DefaultArm(msg.ArmLeft).Forward(nil), map[string]float32{"trigger": 1})); err != nil {
		t.Fatal(err)
	}
	rg.run(100 * time.Millisecond)
	if n := len(rg.got[msg.ArmCmdTopic(msg.ArmLeft)]); n != 0 {
		t.Errorf("%d ArmCommands to an arm without kinematics", n)
	}
	if n := len(rg.got[msg.GripperCmdTopic(msg.ArmLeft)]); n == 0 {
		t.Error("no GripperCommand")
	}
	if fmt.Sprint(events) != "[warn: router output arms.left.pose: "+noKin.Error()+"]" {
		t.Errorf("events %q", events)
	}
	// move_pose is refused before anything is solved or sent.
	_, err := rg.r.armsMovePose(context.Background(), nil, json.RawMessage(`{"arm": "left", "position": [0.3, 0.2, 0.4]}`))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "arm" || !strings.Contains(err.Error(), "does not support kinematics") {
		t.Errorf("move_pose on an arm without kinematics: %v, want an error naming arm", err)
	}
}

// TestPoseTargetIsGivenWhole: a pose target takes only what the route
// driving it gives now: a base-frame pose with an orientation from one
// source does not leak its frame or orientation into the next source's
// position-only pose in the robot frame.
func TestPoseTargetIsGivenWhole(t *testing.T) {
	arm := kinematics.DefaultArm(msg.ArmLeft)
	rg := newRig(t, vrRoutes)
	first := arm.Forward([]float64{0.3, 0.8, -1.1, 0.4, 0.2})
	b := first.Position.Sub(arm.Mount)
	q := mgl64.Mat4ToQuat(first.Rotation.Mat4())
	if err := rg.submit(wsCmd(target.ArmsLeftPose, target.CommandMove, map[string]float64{"x": b[0], "y": b[1], "z": b[2],
		"qw": q.W, "qx": q.V[0], "qy": q.V[1], "qz": q.V[2], PropertyBaseFrame: 1})); err != nil {
		t.Fatal(err)
	}
	rg.run(time.Second) // the WebSocket source times out
	// A position only, in the robot frame, from a route driving x, y, z.
	second := arm.Forward([]float64{-0.4, 0.5, -0.9, -0.6, 0.8})
	rg.reset()
	if err := rg.submit(Input{Source: msg.SourceWebSocket, Target: target.ArmsLeftPose, Command: target.CommandMove,
		Values: map[string]float64{"x": second.Position[0], "y": second.Position[1], "z": second.Position[2]}}); err != nil {
		t.Fatal(err)
	}
	cmds := decodeAll[msg.ArmCommand](rg, msg.ArmCmdTopic(msg.ArmLeft))
	if len(cmds) != 1 {
		t.Fatalf("%d ArmCommands", len(cmds))
	}
	if d := reached(arm, cmds[0]).Position.Sub(second.Position).Len(); d > 1e-3 {
		t.Errorf("the second pose is reached %.3f m off: the first one's frame or orientation carried over", d)
	}
}
