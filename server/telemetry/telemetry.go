package telemetry

import (
	"encoding/json"
	"strings"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
)

// Topics of the robot's state, as docs/api.md lists them: head, arms and
// tracks carry the limbs' state; the others feed the web UI's pages. (The
// router, rc, system and logs topics belong to their features.)
const (
	TopicHead   = "head"   // HeadState from /saint/head/state
	TopicArms   = "arms"   // ArmState of either arm, with "arm": "left"/"right"
	TopicTracks = "tracks" // TrackState from /saint/tracks/state
	TopicNodes  = "nodes"  // every node's NodeStatus
	// TopicOdom carries the tracks' Odometry from /saint/tracks/odom.
	TopicOdom = "odom"
	// TopicBalance carries BalanceState from /saint/balance/state.
	TopicBalance = "balance"
	// TopicSim carries the simulator's ground truth, when the bus has it:
	// one object {"world": SimWorld, "<model>": its truth ...} per
	// /saint/sim/world tick, so that a rate_hz never drops one model's
	// truth in favour of another's.
	TopicSim = "sim"
	// TopicConsole carries the simulated console's display RAM
	// ({"framebuffer": base64 of 1024 bytes}) from SimConsoleBusTopic.
	TopicConsole = "console"
)

// SimConsoleBusTopic is where saint-sim --viz publishes the console
// display twin's RAM (cmd/internal/vizlaunch.ConsoleBusTopic): the console role draws
// its screen over I²C and does not publish it.
const SimConsoleBusTopic = "/saint/sim/console"

// Register declares the telemetry topics on h and forwards the bus
// topics behind them. shown, if not nil, is what the server shows of a
// node's reported status (adoption.Manager.Shown, called on h's
// executor): the nodes topic carries that, so that a node the bus no
// longer grants its role is never streamed as ACTIVE.
func Register(h *feature.Host, shown func(msg.NodeStatus) msg.NodeStatus) {
	h.Topics(TopicHead, TopicArms, TopicTracks, TopicNodes, TopicOdom, TopicBalance, TopicSim, TopicConsole)
	nodes := func(topic string, v any) {
		if shown != nil {
			var ok bool
			if v, ok = shownStatus(topic, v, shown); !ok {
				return
			}
		}
		h.Gateway.PublishStream(TopicNodes, topic, v)
	}
	h.SubscribeValues(msg.TopicAllNodeStatus, feature.FeedQoS, nodes)
	for _, f := range []struct {
		bus, ws string
		wrap    func(any) any
	}{
		{msg.TopicHeadState, TopicHead, nil},
		{msg.ArmStateTopic(msg.ArmLeft), TopicArms, withField("arm", msg.ArmLeft)},
		{msg.ArmStateTopic(msg.ArmRight), TopicArms, withField("arm", msg.ArmRight)},
		{msg.TopicTracksState, TopicTracks, nil},
		{msg.TopicTracksOdom, TopicOdom, nil},
		{msg.TopicBalanceState, TopicBalance, nil},
		{SimConsoleBusTopic, TopicConsole, nil},
	} {
		h.Forward(f.bus, f.ws, f.wrap)
	}
	simFeed(h)
}

// simFeed gathers each model's latest ground truth and publishes them
// together on TopicSim at every world tick (executor). The world publishes
// its tick before the models' truths, so a snapshot carries the truths of
// the tick before: one truth period (20 ms at 50 Hz) old.
func simFeed(h *feature.Host) {
	latest := map[string]any{} // values to encode (bus.SubscribeValues)
	h.SubscribeValues(msg.TopicSimAllTruth, feature.FeedQoS, func(topic string, v any) {
		latest[strings.TrimPrefix(topic, msg.TopicSimTruthPrefix)] = v
	})
	h.SubscribeValues(msg.TopicSimWorld, feature.FeedQoS, func(_ string, v any) {
		snap := make(map[string]any, len(latest)+1)
		for k, v := range latest {
			snap[k] = v
		}
		snap["world"] = v
		h.Gateway.Publish(TopicSim, snap)
	})
}

// withField adds "key": value to a JSON object (the arm an ArmState is
// from); v is a message value from bus.SubscribeValues. The object is
// rewritten only when the gateway encodes it for a subscribed client.
func withField(key, value string) func(any) any {
	return func(v any) any { return fieldAdded{key, value, v} }
}

// fieldAdded is v with "key": value added to its JSON object.
type fieldAdded struct {
	key, value string
	v          any
}

// MarshalJSON implements json.Marshaler. A v that is not an object is
// encoded as it is.
func (f fieldAdded) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(f.v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || m == nil {
		return data, nil
	}
	m[f.key], _ = json.Marshal(f.value)
	return json.Marshal(m)
}

// shownStatus is v, a NodeStatus from bus topic (bus.SubscribeValues), as
// shown(v) has it; ok is false for a status the server does not take (it
// does not decode, or names another node than its topic, as the adoption
// manager refuses it too). v itself is passed on when shown changes
// nothing.
func shownStatus(topic string, v any, shown func(msg.NodeStatus) msg.NodeStatus) (_ any, ok bool) {
	var st msg.NodeStatus
	switch x := v.(type) {
	case *msg.NodeStatus:
		st = *x
	case msg.NodeStatus:
		st = x
	default:
		data, err := json.Marshal(v) // json.RawMessage from the wire: as it is
		if err != nil || json.Unmarshal(data, &st) != nil {
			return nil, false
		}
	}
	if !msg.ValidNodeID(st.NodeID) || topic != msg.NodeStatusTopic(st.NodeID) {
		return nil, false
	}
	s := shown(st)
	if s.State == st.State && s.Message == st.Message {
		return v, true
	}
	return s, true
}
