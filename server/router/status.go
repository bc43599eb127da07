package router

import (
	"bytes"
	"strconv"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// state is one output's state: idle with no
// active route, routing with one, blending with several or while a blend
// ramp runs.
func (o *output) state() string {
	switch {
	case !o.active:
		return msg.RouterIdle
	case len(o.routeIDs) > 1 || o.blending:
		return msg.RouterBlending
	}
	return msg.RouterRouting
}

// state is the router's state: the "highest" of its outputs'.
func (r *Router) state() string {
	st := msg.RouterIdle
	for _, t := range r.names {
		switch r.outputs[t].state() {
		case msg.RouterBlending:
			return msg.RouterBlending
		case msg.RouterRouting:
			st = msg.RouterRouting
		}
	}
	return st
}

// Status returns the current RouteStatus. Call it on the executor.
func (r *Router) Status() msg.RouteStatus {
	now := r.ex.Now()
	s := msg.RouteStatus{State: r.state(), Routes: []msg.RouteState{}, Outputs: []msg.OutputState{},
		Timestamp: unixSeconds(now), EStopActive: r.estop.active, EStopSource: r.estop.source}
	for _, rt := range r.routes {
		rs := msg.RouteState{RouteID: rt.ID, Enabled: rt.Enabled, Priority: int32(rt.EffectivePriority()),
			Source: rt.Input.Source, Target: rt.Output.Target}
		if at, ok := r.lastInput[rt.ID]; ok {
			rs.LastInput = unixSeconds(at)
			rs.Active = rt.Enabled && r.fresh(at, now)
		}
		s.Routes = append(s.Routes, rs)
	}
	for _, t := range r.names {
		o := r.outputs[t]
		outState := msg.OutputState{Target: t, State: o.state(), RouteIDs: []string{}, Values: map[string]float32{}}
		if o.active {
			outState.RouteIDs = append(outState.RouteIDs, o.routeIDs...)
		}
		for k, v := range o.last {
			outState.Values[k] = f32(v)
		}
		s.Outputs = append(s.Outputs, outState)
	}
	return s
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// statusCheckEvery is how often, at most, the router checks whether its
// RouteStatus changed (publishStatus): a change is published within this
// plus one output tick. Inputs arrive at up to hundreds a second; a person
// watching the status needs no more than 20 updates a second, and checking
// on every input cost more than routing it.
const statusCheckEvery = 50 * time.Millisecond

// publishStatus publishes RouteStatus on TopicRouterStatus when it
// changed, or StatusEvery after the last; force publishes it now. Without
// force it checks at most every statusCheckEvery: a call inside that
// window leaves the check to the output tick that ends it. (The server
// forwards that topic to WebSocket clients subscribed to "router".)
func (r *Router) publishStatus(now time.Time, force bool) {
	if !force && !r.checkedAt.IsZero() && now.Sub(r.checkedAt) < statusCheckEvery {
		return
	}
	r.checkedAt = now
	sig := r.appendSignature(r.sigBuf[:0], now)
	if !force && bytes.Equal(sig, r.lastStatus) && now.Sub(r.statusAt) < r.o.StatusEvery {
		r.sigBuf = sig
		return
	}
	// Swap the buffers: the new signature is kept, the old one's
	// memory builds the next.
	r.lastStatus, r.sigBuf = sig, r.lastStatus
	r.statusAt = now
	r.publish(msg.TopicRouterStatus, r.Status())
}

// appendSignature appends to b a summary of what RouteStatus shows apart
// from values and times, to publish it when it changes. It allocates
// nothing once b has grown to fit.
func (r *Router) appendSignature(b []byte, now time.Time) []byte {
	b = append(b, r.state()...)
	if r.estop.active {
		b = append(b, "|estop"...)
	}
	for _, t := range r.names {
		o := r.outputs[t]
		if o.active {
			b = append(b, '|')
			b = append(b, t...)
			b = append(b, '=')
			for i, id := range o.routeIDs {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, id...)
			}
		}
	}
	for _, rt := range r.routes {
		at, ok := r.lastInput[rt.ID]
		b = append(b, '|')
		b = append(b, rt.ID...)
		b = append(b, ':')
		b = strconv.AppendBool(b, rt.Enabled)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(rt.EffectivePriority()), 10)
		b = append(b, ':')
		b = strconv.AppendBool(b, ok && r.fresh(at, now))
	}
	return b
}
