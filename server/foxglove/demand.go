package foxglove

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
	// MaxRate, when positive, is how many messages a second clients get
	// at most (by the executor's clock); the others are not sent.
	MaxRate float64
}

// HeadCameraRate is how many head camera frames a second Foxglove clients
// get at most, as many as the web UI's stream (server/camera): each raw
// 640×480 frame is 0.9 MB and milliseconds of encoding.
const HeadCameraRate = 15

// HeadCamera is the head camera's image topic as a Demand, at most
// HeadCameraRate frames a second: subscribing runs the WebSocket API's
// "head camera" command with {"enable": true} through g (so it enters
// the router as a WebSocket command, as the holder DemandCaller), and
// the last subscriber leaving runs it with {"enable": false}, which
// drops Foxglove's claim: the camera stays on while the web UI or
// another client still holds it.
func HeadCamera(g *ws.Gateway) Demand {
	return Demand{Topic: msg.TopicHeadCameraImageRaw, MaxRate: HeadCameraRate, Set: func(ctx context.Context, on bool) error {
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
// they flow while it has subscribers, and returns the error of starting
// them (nil when nothing changed). Starting and stopping are this
// server's claim on the topic, not a switch of its own: the head camera
// counts its holders (the router), so stopping leaves it on for the web
// UI or anyone else still holding it. Calls are serialised, and each
// applies the channel's current state, so concurrent subscribes and
// unsubscribes settle on the right one. It must not run on the executor
// (Set waits for it) nor with s.mu held.
func (s *Server) applyDemand(ch *channel) error {
	s.demandMu.Lock()
	defer s.demandMu.Unlock()
	s.mu.Lock()
	want := len(ch.subs) > 0 && !s.stopped
	ch.watched.Store(want)
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

// DemandCaller is who the server's on-demand switches run as
// (ws.CallerOf in Demand.Set): the Foxglove server, one holder for all
// its clients, gone when it stops.
const DemandCaller = "foxglove"

// run calls d.Set as DemandCaller, turning a panic into an error.
func (s *Server) run(ctx context.Context, d *Demand, on bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.o.Log.Error("foxglove: on-demand switch panicked", "source", "foxglove", "panic", p)
			err = fmt.Errorf("internal error")
		}
	}()
	return d.Set(ws.WithCaller(ctx, ws.Caller{Name: DemandCaller, Done: s.done}), on)
}

// demandSilence is how long a subscribed on-demand topic may carry
// nothing before its switch-on is repeated.
const demandSilence = 2 * time.Second

// recheckDemands repeats the switch-on of the subscribed on-demand topics
// that have carried nothing for demandSilence (executor): a command sent
// before its target was there (the camera subscribed to before the head
// is adopted) or lost on the way is sent again. Switching on is
// idempotent.
func (s *Server) recheckDemands() {
	now := s.o.Exec.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.channels {
		if ch == nil || ch.demand == nil || len(ch.subs) == 0 || ch.retrying || now.Sub(ch.lastMsg) < demandSilence {
			continue
		}
		ch.retrying = true
		go func() {
			s.demandMu.Lock()
			s.mu.Lock()
			want := len(ch.subs) > 0 && !s.stopped
			s.mu.Unlock()
			if want {
				ctx, cancel := context.WithTimeout(context.Background(), s.o.CallTimeout)
				if err := s.run(ctx, ch.demand, true); err == nil {
					ch.demanded = true
				}
				cancel()
			}
			s.demandMu.Unlock()
			s.mu.Lock()
			ch.retrying = false
			s.mu.Unlock()
		}()
	}
}
