package server

import (
	"encoding/json"
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
)

// Topics lists the subscribable topics.
func Topics() []string {
	return []string{TopicHead, TopicArms, TopicTracks, TopicNodes, TopicRC, TopicRouter, TopicSystem, TopicLogs}
}

// SystemStatusInterval is how often the "system" topic is updated.
const SystemStatusInterval = time.Second

// startFeeds forwards bus topics and activity events to the WebSocket
// subscribers (executor).
func (s *Server) startFeeds() error {
	forward := func(busTopic, wsTopic string, wrap func(json.RawMessage) any) error {
		sub, err := s.o.Bus.Subscribe(busTopic, bus.QoS{Reliability: bus.BestEffort, Depth: 16}, s.ex, func(m bus.Msg) {
			var v any = json.RawMessage(m.Data)
			if wrap != nil {
				v = wrap(m.Data)
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
		wrap    func(json.RawMessage) any
	}{
		{msg.TopicHeadState, TopicHead, nil},
		{msg.ArmStateTopic(msg.ArmLeft), TopicArms, withField("arm", msg.ArmLeft)},
		{msg.ArmStateTopic(msg.ArmRight), TopicArms, withField("arm", msg.ArmRight)},
		{msg.TopicTracksState, TopicTracks, nil},
		{msg.TopicAllNodeStatus, TopicNodes, nil},
		{msg.TopicRouterStatus, TopicRouter, nil},
	} {
		if err := forward(f.bus, f.ws, f.wrap); err != nil {
			return err
		}
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
// from).
func withField(key, value string) func(json.RawMessage) any {
	return func(data json.RawMessage) any {
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			return data
		}
		v, _ := json.Marshal(value)
		m[key] = v
		return m
	}
}
