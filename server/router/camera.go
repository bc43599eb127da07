package router

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router/target"
	"github.com/saint-os/saint/server/ws"
)

// cameraClaims are the head camera's holders: everyone who turned it on
// and has not turned it off or gone away (executor state). The head's
// camera-off command goes out only when the last one lets go, so the
// web UI turning its view off leaves Foxglove's Image panel streaming,
// and the other way round.
type cameraClaims struct {
	// holders are by Input.holder: "websocket client 12", "foxglove",
	// "ros2".
	holders map[string]bool
	// watched are the holders whose going away is being waited for.
	watched map[string]bool
	// quit ends those waits when the router stops.
	quit chan struct{}
	// headSeen is when the head's state last came, and active whether it
	// said the camera was on (headCameraState).
	headSeen time.Time
	active   bool
}

// headGone is how long the head's state may be silent before its next
// one counts as the head coming back (a restart, a re-adoption).
const headGone = 2 * time.Second

// AutostartHolder is the head camera's holder for a head that turned its
// camera on by itself (camera_autostart in its configuration): a camera
// the router finds on when the head appears, with nobody holding it, is
// held by AutostartHolder, so one client's "off" does not turn it off
// under everyone who relied on the autostart. The claim goes when the
// head appears again with its camera off (restarted or re-adopted
// without camera_autostart), or by an explicit "head camera" command
// {"enable": false, "holder": "autostart"}.
const AutostartHolder = "autostart"

// headCameraState follows the head's camera_active: a camera held by
// someone that is off when the head comes back, or that goes off under
// its holders (the head node restarted), is turned on again, once per such
// event: a head without a camera, which never turns it on, is asked once
// each time it appears, not over and over. A camera on when the head
// appears with no holder is claimed by AutostartHolder; one off when the
// head appears loses that claim.
func (r *Router) headCameraState(st msg.HeadState) {
	now := r.ex.Now()
	appeared := r.camera.headSeen.IsZero() || now.Sub(r.camera.headSeen) > headGone
	fell := r.camera.active && !st.CameraActive
	r.camera.headSeen, r.camera.active = now, st.CameraActive
	if appeared {
		switch {
		case st.CameraActive && len(r.camera.holders) == 0:
			r.holdCamera(AutostartHolder)
		case !st.CameraActive && r.camera.holders[AutostartHolder]:
			delete(r.camera.holders, AutostartHolder)
			r.log.Info("head camera released: the head no longer starts it by itself", "holder", AutostartHolder, "holders", len(r.camera.holders))
		}
	}
	if st.CameraActive || len(r.camera.holders) == 0 || !appeared && !fell {
		return
	}
	r.log.Info("head camera is off while held: turning it on again", "holders", len(r.camera.holders))
	r.publish(msg.TopicHeadCameraCmd, msg.HeadCameraCommand{Enable: true})
}

// holdCamera records holder's claim on the head camera (executor).
func (r *Router) holdCamera(holder string) {
	if r.camera.holders == nil {
		r.camera.holders = map[string]bool{}
	}
	if !r.camera.holders[holder] {
		r.log.Info("head camera claimed", "holder", holder, "holders", len(r.camera.holders)+1)
	}
	r.camera.holders[holder] = true
}

// holder is whose claim a camera input is: its Holder, or its Source for
// a source that is one party.
func (in *Input) holder() string {
	if in.Holder != "" {
		return in.Holder
	}
	return in.Source
}

// claimCamera takes (on) or drops holder's claim on the head camera and
// tells the head: on at every claim, so a repeated one reaches a head
// that came up since (switching on is idempotent); off only when nobody
// holds it any more.
func (r *Router) claimCamera(holder string, on bool) {
	if on {
		r.holdCamera(holder)
		r.publish(msg.TopicHeadCameraCmd, msg.HeadCameraCommand{Enable: true})
		return
	}
	if r.camera.holders[holder] {
		delete(r.camera.holders, holder)
		r.log.Info("head camera released", "holder", holder, "holders", len(r.camera.holders))
	}
	if len(r.camera.holders) == 0 {
		r.publish(msg.TopicHeadCameraCmd, msg.HeadCameraCommand{Enable: false})
	}
}

// watchCameraHolder drops holder's claim when done is closed (its
// client disconnected), unless the router stops first. One wait per
// holder; a nil done is a holder that does not go away by itself.
func (r *Router) watchCameraHolder(holder string, done <-chan struct{}) {
	if done == nil || r.camera.watched[holder] || r.camera.quit == nil {
		return
	}
	if r.camera.watched == nil {
		r.camera.watched = map[string]bool{}
	}
	r.camera.watched[holder] = true
	quit := r.camera.quit
	go func() {
		select {
		case <-done:
			r.ex.Post(func() {
				delete(r.camera.watched, holder)
				if r.camera.holders[holder] {
					r.log.Info("head camera holder went away", "holder", holder)
					r.claimCamera(holder, false)
				}
			})
		case <-quit:
		}
	}()
}

// CameraHolders lists who holds the head camera on, sorted (executor).
func (r *Router) CameraHolders() []string {
	out := make([]string, 0, len(r.camera.holders))
	for h := range r.camera.holders {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// headCamera is the "head camera" command: {"enable": true} claims the
// camera for the caller (a WebSocket client until it disconnects, or who
// ws.CallerOf names), {"enable": false} drops the caller's claim; the
// camera goes off when nobody holds it. {"enable": false, "holder":
// "autostart"} also drops AutostartHolder's claim: the explicit way to
// turn off a camera the head started by itself. The answer lists the
// holders.
func (r *Router) headCamera(ctx context.Context, c *ws.Client, params json.RawMessage) (any, error) {
	on, err := enableParam(params, nil)
	if err != nil {
		return nil, err
	}
	var p struct {
		Holder string `json:"holder"`
	}
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Holder != "" && (on || p.Holder != AutostartHolder) {
		return nil, ws.ParamError("holder", "only %q, with enable false, got %q", AutostartHolder, p.Holder)
	}
	caller := ws.CallerOf(ctx, c)
	in := Input{Source: msg.SourceWebSocket, Holder: caller.Name, Target: target.Head, Command: target.CommandCamera,
		Values: map[string]float64{"enable": 0}}
	if on {
		in.Values["enable"] = 1
	}
	var holders []string
	if derr := r.ex.Do(ctx, func() {
		if p.Holder == AutostartHolder && r.camera.holders[AutostartHolder] {
			delete(r.camera.holders, AutostartHolder)
			r.log.Info("head camera released", "holder", AutostartHolder, "by", caller.Name, "holders", len(r.camera.holders))
		}
		if e := r.Submit(in); e != nil {
			err = &ws.Error{Code: ws.CodeFailed, Field: "action", Message: fmt.Sprintf(
				"no enabled websocket route forwards %s %s (see the websocket_direct route)", in.Target, in.Command)}
			return
		}
		if on {
			r.watchCameraHolder(in.holder(), caller.Done)
		}
		holders = r.CameraHolders()
	}); derr != nil {
		return nil, derr
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"target": target.Head, "command": target.CommandCamera, "enable": on, "holders": holders}, nil
}
