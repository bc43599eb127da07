package router

import (
	"fmt"

	"github.com/saint-os/saint/bus/msg"
)

type estopState struct {
	active bool
	source string
	reason string
}

// The console's manual override (msg.ConsoleOverride) outranks every
// source but safety; its emergency stop button is the control named
// ConsoleEStopControl.
const (
	SourceConsole       = "console"
	ConsolePriority     = 999
	ConsoleOverrideID   = "console_override"
	ConsoleEStopControl = "estop"
)

// consoleOverride takes a ConsoleOverride: while Active, its values drive
// Target above every route but safety ones, for as long as the console
// keeps sending (source_timeout_ms, as every source); Active false hands
// the output back at once.
func (r *Router) consoleOverride(ov msg.ConsoleOverride) {
	o, ok := r.outputs[ov.Target]
	if !ok {
		r.log.Warn("console override for an unknown target", "target", ov.Target, "source", "router")
		return
	}
	now := r.ex.Now()
	byRoute := r.contrib[ov.Target]
	if byRoute == nil {
		byRoute = map[string]*contribution{}
		r.contrib[ov.Target] = byRoute
	}
	if !ov.Active {
		delete(byRoute, ConsoleOverrideID)
	} else {
		c := &contribution{routeID: ConsoleOverrideID, priority: ConsolePriority, source: SourceConsole,
			values: make(map[string]float64, len(ov.Values)), at: now}
		for k, v := range ov.Values {
			c.values[k] = float64(v)
		}
		if v, ok := c.values[PropertyEStop]; ok {
			delete(c.values, PropertyEStop)
			if v >= 0.5 {
				r.EStop(SourceConsole, "console override")
			}
		}
		byRoute[ConsoleOverrideID] = c
	}
	r.update(o, now)
	r.publishStatus(now, false)
}

// takeEStop engages the e-stop if the route drove "estop" on, and takes
// the property out of the values sent to the output.
func (r *Router) takeEStop(rt *Route, c *contribution) {
	v, ok := c.values[PropertyEStop]
	if !ok {
		return
	}
	delete(c.values, PropertyEStop)
	if v >= 0.5 {
		r.EStop(rt.Input.Source, "route "+rt.ID)
	}
}

// EStop engages the emergency stop: tracks get zero velocity and the
// estop topic at once, head and arm outputs stop, and it stays so until
// ClearEStop. Call it on the executor.
func (r *Router) EStop(source, reason string) {
	if r.estop.active {
		return // latched already; the tick keeps the tracks at zero
	}
	now := r.ex.Now()
	r.estop = estopState{active: true, source: source, reason: reason}
	r.event("warn", fmt.Sprintf("emergency stop engaged by %s (%s)", source, reason))
	for _, t := range EStopTopics() {
		r.publish(t, msg.EStop{Active: true, Source: source, Reason: reason})
	}
	// The motors the router held go back (the motor middleware ends
	// every session on an e-stop).
	for _, name := range r.names {
		r.release(r.outputs[name])
	}
	// Targets that stop (the tracks) are sent their stop at once.
	for _, name := range r.names {
		if t := r.targets[name]; t.Stop != nil {
			r.outputs[name].last = clone(t.Stop)
			r.publishAll(t.Encode(t.Stop))
		}
	}
	r.publishStatus(now, true) // an e-stop shows at once
}

// ClearEStop releases the emergency stop. Inputs from before it are
// forgotten, so nothing moves until a source sends again. Call it on the
// executor.
func (r *Router) ClearEStop(source string) {
	if !r.estop.active {
		return
	}
	r.estop = estopState{}
	for _, t := range EStopTopics() {
		r.publish(t, msg.EStop{Active: false, Source: source})
	}
	for _, byRoute := range r.contrib {
		clear(byRoute)
	}
	r.event("info", "emergency stop released by "+source)
	r.publishStatus(r.ex.Now(), true)
}

// EStopActive reports whether the emergency stop is latched.
func (r *Router) EStopActive() bool { return r.estop.active }
