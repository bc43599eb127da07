package router

import (
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
)

// Topic is the WebSocket topic that carries msg.RouteStatus from
// msg.TopicRouterStatus.
const Topic = "router"

// Register makes the router (New, with o's Exec and Bus defaulting to
// h's) and installs it on h: the router as a component, its commands
// (RegisterCommands) and the "router" topic. It reads the routes from
// disk: call it before the executor runs.
func Register(h *feature.Host, o Options) (*Router, error) {
	if o.Exec == nil {
		o.Exec = h.Exec
	}
	if o.Bus == nil {
		o.Bus = h.Bus
	}
	if o.Log == nil {
		o.Log = h.Log
	}
	r, err := New(o)
	if err != nil {
		return nil, err
	}
	r.RegisterCommands(h.Gateway)
	h.Add(r)
	h.Topics(Topic)
	h.Forward(msg.TopicRouterStatus, Topic, nil)
	return r, nil
}
