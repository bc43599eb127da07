package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router/target"
	"github.com/saint-os/saint/server/ws"
)

// RegisterCommands installs on g the WebSocket API's robot control
// commands (docs/api.md) that move the robot (head move/home/camera, arms
// move/home/gripper, tracks drive/stop/estop, and system estop), which
// enter the router as source "websocket", and the router commands
// (list_routes, set_route, delete_route, set_route_enabled,
// list_livelink_sources, get_livelink_subject, list/load/save/delete_preset,
// and get_status, preview, get_blending, set_blending, get_targets). Call it once, from any
// goroutine, before clients connect.
func (r *Router) RegisterCommands(g *ws.Gateway) {
	for _, c := range r.targetCommands() {
		g.HandleCommand(c.target, c.action, c.h)
	}
	g.HandleCommand("tracks", "estop", r.estopCommand)
	g.HandleCommand("system", "estop", r.estopCommand)

	g.Handle("router", "get_targets", r.getTargets)
	g.Handle("router", "list_routes", r.listRoutes)
	g.Handle("router", "get_status", r.getStatus)
	g.Handle("router", "set_route", r.setRouteCmd)
	g.Handle("router", "delete_route", r.deleteRouteCmd)
	g.Handle("router", "set_route_enabled", r.setRouteEnabled)
	g.Handle("router", "get_blending", r.getBlending)
	g.Handle("router", "set_blending", r.setBlending)
	g.Handle("router", "preview", r.previewCmd)
	g.Handle("router", "list_livelink_sources", r.listLiveLink)
	g.Handle("router", "get_livelink_subject", r.getLiveLinkSubject)
	g.Handle("router", "list_presets", r.listPresets)
	g.Handle("router", "load_preset", r.loadPresetCmd)
	g.Handle("router", "save_preset", r.savePresetCmd)
	g.Handle("router", "delete_preset", r.deletePresetCmd)
}

// targetCommand is a WebSocket command that drives an output target.
type targetCommand struct {
	target, action string
	h              ws.Handler
}

// targetCommands are the commands of the target table (target.Table):
// every drive target's drive and stop are the same two handlers, the
// head's and the arms' commands, whose parameters are their own, the
// handlers below. A command in the table with no handler panics here, at
// registration.
func (r *Router) targetCommands() []targetCommand {
	own := map[[2]string]ws.Handler{
		{"head", target.CommandMove}:     r.headMove,
		{"head", target.CommandHome}:     r.headHome,
		{"head", target.CommandCamera}:   r.headCamera,
		{"arms", target.CommandMove}:     r.armsMove,
		{"arms", target.CommandHome}:     r.armsHome,
		{"arms", target.CommandGripper}:  r.armsGripper,
		{"arms", target.CommandMovePose}: r.armsMovePose,
	}
	var out []targetCommand
	seen := map[[2]string]bool{}
	for _, t := range target.Table() {
		for _, action := range t.Commands {
			k := [2]string{t.Command, action}
			if seen[k] {
				continue
			}
			seen[k] = true
			h := own[k]
			switch action {
			case target.CommandDrive:
				h = r.drive(t.Name)
			case target.CommandStop:
				h = r.stop(t.Name)
			}
			if h == nil {
				panic(fmt.Sprintf("router: target %s's command %s %s has no handler", t.Name, t.Command, action))
			}
			out = append(out, targetCommand{t.Command, action, h})
		}
	}
	return out
}

// decodeStrict decodes params into v, refusing unknown fields, so a
// misspelt mapping option is an error rather than silently ignored.
func decodeStrict(params json.RawMessage, prefix string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var fe *FieldError
		switch {
		case errors.As(err, &te):
			return fieldErr(joinField(prefix, te.Field), "want %s, got %s", te.Type, te.Value)
		case errors.As(err, &fe):
			return prefixed(prefix, err)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return fieldErr(joinField(prefix, name), "unknown field")
		}
		return fieldErr(prefixOr(prefix, "params"), "%v", err)
	}
	return nil
}

func joinField(prefix, f string) string {
	if prefix == "" {
		return f
	}
	if f == "" {
		return prefix
	}
	return prefix + "." + f
}

func prefixOr(p, d string) string {
	if p == "" {
		return d
	}
	return p
}

// param names a command parameter and the target property it sets.
type param struct{ name, property string }

// same is the parameters named as the properties they set.
func same(names ...string) []param {
	out := make([]param, len(names))
	for i, n := range names {
		out[i] = param{n, n}
	}
	return out
}

// propertyParams reads the parameters ps of a command on target: each one
// present must be a number within its property's limits (Targets), and
// becomes that property's value.
func (r *Router) propertyParams(params json.RawMessage, name string, ps ...param) (Values, error) {
	var raw map[string]json.RawMessage
	if err := ws.DecodeParams(params, &raw); err != nil {
		return nil, err
	}
	t := r.targets[name]
	v := Values{}
	for _, p := range ps {
		b, ok := raw[p.name]
		if !ok || string(b) == "null" {
			continue
		}
		prop, _ := t.Property(p.property)
		var x float64
		if err := json.Unmarshal(b, &x); err != nil {
			return nil, fieldErr(p.name, "want a number (%g to %g), got %s", prop.Min, prop.Max, b)
		}
		if err := prop.Check(p.name, x); err != nil {
			return nil, err
		}
		v[p.property] = x
	}
	return v, nil
}

// motion submits a WebSocket command on the executor and answers with
// what the target is doing.
func (r *Router) motion(ctx context.Context, in Input) (any, error) {
	in.Source = msg.SourceWebSocket
	var res map[string]any
	var err error
	if derr := r.ex.Do(ctx, func() {
		if r.estop.active && in.Command != target.CommandStop && in.Command != target.CommandCamera {
			err = &ws.Error{Code: ws.CodeFailed, Message: fmt.Sprintf(
				"emergency stop engaged by %s is latched; release it with tracks estop {\"enable\": false}", r.estop.source)}
			return
		}
		if why := r.unreachable(in.Target); why != "" && in.Command != target.CommandStop {
			err = &ws.Error{Code: ws.CodeFailed, Message: fmt.Sprintf("%s %s not sent: %s", in.Target, in.Command, why)}
			return
		}
		if e := r.Submit(in); e != nil {
			err = &ws.Error{Code: ws.CodeFailed, Field: "action", Message: fmt.Sprintf(
				"no enabled websocket route forwards %s %s (see the websocket_direct route)", in.Target, in.Command)}
			return
		}
		res = map[string]any{"target": in.Target, "command": in.Command}
		if o := r.outputs[in.Target]; o != nil {
			res["driving"] = append([]string{}, o.routeIDs...)
			vals := map[string]float64{}
			for k, v := range o.last {
				vals[k] = v
			}
			res["output"] = vals
			if c, ok := r.clamps(in.Target); ok {
				res["clamped"] = c
			}
		}
	}); derr != nil {
		return nil, derr
	}
	return res, err
}

// unreachable is Options.Unreachable, "" without one.
func (r *Router) unreachable(target string) string {
	if r.o.Unreachable == nil {
		return ""
	}
	return r.o.Unreachable(target)
}

func (r *Router) headMove(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	if ok, err := present(params, "pan", "tilt", "roll", "jaw", "eyes_pan", "eyes_tilt"); err != nil || !ok {
		if err == nil {
			err = fieldErr("pan", "want at least one of pan, tilt, roll (degrees), jaw, eyes_pan or eyes_tilt")
		}
		return nil, err
	}
	vals, err := r.propertyParams(params, target.Head, same("pan", "tilt", "roll", "speed", "jaw", "eyes_pan", "eyes_tilt")...)
	if err != nil {
		return nil, err
	}
	return r.motion(ctx, Input{Target: target.Head, Command: target.CommandMove, Values: vals})
}

func hasKey(v Values, k string) bool { _, ok := v[k]; return ok }

// present reports whether params has one of the names with a value that
// is not null; params that are no object are an error.
func present(params json.RawMessage, names ...string) (bool, error) {
	var raw map[string]json.RawMessage
	if err := ws.DecodeParams(params, &raw); err != nil {
		return false, err
	}
	for _, n := range names {
		if b, ok := raw[n]; ok && string(b) != "null" {
			return true, nil
		}
	}
	return false, nil
}

func (r *Router) headHome(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	vals, err := r.propertyParams(params, target.Head, same("speed")...)
	if err != nil {
		return nil, err
	}
	vals["pan"], vals["tilt"], vals["roll"] = 0, 0, 0
	return r.motion(ctx, Input{Target: target.Head, Command: target.CommandHome, Values: vals})
}

// enableParam reads an "enable/disable" parameter in any of its spellings:
// {"enable": true}, {"enabled": true}, or {"state": "enable"|"disable"}.
func enableParam(params json.RawMessage, def *bool) (bool, error) {
	var p struct {
		Enable  *bool  `json:"enable"`
		Enabled *bool  `json:"enabled"`
		State   string `json:"state"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return false, err
	}
	switch {
	case p.Enable != nil:
		return *p.Enable, nil
	case p.Enabled != nil:
		return *p.Enabled, nil
	case p.State == "enable" || p.State == "enabled" || p.State == "on":
		return true, nil
	case p.State == "disable" || p.State == "disabled" || p.State == "off":
		return false, nil
	case p.State != "":
		return false, fieldErr("state", "want enable or disable, got %q", p.State)
	case def != nil:
		return *def, nil
	}
	return false, fieldErr("enable", "required: true or false")
}

// armTargets maps the arm parameter to targets.
func armTargets(arm string, both bool) ([]string, error) {
	switch arm {
	case msg.ArmLeft:
		return []string{target.ArmsLeft}, nil
	case msg.ArmRight:
		return []string{target.ArmsRight}, nil
	case "both":
		if both {
			return []string{target.ArmsLeft, target.ArmsRight}, nil
		}
	case "":
		if both {
			return []string{target.ArmsLeft, target.ArmsRight}, nil
		}
		return nil, fieldErr("arm", "required: left or right")
	}
	if both {
		return nil, fieldErr("arm", "want left, right or both, got %q", arm)
	}
	return nil, fieldErr("arm", "want left or right, got %q", arm)
}

func (r *Router) armsMove(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		Arm       string    `json:"arm"`
		Positions []float64 `json:"positions"`
		Immediate bool      `json:"immediate"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	targets, err := armTargets(p.Arm, false)
	if err != nil {
		return nil, err
	}
	if len(p.Positions) == 0 || len(p.Positions) > target.MaxJoints {
		return nil, fieldErr("positions", "want 1 to %d joint angles in degrees, got %d", target.MaxJoints, len(p.Positions))
	}
	joint, _ := r.targets[targets[0]].Property(indexed("joint", 0))
	vals := Values{}
	for i, v := range p.Positions {
		if err := joint.Check(fmt.Sprintf("positions[%d]", i), v); err != nil {
			return nil, err
		}
		vals[indexed("joint", i)] = v
	}
	return r.armJointsMove(ctx, params, targets[0], vals, p.Immediate)
}

// armJointsMove moves an arm target to the joint values in vals (degrees,
// already checked), at the command's optional speed: the end of both
// arms move and arms move_pose.
func (r *Router) armJointsMove(ctx context.Context, params json.RawMessage, name string, vals Values, immediate bool) (any, error) {
	speed, err := r.propertyParams(params, name, same("speed")...)
	if err != nil {
		return nil, err
	}
	for k, v := range speed {
		vals[k] = v
	}
	if immediate {
		vals["immediate"] = 1
	}
	return r.motion(ctx, Input{Target: name, Command: target.CommandMove, Values: vals})
}

// HomeJoints is how many joints arms home sets to 0 when the router has
// not yet sent the arm a longer command: the shipped arms configuration's
// five.
const HomeJoints = 5

func (r *Router) armsHome(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		Arm string `json:"arm"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	targets, err := armTargets(p.Arm, true)
	if err != nil {
		return nil, err
	}
	speed, err := r.propertyParams(params, targets[0], same("speed")...)
	if err != nil {
		return nil, err
	}
	results := map[string]any{}
	for _, t := range targets {
		var n int
		if err := r.ex.Do(ctx, func() {
			n = HomeJoints
			for i := target.MaxJoints - 1; i >= n; i-- {
				if _, ok := r.outputs[t].last[indexed("joint", i)]; ok {
					n = i + 1
					break
				}
			}
		}); err != nil {
			return nil, err
		}
		vals := Values{}
		for i := 0; i < n; i++ {
			vals[indexed("joint", i)] = 0
		}
		for k, v := range speed {
			vals[k] = v
		}
		res, err := r.motion(ctx, Input{Target: t, Command: target.CommandHome, Values: vals})
		if err != nil {
			return nil, err
		}
		results[t] = res
	}
	return results, nil
}

func (r *Router) armsGripper(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		Arm string `json:"arm"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	targets, err := armTargets(p.Arm, false)
	if err != nil {
		return nil, err
	}
	if ok, err := present(params, "position"); err != nil || !ok {
		if err == nil {
			err = fieldErr("position", "required: 0.0 (closed) to 1.0 (open)")
		}
		return nil, err
	}
	vals, err := r.propertyParams(params, targets[0], param{"position", "gripper"}, param{"force", "gripper_force"})
	if err != nil {
		return nil, err
	}
	return r.motion(ctx, Input{Target: targets[0], Command: target.CommandGripper, Values: vals})
}

// drive is the drive command of a drive target (the tracks, the
// balancing base): the velocities given, the target's stop values for
// those not given. The balancing base follows it while it is armed and
// the commands keep coming (within its 500 ms command timeout), capped by
// its speed limit.
func (r *Router) drive(name string) ws.Handler {
	t := r.targets[name]
	var props, want []string
	for _, p := range t.Properties {
		if _, ok := t.Stop[p.Name]; ok {
			props = append(props, p.Name)
			want = append(want, p.Name+" ("+p.Unit+")")
		}
	}
	return func(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
		if ok, err := present(params, props...); err != nil || !ok {
			if err == nil {
				err = fieldErr(props[0], "want %s", strings.Join(want, " and/or "))
			}
			return nil, err
		}
		vals, err := r.propertyParams(params, name, same(props...)...)
		if err != nil {
			return nil, err
		}
		for k, v := range t.Stop {
			if !hasKey(vals, k) {
				vals[k] = v
			}
		}
		return r.motion(ctx, Input{Target: name, Command: target.CommandDrive, Values: vals})
	}
}

// stop is the stop command of a drive target: its stop values.
func (r *Router) stop(name string) ws.Handler {
	return func(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
		return r.motion(ctx, Input{Target: name, Command: target.CommandStop, Values: clone(r.targets[name].Stop)})
	}
}

// estopCommand is tracks estop and system estop: {"enable": true} (or no
// parameter) engages the emergency stop, {"enable": false} releases it.
func (r *Router) estopCommand(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	def := true
	on, err := enableParam(params, &def)
	if err != nil {
		return nil, err
	}
	var active bool
	if err := r.ex.Do(ctx, func() {
		if on {
			r.EStop(msg.SourceWebSocket, "estop command")
		} else {
			r.ClearEStop(msg.SourceWebSocket)
		}
		active = r.estop.active
	}); err != nil {
		return nil, err
	}
	return map[string]any{"estop_active": active}, nil
}

// ---- router commands ----

// getTargets answers the table of output targets (Targets): each one's
// properties with units, limits and defaults, its bus topics and message
// types. The web UI's route editor builds its choices from it.
func (r *Router) getTargets(context.Context, *ws.Client, json.RawMessage) (any, error) {
	return map[string]any{"targets": Targets(), "any": target.Any}, nil
}

func (r *Router) listRoutes(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var out map[string]any
	err := r.ex.Do(ctx, func() {
		st := r.Status()
		out = map[string]any{"routes": r.Routes(), "blending": r.blending, "state": st.State,
			"status": st.Routes, "estop_active": st.EStopActive}
	})
	return out, err
}

func (r *Router) getStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var st msg.RouteStatus
	err := r.ex.Do(ctx, func() { st = r.Status() })
	return st, err
}

// change applies f on the executor and saves the resulting configuration;
// saveMu keeps saves in the order of the changes.
func (r *Router) change(ctx context.Context, f func() error) error {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	var cfg *Config
	var ferr error
	if err := r.ex.Do(ctx, func() {
		if ferr = f(); ferr == nil {
			cfg = r.config()
			r.publishStatus(r.ex.Now(), true)
		}
	}); err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	if err := r.store.saveActive(cfg); err != nil {
		return &ws.Error{Code: ws.CodeFailed, Message: "applied but not saved: " + err.Error()}
	}
	return nil
}

// decodeRoute reads the "route" parameter and validates it.
func decodeRoute(params json.RawMessage) (Route, error) {
	var p struct {
		Route json.RawMessage `json:"route"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return Route{}, err
	}
	if len(p.Route) == 0 || string(p.Route) == "null" {
		return Route{}, fieldErr("route", "required: a route object")
	}
	var rt Route
	if err := decodeStrict(p.Route, "route", &rt); err != nil {
		return Route{}, err
	}
	if err := rt.Validate(); err != nil {
		return Route{}, prefixed("route", err)
	}
	return rt, nil
}

// SetRoute adds or replaces a route and saves the configuration. It waits
// for the executor, so call it from another goroutine.
func (r *Router) SetRoute(ctx context.Context, rt Route) error {
	if err := rt.Validate(); err != nil {
		return prefixed("route", err)
	}
	return r.change(ctx, func() error { r.setRoute(rt); return nil })
}

func (r *Router) setRouteCmd(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	rt, err := decodeRoute(params)
	if err != nil {
		return nil, err
	}
	created := false
	if err := r.change(ctx, func() error {
		created = r.routeIndex(rt.ID) < 0
		r.setRoute(rt)
		return nil
	}); err != nil {
		return nil, err
	}
	r.event("info", fmt.Sprintf("route %s saved", rt.ID))
	return map[string]any{"route": rt, "created": created}, nil
}

func routeIDParam(params json.RawMessage) (string, error) {
	var p struct {
		RouteID string `json:"route_id"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return "", err
	}
	if p.RouteID == "" {
		return "", fieldErr("route_id", "required")
	}
	return p.RouteID, nil
}

func (r *Router) deleteRouteCmd(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	id, err := routeIDParam(params)
	if err != nil {
		return nil, err
	}
	if err := r.change(ctx, func() error {
		if !r.deleteRoute(id) {
			return fieldErr("route_id", "no route %q", id)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	r.event("info", fmt.Sprintf("route %s deleted", id))
	return map[string]any{"route_id": id, "deleted": true}, nil
}

func (r *Router) setRouteEnabled(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		RouteID string `json:"route_id"`
		Enabled *bool  `json:"enabled"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.RouteID == "" {
		return nil, fieldErr("route_id", "required")
	}
	if p.Enabled == nil {
		return nil, fieldErr("enabled", "required: true or false")
	}
	if err := r.change(ctx, func() error {
		i := r.routeIndex(p.RouteID)
		if i < 0 {
			return fieldErr("route_id", "no route %q", p.RouteID)
		}
		r.routes[i].Enabled = *p.Enabled
		for _, byRoute := range r.contrib {
			delete(byRoute, p.RouteID)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return map[string]any{"route_id": p.RouteID, "enabled": *p.Enabled}, nil
}

func (r *Router) getBlending(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var b Blending
	err := r.ex.Do(ctx, func() { b = r.blending })
	return b, err
}

func (r *Router) setBlending(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var b Blending
	if err := r.ex.Do(ctx, func() { b = r.blending }); err != nil {
		return nil, err
	}
	// Fields not given keep their values.
	if err := decodeStrict(params, "", &b); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := r.change(ctx, func() error { r.blending = b; return nil }); err != nil {
		return nil, err
	}
	return b, nil
}

func (r *Router) previewCmd(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		RouteID string          `json:"route_id"`
		Route   json.RawMessage `json:"route"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	var draft *Route
	if len(p.Route) > 0 && string(p.Route) != "null" {
		rt, err := decodeRoute(params)
		if err != nil {
			return nil, err
		}
		draft = &rt
	} else if p.RouteID == "" {
		return nil, fieldErr("route_id", "required (or a draft \"route\" object)")
	}
	var pv Preview
	var ferr error
	if err := r.ex.Do(ctx, func() {
		if draft == nil {
			i := r.routeIndex(p.RouteID)
			if i < 0 {
				ferr = fieldErr("route_id", "no route %q", p.RouteID)
				return
			}
			draft = &r.routes[i]
		}
		pv = r.Preview(*draft)
	}); err != nil {
		return nil, err
	}
	return pv, ferr
}

func (r *Router) listLiveLink(context.Context, *ws.Client, json.RawMessage) (any, error) {
	subjects := r.o.LiveLink.Subjects()
	if subjects == nil {
		subjects = []msg.LiveLinkSubject{}
	}
	return map[string]any{"sources": subjects}, nil
}

func (r *Router) getLiveLinkSubject(_ context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		SubjectName string `json:"subject_name"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.SubjectName == "" {
		return nil, fieldErr("subject_name", "required")
	}
	s, ok := r.o.LiveLink.Subject(p.SubjectName)
	if !ok {
		return nil, fieldErr("subject_name", "no LiveLink subject %q is known", p.SubjectName)
	}
	return s, nil
}

func presetParam(params json.RawMessage) (string, error) {
	var p struct {
		PresetName string `json:"preset_name"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return "", err
	}
	return p.PresetName, checkPresetName(p.PresetName)
}

// notFound turns a missing preset into an error naming preset_name.
func notFound(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fieldErr("preset_name", "no preset %q", name)
	}
	return err
}

func (r *Router) listPresets(context.Context, *ws.Client, json.RawMessage) (any, error) {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	ps, err := r.store.listPresets()
	if err != nil {
		return nil, err
	}
	return map[string]any{"presets": ps}, nil
}

// LoadPreset makes the named preset's routes (and blending, if it has
// them) the active configuration and saves it. Call it from another
// goroutine than the executor.
func (r *Router) LoadPreset(ctx context.Context, name string) (*Config, error) {
	r.saveMu.Lock()
	cfg, err := r.store.loadPreset(name)
	r.saveMu.Unlock()
	if err != nil {
		return nil, notFound(name, err)
	}
	if err := r.change(ctx, func() error { r.applyConfig(cfg); return nil }); err != nil {
		return nil, err
	}
	r.event("info", "routing preset "+name+" loaded")
	return cfg, nil
}

func (r *Router) loadPresetCmd(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	name, err := presetParam(params)
	if err != nil {
		return nil, err
	}
	if _, err := r.LoadPreset(ctx, name); err != nil {
		return nil, err
	}
	var out map[string]any
	err = r.ex.Do(ctx, func() {
		out = map[string]any{"preset_name": name, "routes": r.Routes(), "blending": r.blending}
	})
	return out, err
}

func (r *Router) savePresetCmd(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p struct {
		PresetName  string          `json:"preset_name"`
		Description string          `json:"description"`
		Routes      json.RawMessage `json:"routes"`
		Blending    json.RawMessage `json:"blending"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if err := checkPresetName(p.PresetName); err != nil {
		return nil, err
	}
	var cfg *Config
	if err := r.ex.Do(ctx, func() { cfg = r.config() }); err != nil {
		return nil, err
	}
	if len(p.Routes) > 0 && string(p.Routes) != "null" {
		cfg.Routes = nil
		if err := decodeStrict(p.Routes, "routes", &cfg.Routes); err != nil {
			return nil, err
		}
	}
	if len(p.Blending) > 0 && string(p.Blending) != "null" {
		b := *cfg.Blending
		if err := decodeStrict(p.Blending, "blending", &b); err != nil {
			return nil, err
		}
		cfg.Blending = &b
	}
	cfg.Description = p.Description
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r.saveMu.Lock()
	err := r.store.savePreset(p.PresetName, cfg)
	r.saveMu.Unlock()
	if err != nil {
		return nil, err
	}
	r.event("info", "routing preset "+p.PresetName+" saved")
	return map[string]any{"preset_name": p.PresetName, "routes": len(cfg.Routes)}, nil
}

func (r *Router) deletePresetCmd(_ context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	name, err := presetParam(params)
	if err != nil {
		return nil, err
	}
	r.saveMu.Lock()
	err = r.store.deletePreset(name)
	r.saveMu.Unlock()
	if err != nil {
		return nil, notFound(name, err)
	}
	r.event("info", "routing preset "+name+" deleted")
	return map[string]any{"preset_name": name, "deleted": true}, nil
}
