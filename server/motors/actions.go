package motors

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

// ActionRate is how often a playing action sends its setpoints.
const ActionRate = 50 // Hz

// ListActions lists the robot's custom actions. Call it on the executor.
func (m *Motors) ListActions() msg.ListActionsResponse {
	r := msg.ListActionsResponse{Actions: []msg.ActionInfo{}}
	if m.o.Robot == nil {
		return r
	}
	for _, a := range m.o.Robot.Actions {
		r.Actions = append(r.Actions, msg.ActionInfo{Name: a.Name, Description: a.Description, Joints: a.Joints, DurationS: a.Keyframes[len(a.Keyframes)-1].Time})
	}
	return r
}

// PlayAction plays a custom action: it takes a session over the action's
// motors (refused, as any request, when another client holds them), moves
// the joints from where they are through the keyframes, each segment
// time-scaled with s = 3u² − 2u³, streaming POSITION setpoints with their
// rates at ActionRate, and releases the session into KEEP_MODE at the end,
// so the last pose is held. It answers when the motion is over, or with
// req.Async as soon as it starts.
func (m *Motors) PlayAction(req msg.PlayActionRequest, reply func(msg.PlayActionResponse, error)) {
	fail := func(format string, a ...any) {
		reply(msg.PlayActionResponse{Message: fmt.Sprintf(format, a...)}, nil)
	}
	if m.o.Robot == nil {
		fail("no robot configuration: start the server with --robot-type")
		return
	}
	a, ok := m.o.Robot.Action(req.Name)
	if !ok {
		var names []string
		for _, x := range m.o.Robot.Actions {
			names = append(names, x.Name)
		}
		fail("name: %q is not an action of custom_action.yaml (%s)", req.Name, strings.Join(names, ", "))
		return
	}
	j := m.o.Robot.Joints
	ids := make([]int, len(a.Joints))
	start := make([]float64, len(a.Joints))
	for k, name := range a.Joints {
		ids[k] = j.MapIndex[slices.Index(j.JointNames, name)]
		q, ok := m.positions[name]
		if !ok {
			fail("%s: no joint_states yet: its node does not report", name)
			return
		}
		start[k] = q
	}
	client := req.Client
	if client == "" {
		client = "play_action " + a.Name
	}
	m.RequestControl(msg.RequestControlRequest{Client: client, Behavior: msg.BehaviorKeep, MotorIDs: ids, TimeoutMS: 500}, func(r msg.RequestControlResponse, _ error) {
		if !r.Success {
			fail("%s", r.Message)
			return
		}
		if req.Async {
			reply(msg.PlayActionResponse{Success: true, Message: fmt.Sprintf("playing %s (%.1f s)", a.Name, a.Keyframes[len(a.Keyframes)-1].Time)}, nil)
			reply = func(r msg.PlayActionResponse, _ error) {
				if !r.Success {
					m.h.Log.Warn("custom action stopped", "action", a.Name, "reason", r.Message)
				}
			}
		}
		m.play(a, ids, start, r.UUID, reply)
	})
}

// play streams the action's setpoints under session uuid.
func (m *Motors) play(a bringup.Action, ids []int, start []float64, uuid string, reply func(msg.PlayActionResponse, error)) {
	ex := m.h.Exec
	t0 := ex.Now()
	end := a.Keyframes[len(a.Keyframes)-1].Time
	var timer interface{ Stop() bool }
	step := func() {
		t := ex.Now().Sub(t0).Seconds()
		q, dq := ActionSetpoint(a, start, t)
		err := m.Command(msg.ControlCommand{UUID: uuid, Mode: msg.ModePosition, MotorIDs: ids, Positions: q, Velocities: dq})
		done := t >= end
		if err == nil && !done {
			return
		}
		timer.Stop()
		if err != nil {
			m.refused(err)
			reply(msg.PlayActionResponse{Message: fmt.Sprintf("%s stopped after %.2f s: %v", a.Name, t, err), DurationS: t}, nil)
			return
		}
		m.ReleaseControl(msg.ReleaseControlRequest{UUID: uuid}, func(msg.ReleaseControlResponse, error) {})
		reply(msg.PlayActionResponse{Success: true, Message: fmt.Sprintf("played %s", a.Name), DurationS: t}, nil)
	}
	timer = ex.Every(time.Second/ActionRate, step)
	step()
}

// ActionSetpoint is where an action's joints are t s after it started
// from start (rad), and their rates (rad/s): within the keyframe segment
// holding t, from the previous keyframe (start for the first) to the next,
// s(u) = 3u² − 2u³ with u the fraction of the segment's time; after the
// last keyframe, its positions.
func ActionSetpoint(a bringup.Action, start []float64, t float64) (q, dq []float64) {
	from, t0 := start, 0.0
	q, dq = make([]float64, len(start)), make([]float64, len(start))
	for _, kf := range a.Keyframes {
		if t < kf.Time {
			d := kf.Time - t0
			u := (t - t0) / d
			s, ds := 3*u*u-2*u*u*u, 6*u*(1-u)/d
			for i := range q {
				q[i] = from[i] + s*(kf.Positions[i]-from[i])
				dq[i] = ds * (kf.Positions[i] - from[i])
			}
			return q, dq
		}
		from, t0 = kf.Positions, kf.Time
	}
	copy(q, from)
	return q, dq
}

// handleActionsWS installs the WebSocket actions play_action and
// list_actions.
func (m *Motors) handleActionsWS() {
	g := m.h.Gateway
	g.HandleCommand(Target, msg.MotorListActions, func(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
		var r msg.ListActionsResponse
		err := m.h.Do(ctx, func() { r = m.ListActions() })
		return r, err
	})
	g.HandleCommand(Target, msg.MotorPlayAction, func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var req msg.PlayActionRequest
		if err := ws.DecodeParams(raw, &req); err != nil {
			return nil, err
		}
		return feature.Await(ctx, m.h, func(done func(msg.PlayActionResponse, error)) { m.PlayAction(req, done) })
	})
}
