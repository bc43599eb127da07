package server

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/activity"
)

// Subscription topics of the WebSocket API. The spec names head, arms and
// tracks; the others feed the web UI's pages.
const (
	TopicHead   = "head"   // HeadState from /saint/head/state
	TopicArms   = "arms"   // ArmState of either arm, with "arm": "left"/"right"
	TopicTracks = "tracks" // TrackState from /saint/tracks/state
	TopicNodes  = "nodes"  // every node's NodeStatus
	TopicRC     = "rc"     // RCReceiverState from /saint/rc/state
	TopicRouter = "router" // RouteStatus from /saint/router/status
	TopicSystem = "system" // SystemStatus, once a second
	TopicLogs   = "logs"   // each new activity log event
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
// display twin's RAM (viz/launch.ConsoleBusTopic): the console role draws
// its screen over I²C and does not publish it.
const SimConsoleBusTopic = "/saint/sim/console"

// Topics lists the subscribable topics.
func Topics() []string {
	return []string{TopicHead, TopicArms, TopicTracks, TopicNodes, TopicRC, TopicRouter, TopicSystem, TopicLogs, TopicOdom, TopicBalance, TopicSim, TopicConsole}
}

// SystemStatusInterval is how often the "system" topic is updated.
const SystemStatusInterval = time.Second

// startFeeds forwards bus topics and activity events to the WebSocket
// subscribers (executor).
func (s *Server) startFeeds() error {
	// The gateway encodes a state only when a client is subscribed to it:
	// values (SubscribeValues) leave the encoding to it.
	forward := func(busTopic, wsTopic string, wrap func(any) any) error {
		sub, err := bus.SubscribeValues(s.o.Bus, busTopic, bus.QoS{Reliability: bus.BestEffort, Depth: 16}, s.ex, func(_ string, v any) {
			if wrap != nil {
				v = wrap(v)
			}
			s.gateway.Publish(wsTopic, v)
		})
		if err == nil {
			s.subs = append(s.subs, sub)
		}
		return err
	}
	for _, f := range []struct {
		bus, ws string
		wrap    func(any) any
	}{
		{msg.TopicHeadState, TopicHead, nil},
		{msg.ArmStateTopic(msg.ArmLeft), TopicArms, withField("arm", msg.ArmLeft)},
		{msg.ArmStateTopic(msg.ArmRight), TopicArms, withField("arm", msg.ArmRight)},
		{msg.TopicTracksState, TopicTracks, nil},
		{msg.TopicAllNodeStatus, TopicNodes, nil},
		{msg.TopicRouterStatus, TopicRouter, nil},
		{msg.TopicTracksOdom, TopicOdom, nil},
		{msg.TopicBalanceState, TopicBalance, nil},
		{SimConsoleBusTopic, TopicConsole, nil},
	} {
		if err := forward(f.bus, f.ws, f.wrap); err != nil {
			return err
		}
	}
	if err := s.startSimFeed(); err != nil {
		return err
	}
	rc, err := s.o.Bus.Subscribe(msg.TopicRCState, bus.QoS{Reliability: bus.BestEffort, Depth: 16}, s.ex, func(m bus.Msg) {
		var st msg.RCReceiverState
		if m.Decode(&st) == nil {
			s.onRCState(st)
		}
		s.gateway.Publish(TopicRC, json.RawMessage(m.Data))
	})
	if err != nil {
		return err
	}
	s.subs = append(s.subs, rc)
	s.stopLogFeed = s.activity.Subscribe(func(e activity.Event) { s.gateway.Publish(TopicLogs, e) })
	s.statusTimer = s.ex.Every(SystemStatusInterval, func() { s.gateway.Publish(TopicSystem, s.systemStatus()) })
	return nil
}

// startSimFeed gathers each model's latest ground truth and publishes them
// together on TopicSim at every world tick (executor). The world publishes
// its tick before the models' truths, so a snapshot carries the truths of
// the tick before: one truth period (20 ms at 50 Hz) old.
func (s *Server) startSimFeed() error {
	latest := map[string]any{} // values to encode (bus.SubscribeValues)
	qos := bus.QoS{Reliability: bus.BestEffort, Depth: 16}
	truth, err := bus.SubscribeValues(s.o.Bus, msg.TopicSimAllTruth, qos, s.ex, func(topic string, v any) {
		latest[strings.TrimPrefix(topic, msg.TopicSimTruthPrefix)] = v
	})
	if err != nil {
		return err
	}
	s.subs = append(s.subs, truth)
	world, err := bus.SubscribeValues(s.o.Bus, msg.TopicSimWorld, qos, s.ex, func(_ string, v any) {
		snap := make(map[string]any, len(latest)+1)
		for k, v := range latest {
			snap[k] = v
		}
		snap["world"] = v
		s.gateway.Publish(TopicSim, snap)
	})
	if err != nil {
		return err
	}
	s.subs = append(s.subs, world)
	return nil
}

// stopFeeds ends what startFeeds began (executor); bus subscriptions end
// with the server's others.
func (s *Server) stopFeeds() {
	if s.stopLogFeed != nil {
		s.stopLogFeed()
		s.stopLogFeed = nil
	}
	if s.statusTimer != nil {
		s.statusTimer.Stop()
		s.statusTimer = nil
	}
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
