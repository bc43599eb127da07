package msg_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

// The motor middleware's messages have snake_case JSON names on every
// field and survive a round trip.
func TestArmsControlMessages(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	for _, v := range []any{
		&msg.GetAvailableMotorsResponse{MotorIDs: []int{1, 2}, JointNames: []string{"a", "b"}, Reachable: []bool{true, false}},
		&msg.RequestControlRequest{Client: "c", TimeoutMS: 300, Behavior: msg.BehaviorKeep},
		&msg.RequestControlResponse{Success: true, UUID: "u", Message: "m"},
		&msg.ReleaseControlRequest{UUID: "u"},
		&msg.ReleaseControlResponse{Success: true, Message: "m"},
		&msg.ControlCommand{UUID: "u", Mode: msg.ModeMixed, MotorIDs: []int{3}, Positions: []float64{0.1}, Velocities: []float64{0.2}, Torques: []float64{0.3}, Kp: []float64{4}, Kd: []float64{5}},
		&msg.SessionStatus{State: "active", Client: "c", Mode: msg.ModeTorque, Behavior: msg.BehaviorDamping, Applied: "x", TimeoutMS: 9, Commands: 2, Rejected: 1, LastError: "e", Calibrating: true, Session: msg.SessionTag("u")},
		&msg.JointStates{Header: msg.Header{FrameID: "f"}, Name: []string{"a"}, Position: []float64{1}, Velocity: []float64{2}, Effort: []float64{3}},
		&msg.ResetZeroRequest{TimeoutMS: 10000},
		&msg.ResetZeroResponse{Success: true, Message: "m", Positions: []float64{0.01}},
		&msg.ArmHomeRequest{SpeedFactor: 0.5},
		&msg.ArmHomeResponse{Success: true, Message: "m"},
		&msg.RequestControlRequest{Client: "c", MotorIDs: []int{11, 12}},
		&msg.SessionStatus{State: "active", Sessions: []msg.MotorSession{{Client: "c", MotorIDs: []int{11}, Behavior: msg.BehaviorKeep, Mode: msg.ModePosition, TimeoutMS: 500, Commands: 3, Groups: []string{"arms_left"}}}},
		&msg.MotorsStatus{Groups: []msg.MotorGroupStatus{{Name: "head", Prefix: "/saint/head", Online: true, MotorIDs: []int{31}, HeldBy: "c"}}, Sessions: []msg.MotorSession{{Client: "c"}}},
		&msg.PlayActionRequest{Name: "wave", Client: "c", Async: true},
		&msg.PlayActionResponse{Success: true, Message: "m", DurationS: 3.9},
		&msg.ListActionsResponse{Actions: []msg.ActionInfo{{Name: "wave", Description: "d", Joints: []string{"a"}, DurationS: 1}}},
	} {
		typ := reflect.TypeOf(v).Elem()
		for i := 0; i < typ.NumField(); i++ {
			if tag := typ.Field(i).Tag.Get("json"); !snake.MatchString(tag) {
				t.Errorf("%s.%s: json name %q is not snake_case", typ.Name(), typ.Field(i).Name, tag)
			}
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(typ).Interface()
		if err := json.Unmarshal(data, back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Errorf("%s: %s decodes to %+v", typ.Name(), data, back)
		}
	}
	if got := msg.MotorName("/saint/arms/left", msg.MotorJointStates); got != "/saint/arms/left/joint_states" {
		t.Errorf("MotorName = %q", got)
	}
	if got := msg.RootMotorName(msg.MotorRequestControl); got != "/request_control" {
		t.Errorf("RootMotorName = %q", got)
	}
	u1, u2 := "0b5e3a4c-7f1d-4c2a-9e0b-3d6f8a1c2b4e", "0b5e3a4c-7f1d-4c2a-9e0b-3d6f8a1c2b4f"
	if a, b := msg.SessionTag(u1), msg.SessionTag(u2); len(a) != 12 || a == b || a != msg.SessionTag(u1) || msg.SessionTag("") != "" {
		t.Errorf("SessionTag: %q, %q for two uuids, %q for none", a, b, msg.SessionTag(""))
	}
}
