package router

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// output is the router's state for one output target.
type output struct {
	target    string
	active    bool
	held      bool               // Options.Sessions holds its motors
	refused   string             // why the last Hold failed, "" when it did not
	winner    string             // route driving it (priority and blend modes)
	routeIDs  []string           // active routes, highest priority first
	last      map[string]float64 // values last sent
	blending  bool               // a blend-mode ramp is under way
	blendFrom map[string]float64
	blendAt   time.Time
}

func (r *Router) publishAll(ps []Publication) {
	for _, p := range ps {
		r.publish(p.Topic, p.Message)
	}
}

// clone copies values.
func clone(v Values) map[string]float64 {
	out := make(map[string]float64, len(v))
	for k, x := range v {
		out[k] = x
	}
	return out
}

func (r *Router) publish(topic string, v any) {
	if err := r.o.Bus.Publish(topic, v); err != nil {
		r.log.Warn("router publish failed", "topic", topic, "err", err)
	}
}

func (r *Router) onTick() {
	now := r.ex.Now()
	for _, t := range r.names {
		r.update(r.outputs[t], now)
	}
	r.publishStatus(now, false)
}

// active lists the fresh contributions to target, highest priority first,
// forgetting stale ones.
func (r *Router) active(target string, now time.Time) []*contribution {
	var cs []*contribution
	for id, c := range r.contrib[target] {
		if !r.fresh(c.at, now) {
			delete(r.contrib[target], id)
			continue
		}
		if len(c.values) == 0 {
			continue
		}
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].priority != cs[j].priority {
			return cs[i].priority > cs[j].priority
		}
		return cs[i].routeID < cs[j].routeID
	})
	return cs
}

// update computes and sends one output.
func (r *Router) update(o *output, now time.Time) {
	cs := r.active(o.target, now)
	o.routeIDs = o.routeIDs[:0]
	for _, c := range cs {
		o.routeIDs = append(o.routeIDs, c.routeID)
	}
	if len(cs) == 0 {
		if t := r.targets[o.target]; o.active && t.Stop != nil {
			// The source timed out: stop rather than keep driving.
			o.last = clone(t.Stop)
			r.publishAll(t.Encode(t.Stop))
		}
		o.active, o.winner, o.blending = false, "", false
		r.release(o)
		return
	}
	vals := r.combine(o, cs, now)
	o.active = true
	o.last = vals
	if !r.hold(o) {
		return
	}
	r.send(o.target, vals)
}

// hold takes (or keeps) the motors of an output about to be sent, and
// reports whether it may be sent. During an emergency stop nothing is
// taken.
func (r *Router) hold(o *output) bool {
	if r.o.Sessions == nil || r.estop.active {
		return true // during an e-stop, send sends only stop values
	}
	if err := r.o.Sessions.Hold(o.target); errors.Is(err, ErrHoldPending) {
		o.held = true // being taken: Release cancels it
		return false
	} else if err != nil {
		o.held = false
		if o.refused != err.Error() {
			o.refused = err.Error()
			r.event("warn", fmt.Sprintf("router output %s not sent: %v", o.target, err))
		}
		return false
	}
	o.held, o.refused = true, ""
	return true
}

// release gives back an output's motors.
func (r *Router) release(o *output) {
	o.refused = ""
	if o.held {
		o.held = false
		r.o.Sessions.Release(o.target)
	}
}

// combine is the blending of docs/router.md's priority and blending.
func (r *Router) combine(o *output, cs []*contribution, now time.Time) map[string]float64 {
	vals := make(map[string]float64, len(o.last)+4)
	// A target given whole (a pose) takes only what its routes drive now.
	keep := !r.targets[o.target].Whole
	if r.blending.Mode == BlendAdditive {
		for _, c := range cs {
			for k, v := range c.values {
				vals[k] += v
			}
		}
		// Properties no active route drives keep their last value.
		for k, v := range o.last {
			if _, driven := vals[k]; !driven && keep {
				vals[k] = v
			}
		}
		o.winner = cs[0].routeID
		return vals
	}
	// Properties the winner does not drive keep their last value.
	if keep {
		for k, v := range o.last {
			vals[k] = v
		}
	}
	top := cs[0]
	for k, v := range top.values {
		vals[k] = v
	}
	if r.blending.Mode == BlendBlend && r.blending.BlendTimeMS > 0 {
		if o.active && o.winner != "" && o.winner != top.routeID {
			o.blending = true
			o.blendAt = now
			o.blendFrom = make(map[string]float64, len(o.last))
			for k, v := range o.last {
				o.blendFrom[k] = v
			}
		}
		if o.blending {
			span := time.Duration(r.blending.BlendTimeMS) * time.Millisecond
			alpha := float64(now.Sub(o.blendAt)) / float64(span)
			if alpha >= 1 {
				o.blending = false
			} else {
				for k, from := range o.blendFrom {
					if to, ok := vals[k]; ok {
						vals[k] = from + (to-from)*alpha
					}
				}
			}
		}
	}
	o.winner = top.routeID
	return vals
}

// send publishes an output's values as its target's messages. While the
// emergency stop is engaged a target with stop values is sent those, the
// others nothing.
func (r *Router) send(target string, v map[string]float64) {
	t := r.targets[target]
	if r.estop.active {
		if t.Stop == nil {
			return
		}
		v = t.Stop
	}
	r.publishAll(t.Encode(v))
}
