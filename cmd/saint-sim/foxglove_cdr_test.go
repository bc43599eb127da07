package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
)

// busPayloads are messages of the ROS 2 types a recording stores as CDR,
// with values that show a misplaced byte: odometry with a pose, a twist
// and a covariance, a camera frame's bytes, the router's status with
// NamedValue[] outputs, a node's status, joint states in a robot
// namespace.
func busPayloads() map[string][]any {
	return map[string][]any{
		msg.TopicTracksOdom: {
			msg.Odometry{Header: msg.Header{Stamp: msg.Time{Sec: 12, Nanosec: 345000000}, FrameID: "odom"}, ChildFrameID: "base_link",
				Pose: msg.PoseWithCovariance{Pose: msg.Pose{Position: msg.Point{X: 1.25, Y: -0.5, Z: 0.001},
					Orientation: msg.Quaternion{Z: 0.3826834323650898, W: 0.9238795325112867}}, Covariance: [36]float64{0: 0.01, 7: 0.02, 35: 0.05}},
				Twist: msg.TwistWithCovariance{Twist: msg.Twist{Linear: msg.Vector3{X: 0.4}, Angular: msg.Vector3{Z: -0.2}}}},
			msg.Odometry{Header: msg.Header{Stamp: msg.Time{Sec: 12, Nanosec: 395000000}, FrameID: "odom"}, ChildFrameID: "base_link",
				Pose:  msg.PoseWithCovariance{Pose: msg.Pose{Position: msg.Point{X: 1.27, Y: -0.51}, Orientation: msg.Quaternion{W: 1}}},
				Twist: msg.TwistWithCovariance{Twist: msg.Twist{Linear: msg.Vector3{X: 0.41, Y: 1e-9}, Angular: msg.Vector3{Z: 3.14159}}}},
		},
		msg.TopicHeadState: {msg.HeadState{Pan: 25, Tilt: -12.5, Roll: 3.3, CameraActive: true, Jaw: 0.75}},
		msg.TopicHeadCameraImageRaw: {msg.Image{Header: msg.Header{FrameID: "head"}, Height: 2, Width: 2, Encoding: msg.ImageRGB8, Step: 6,
			Data: []byte{255, 0, 0, 0, 255, 0, 0, 0, 255, 7, 8, 9}}},
		msg.TopicRouterStatus: {msg.RouteStatus{State: "routing", Timestamp: 1.7e9 + 0.25, EStopActive: true, EStopSource: "rc",
			Routes:  []msg.RouteState{{RouteID: "rc-head", Enabled: true, Priority: 80, Source: "rc", Target: "head", Active: true}},
			Outputs: []msg.OutputState{{Target: "head", State: "routing", RouteIDs: []string{"rc-head"}, Values: map[string]float32{"pan": 12.5, "tilt": -4}}}}},
		"/saint/nodes/sim-head/status": {msg.NodeStatus{NodeID: "sim-head", State: "ACTIVE", Role: "head", FirmwareVersion: "1.2.3", CPUTemp: 41.5}},
		"/saint/arms/left/joint_states": {msg.JointStates{Header: msg.Header{FrameID: "left_arm"}, Name: []string{"j0", "j1"},
			Position: []float64{0.1, -0.2}, Velocity: []float64{0, 0.5}, Effort: []float64{1.5, 2}}},
	}
}

// writeROS2Recording records busPayloads with the default encoding and
// writes the JSON the bus carried beside it, for mcap.mjs to compare.
func writeROS2Recording(t *testing.T, dir string) (file, expected string) {
	t.Helper()
	file, expected = filepath.Join(dir, "cdr.mcap"), filepath.Join(dir, "cdr-expected.json")
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	rec, err := record.Start(record.Options{Bus: sub, Exec: ex, File: file})
	if err != nil {
		t.Fatal(err)
	}
	payloads := busPayloads()
	want := map[string][]json.RawMessage{}
	ex.After(10*time.Millisecond, func() {
		for topic, ps := range payloads {
			for _, p := range ps {
				b, err := json.Marshal(p)
				if err != nil {
					t.Error(err)
				}
				want[topic] = append(want[topic], b)
				if err := pub.Publish(topic, json.RawMessage(b)); err != nil {
					t.Error(err)
				}
			}
		}
	})
	if err := ex.RunFor(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(want)
	if err := os.WriteFile(expected, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return file, expected
}
