package foxglove

import (
	"fmt"
	"math"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
)

// HeadHeight is where the head frame sits above base_link, in metres:
// the pan axis on the reference robot's neck.
const HeadHeight = 0.45

// PublishTransforms publishes the robot's frames on record.TopicTransforms
// (foxglove.FrameTransforms), derived as their sources arrive:
//
//	world → odom            identity, with each odometry message
//	odom → base_link        the tracks' odometry
//	world → truth/tracks    the simulator's ground truth of the tracks
//	world → truth/balance   the ground truth of the balancing base (yaw, pitch)
//	base_link → head        the head's pan, tilt and roll, HeadHeight up
//
// Call it on ex; stop ends it (on ex too). Timestamps are ex's clock, as
// for every other message.
func PublishTransforms(b bus.Bus, ex *executor.Executor) (stop func(), err error) {
	var subs []bus.Subscription
	stop = func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	publish := func(ts ...record.FrameTransform) {
		now := ex.Now()
		stamp := record.Timestamp{Sec: now.Unix(), Nsec: int64(now.Nanosecond())}
		for i := range ts {
			ts[i].Timestamp = stamp
		}
		_ = b.Publish(record.TopicTransforms, record.FrameTransforms{Transforms: ts})
	}
	add := func(s bus.Subscription, err error) error {
		if err != nil {
			stop()
			return fmt.Errorf("foxglove: transforms: %w", err)
		}
		subs = append(subs, s)
		return nil
	}
	// Typed subscriptions: in process the values arrive as copies, with
	// no JSON encoding or decoding on the way (these topics run at up to
	// 1 kHz in simulation).
	qos := bus.QoS{Reliability: bus.BestEffort, Depth: 4}
	if err := add(bus.SubscribeJSON(b, msg.TopicTracksOdom, qos, ex, func(_ string, o msg.Odometry) {
		parent, child := o.Header.FrameID, o.ChildFrameID
		if parent == "" {
			parent = "odom"
		}
		if child == "" {
			child = "base_link"
		}
		p, q := o.Pose.Pose.Position, o.Pose.Pose.Orientation
		publish(
			record.FrameTransform{Parent: "world", Child: parent, Rotation: record.Rotation{W: 1}},
			record.FrameTransform{Parent: parent, Child: child, Translation: record.Vector3{X: p.X, Y: p.Y, Z: p.Z},
				Rotation: record.Rotation{X: q.X, Y: q.Y, Z: q.Z, W: q.W}},
		)
	})); err != nil {
		return nil, err
	}
	if err := add(bus.SubscribeJSON(b, msg.SimTruthTopic("tracks"), qos, ex, func(_ string, t msg.SimTracks) {
		publish(record.FrameTransform{Parent: "world", Child: "truth/tracks", Translation: record.Vector3{X: t.X, Y: t.Y},
			Rotation: euler(0, 0, t.Heading)})
	})); err != nil {
		return nil, err
	}
	if err := add(bus.SubscribeJSON(b, msg.SimTruthTopic("balance"), qos, ex, func(_ string, t msg.SimBalance) {
		publish(record.FrameTransform{Parent: "world", Child: "truth/balance", Translation: record.Vector3{X: t.X, Y: t.Y, Z: t.Z},
			Rotation: euler(0, t.Pitch, t.Yaw)})
	})); err != nil {
		return nil, err
	}
	if err := add(bus.SubscribeJSON(b, msg.TopicHeadState, qos, ex, func(_ string, h msg.HeadState) {
		const deg = math.Pi / 180
		publish(record.FrameTransform{Parent: "base_link", Child: "head", Translation: record.Vector3{Z: HeadHeight},
			Rotation: euler(float64(h.Roll)*deg, float64(h.Tilt)*deg, float64(h.Pan)*deg)})
	})); err != nil {
		return nil, err
	}
	return stop, nil
}

// euler is the quaternion of a rotation by yaw about z, then pitch about
// the new y, then roll about the new x (radians).
func euler(roll, pitch, yaw float64) record.Rotation {
	sr, cr := math.Sincos(roll / 2)
	sp, cp := math.Sincos(pitch / 2)
	sy, cy := math.Sincos(yaw / 2)
	return record.Rotation{
		W: cr*cp*cy + sr*sp*sy,
		X: sr*cp*cy - cr*sp*sy,
		Y: cr*sp*cy + sr*cp*sy,
		Z: cr*cp*sy - sr*sp*cy,
	}
}
