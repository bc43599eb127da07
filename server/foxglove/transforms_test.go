package foxglove_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/foxglove"
)

func TestPublishTransforms(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	stop, err := foxglove.PublishTransforms(b, ex)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	got := map[string]record.FrameTransform{}
	if _, err := bus.SubscribeJSON(b, record.TopicTransforms, bus.QoS{Depth: 100}, ex, func(_ string, ft record.FrameTransforms) {
		for _, tf := range ft.Transforms {
			got[tf.Parent+">"+tf.Child] = tf
		}
	}); err != nil {
		t.Fatal(err)
	}
	odom := msg.Odometry{Header: msg.Header{FrameID: "odom"}, ChildFrameID: "base_link"}
	odom.Pose.Pose.Position.X = 1.5
	odom.Pose.Pose.Orientation.W = 1
	ex.After(10*time.Millisecond, func() {
		_ = b.Publish(msg.TopicTracksOdom, odom)
		_ = b.Publish(msg.TopicHeadState, msg.HeadState{Pan: 90})
		_ = b.Publish(msg.SimTruthTopic("tracks"), msg.SimTracks{X: 2, Y: -1, Heading: math.Pi})
	})
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	const tol = 1e-9
	if tf := got["odom>base_link"]; tf.Translation.X != 1.5 || tf.Rotation.W != 1 || tf.Timestamp.Sec == 0 {
		t.Errorf("odom > base_link: %+v", tf)
	}
	if _, ok := got["world>odom"]; !ok {
		t.Error("no world > odom")
	}
	head := got["base_link>head"]
	if s := math.Sqrt(0.5); math.Abs(head.Rotation.Z-s) > tol || math.Abs(head.Rotation.W-s) > tol || head.Translation.Z != foxglove.HeadHeight {
		t.Errorf("base_link > head for pan 90°: %+v, want a quarter turn about z", head)
	}
	if tr := got["world>truth/tracks"]; tr.Translation.X != 2 || math.Abs(math.Abs(tr.Rotation.Z)-1) > tol {
		t.Errorf("world > truth/tracks for heading π: %+v", tr)
	}
}
