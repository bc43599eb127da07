package arms_test

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
)

func (r *armRig) heartbeat() *executor.Timer {
	var seq uint64
	return r.Ex.Every(msg.HeartbeatInterval, func() {
		seq++
		_ = r.Bus.Publish(msg.TopicServerHeartbeat, msg.ServerHeartbeat{Seq: seq})
	})
}

// torque reports whether joint i's servo (id i+1 on the left arm's bus)
// has its torque on.
func (r *armRig) torque(i int) bool { return r.robot.Feetech(0).Servo(uint8(i + 1)).Goal().Torque }

// The server falls silent in the middle of a move: the arm stops there
// and holds (link_loss: hold, the default), refuses commands while the
// link is lost, stays put when it returns, and moves on a fresh command.
func TestArmHoldsWhenTheServerLinkIsLost(t *testing.T) {
	r := newArmRig(t)
	hb := r.heartbeat()
	r.Run(200 * time.Millisecond)
	// shoulder_lift rests at 90°; down to 0° takes 1.5 s.
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 0}, SpeedFactor: 1})
	r.Run(500 * time.Millisecond)
	hb.Stop()
	r.Run(1500 * time.Millisecond)
	held := r.lastTruth().Positions[1] / deg
	if held < 10 || held > 80 {
		t.Fatalf("shoulder_lift at %.1f° 2 s into a 1.5 s move with the link lost after 0.5 s: want held short of 0°", held)
	}
	if st := r.lastState(); !st.ErrorState {
		t.Errorf("ArmState %+v with the link lost, want error_state saying so", st)
	}
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 90}, SpeedFactor: 1})
	r.Run(time.Second)
	if got := r.lastTruth().Positions[1] / deg; math.Abs(got-held) > 1 {
		t.Errorf("a command with the link lost moved shoulder_lift from %.1f° to %.1f°", held, got)
	}
	hb = r.heartbeat()
	defer hb.Stop()
	r.Run(time.Second)
	if got := r.lastTruth().Positions[1] / deg; math.Abs(got-held) > 1 {
		t.Errorf("the link came back and shoulder_lift moved from %.1f° to %.1f° without a fresh command", held, got)
	}
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 0}, SpeedFactor: 1})
	r.Run(2 * time.Second)
	if got := r.lastTruth().Positions[1] / deg; math.Abs(got) > 2 {
		t.Errorf("a fresh command with the link back: shoulder_lift at %.1f°, want 0", got)
	}
}

// With link_loss: limp the servos lose their torque when the link goes
// and stay without it until the next command.
func TestArmGoesLimpWhenTheServerLinkIsLostIfConfigured(t *testing.T) {
	r := newArmRigWith(t, false, func(c *roleconfig.Config) { c.Params["link_loss"] = "limp" })
	hb := r.heartbeat()
	r.Run(200 * time.Millisecond)
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 30}, SpeedFactor: 1})
	r.Run(1500 * time.Millisecond)
	hb.Stop()
	r.Run(500 * time.Millisecond)
	for i := 0; i < 5; i++ {
		if on := r.torque(i); on {
			t.Errorf("joint %d servo torque on with the link lost, want limp", i)
		}
	}
	hb = r.heartbeat()
	defer hb.Stop()
	r.Run(500 * time.Millisecond)
	if on := r.torque(1); on {
		t.Error("torque back on when the link returned, before any command")
	}
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 0}, SpeedFactor: 1})
	r.Run(300 * time.Millisecond)
	if on := r.torque(1); !on {
		t.Error("a fresh command after the link returned: torque still off")
	}
}
