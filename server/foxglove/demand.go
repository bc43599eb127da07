package foxglove

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/ws"
)

// Demand is a topic that carries messages only while something asks for
// them, such as the head camera's frames. The server advertises its
// channel from the start, so a client can subscribe before the first
// message, and calls Set(true) when the channel's first subscriber comes
// and Set(false) when its last one leaves (unsubscribes or disconnects).
type Demand struct {
	// Topic is the bus topic.
	Topic string
	// Set starts (true) or stops (false) the topic's messages.
	Set func(ctx context.Context, on bool) error
}

// HeadCamera is the head camera's image topic as a Demand: subscribing
// runs the WebSocket API's "head camera" command with {"enable": true}
// through g (so it enters the router as a WebSocket command, under the
// e-stop and higher-priority inputs), and the last subscriber leaving
// runs it with {"enable": false}.
func HeadCamera(g *ws.Gateway) Demand {
	return Demand{Topic: msg.TopicHeadCameraImageRaw, Set: func(ctx context.Context, on bool) error {
		h := g.Lookup("command", "head", "camera")
		if h == nil {
			return fmt.Errorf("the server has no head camera command")
		}
		params, _ := json.Marshal(map[string]bool{"enable": on})
		_, err := h(ctx, nil, params)
		return err
	}}
}

// demandFirst is the message an on-demand channel is described from
// before its first real one: an empty object, which a ROS 2 type encodes
// as its zero value.
var demandFirst = []byte("{}")

// applyDemand starts or stops an on-demand channel's messages so that
// they flow exactly while it has subscribers. It returns the error of
// starting them (nil when nothing changed). Calls are serialised, and each
// applies the channel's current state, so concurrent subscribes and
// unsubscribes settle on the right one. It must not run on the executor
// (Set waits for it) nor with s.mu held.
func (s *Server) applyDemand(ch *channel) error {
	s.demandMu.Lock()
	defer s.demandMu.Unlock()
	s.mu.Lock()
	want := len(ch.subs) > 0 && !s.stopped
	s.mu.Unlock()
	if want == ch.demanded {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.o.CallTimeout)
	defer cancel()
	if err := s.run(ctx, ch.demand, want); err != nil {
		s.o.Log.Warn("foxglove: on-demand topic not switched", "source", "foxglove", "topic", ch.Topic, "on", want, "err", err)
		return err
	}
	ch.demanded = want
	return nil
}

// run calls d.Set, turning a panic into an error.
func (s *Server) run(ctx context.Context, d *Demand, on bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.o.Log.Error("foxglove: on-demand switch panicked", "source", "foxglove", "panic", p)
			err = fmt.Errorf("internal error")
		}
	}()
	return d.Set(ctx, on)
}
