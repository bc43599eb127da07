package router

import (
	"encoding/json"
	"io/fs"
	"math"
	"testing"
	"testing/fstest"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
)

// The five standard presets (docs/router.md) and vr_arms ship, parse and
// validate.
func TestShippedPresets(t *testing.T) {
	sub, err := fs.Sub(fixtures.Config(), "routes")
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := seedPresets(sub)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"default", "facecap_head", "ue_fullbody", "rc_manual", "manual_override", "vr_arms"} {
		data, ok := seeds[name]
		if !ok {
			t.Errorf("preset %s missing", name)
			continue
		}
		cfg, err := ParseConfig(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(cfg.Routes) == 0 || cfg.Blending == nil {
			t.Errorf("%s: %d routes, blending %v", name, len(cfg.Routes), cfg.Blending)
		}
	}
}

// The shipped default routes drive the balancing base from the RC
// transmitter, and the tracks, the base and the head from a gamepad, with
// the mapping docs/rc.md documents.
func TestShippedDefaultRoutesDriveEveryBase(t *testing.T) {
	sub, err := fs.Sub(fixtures.Config(), "routes")
	if err != nil {
		t.Fatal(err)
	}
	rg := newRigOpts(t, Options{Presets: sub})
	last := func(topic string) json.RawMessage {
		t.Helper()
		got := rg.got[topic]
		if len(got) == 0 {
			t.Fatalf("nothing on %s", topic)
		}
		return got[len(got)-1].data
	}
	twist := func(topic string) msg.Twist {
		var tw msg.Twist
		if err := json.Unmarshal(last(topic), &tw); err != nil {
			t.Fatal(err)
		}
		return tw
	}
	arm := func() msg.BalanceArm {
		var a msg.BalanceArm
		if err := json.Unmarshal(last(msg.TopicBalanceArm), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}

	// RC: right stick forward and right, the aux2 switch on.
	stop := rg.every(20*time.Millisecond, func() Input {
		return Input{Source: msg.SourceRC, Values: map[string]float64{
			msg.RCChannelProperty(1): 0.5, msg.RCChannelProperty(2): 0.8, msg.RCChannelProperty(6): 1, msg.RCChannelProperty(8): 1}}
	})
	rg.run(200 * time.Millisecond)
	if tw := twist(msg.TopicBalanceCmdVel); math.Abs(tw.Linear.X-0.8) > 1e-9 || tw.Angular.Z >= 0 {
		t.Errorf("RC sticks → balance %+v, want 0.8 m/s forward, turning right", tw)
	}
	if !arm().Arm {
		t.Error("RC channel 8 on did not turn the balance arm switch on")
	}
	stop()
	rg.run(time.Second)
	rg.reset()

	// The gamepad: left stick full up and a little right, A held, right
	// stick right.
	stop = rg.every(100*time.Millisecond, func() Input {
		return Input{Source: msg.SourceJoystick, Subject: "js0", Values: map[string]float64{
			"axis_0": 0.5, "axis_1": -1, "axis_3": 1, "axis_4": 0, "button_0": 1, "button_1": 0}}
	})
	rg.run(300 * time.Millisecond)
	for _, topic := range []string{msg.TopicTracksCmdVel, msg.TopicBalanceCmdVel} {
		if tw := twist(topic); math.Abs(tw.Linear.X-1) > 1e-9 || tw.Angular.Z >= 0 {
			t.Errorf("gamepad left stick → %s %+v, want 1 m/s forward, turning right", topic, tw)
		}
	}
	if !arm().Arm {
		t.Error("gamepad A did not turn the balance arm switch on")
	}
	heads := rg.heads()
	if len(heads) == 0 || heads[len(heads)-1].Pan >= -80 {
		t.Errorf("gamepad right stick right → head %+v, want panned right", heads)
	}
	stop()
	// B is the emergency stop.
	rg.do(func() {
		_ = rg.r.Submit(Input{Source: msg.SourceJoystick, Subject: "js0", Values: map[string]float64{"button_1": 1}})
	})
	rg.run(50 * time.Millisecond)
	if es := rg.estops(); len(es) == 0 || !es[len(es)-1].Active {
		t.Errorf("gamepad B: e-stops %+v, want engaged", es)
	}
}

// In every shipped preset, every route that steers a base from a stick
// turns it clockwise (negative angular.z, counter-clockwise positive as in
// ROS) for the stick pushed right. Both stick sources read right as +1: an
// RC channel normalised as docs/rc.md says (more µs is +1) and a gamepad
// axis (value / 32767). Each route is fed on its own, with its preset as
// the routes in use.
func TestShippedPresetsStickRightTurnsClockwise(t *testing.T) {
	sub, err := fs.Sub(fixtures.Config(), "routes")
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := seedPresets(sub)
	if err != nil {
		t.Fatal(err)
	}
	cmdVel := map[string]string{"tracks": msg.TopicTracksCmdVel, "balance": msg.TopicBalanceCmdVel}
	checked := map[string]bool{}
	for name, data := range seeds {
		cfg, err := ParseConfig(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, route := range cfg.Routes {
			topic, base := cmdVel[route.Output.Target]
			stick := route.Input.Source == msg.SourceRC || route.Input.Source == msg.SourceJoystick
			if !route.Enabled || !base || !stick || route.Mapping.Passthrough {
				continue
			}
			for _, m := range route.Mapping.List {
				if m.To != "angular" {
					continue
				}
				t.Run(name+"/"+route.ID, func(t *testing.T) {
					in := Input{Source: route.Input.Source, Values: map[string]float64{m.From: 1}}
					if route.Input.Source == msg.SourceRC {
						// The emergency switch (channel 6, low = stop) is up.
						in.Values[msg.RCChannelProperty(6)] = 1
					} else {
						in.Subject = route.Input.Subject
					}
					rg := newRigOpts(t, Options{Presets: fstest.MapFS{DefaultPreset + ".yaml": {Data: data}}})
					stop := rg.every(20*time.Millisecond, func() Input { return in })
					rg.run(300 * time.Millisecond)
					stop()
					got := decodeAll[msg.Twist](rg, topic)
					if len(got) == 0 {
						t.Fatalf("%s right (+1): nothing on %s", m.From, topic)
					}
					if tw := got[len(got)-1]; tw.Angular.Z >= 0 {
						t.Errorf("%s right (+1) → %s angular.z %v, want negative (clockwise)", m.From, route.Output.Target, tw.Angular.Z)
					}
				})
				checked[name+"/"+route.ID] = true
			}
		}
	}
	for _, want := range []string{"default/rc_drive", "default/rc_balance", "default/joystick_drive", "default/joystick_balance", "rc_manual/rc_drive"} {
		if !checked[want] {
			t.Errorf("%s steers no base from a stick any more: the test checked %v", want, checked)
		}
	}
}

// Every shipped preset moves the head the same way for the same physical
// stick: right pans it right (negative pan, positive is left) and up tilts
// it up (negative tilt, positive is nose down), by the same angle from the
// RC transmitter and the joystick. An RC channel reads +1 for stick right
// and up; a joystick axis +1 for right and −1 for up.
func TestShippedPresetsStickMovesHeadTheSameWay(t *testing.T) {
	sub, err := fs.Sub(fixtures.Config(), "routes")
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := seedPresets(sub)
	if err != nil {
		t.Fatal(err)
	}
	// full is the head angle at full stick, by axis and preset/route.
	full := map[string]map[string]float64{"pan": {}, "tilt": {}}
	for name, data := range seeds {
		cfg, err := ParseConfig(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, route := range cfg.Routes {
			stick := route.Input.Source == msg.SourceRC || route.Input.Source == msg.SourceJoystick
			if !route.Enabled || route.Output.Target != "head" || !stick || route.Mapping.Passthrough {
				continue
			}
			for _, m := range route.Mapping.List {
				if m.To != "pan" && m.To != "tilt" {
					continue
				}
				// The stick's value for right (pan) or up (tilt).
				push, dir := 1.0, "right"
				if m.To == "tilt" {
					dir = "up"
					if route.Input.Source == msg.SourceJoystick {
						push = -1
					}
				}
				t.Run(name+"/"+route.ID+"/"+m.To, func(t *testing.T) {
					in := Input{Source: route.Input.Source, Values: map[string]float64{m.From: push}}
					if route.Input.Source == msg.SourceRC {
						// The emergency switch (channel 6, low = stop) is up.
						in.Values[msg.RCChannelProperty(6)] = 1
					} else {
						in.Subject = route.Input.Subject
					}
					rg := newRigOpts(t, Options{Presets: fstest.MapFS{DefaultPreset + ".yaml": {Data: data}}})
					stop := rg.every(20*time.Millisecond, func() Input { return in })
					rg.run(time.Second)
					stop()
					heads := rg.heads()
					if len(heads) == 0 {
						t.Fatalf("%s %s (%+g): no head command", m.From, dir, push)
					}
					got := float64(heads[len(heads)-1].Pan)
					if m.To == "tilt" {
						got = float64(heads[len(heads)-1].Tilt)
					}
					if got >= 0 {
						t.Errorf("%s %s (%+g) → head %s %v, want negative (%s)", m.From, dir, push, m.To, got, dir)
					}
					full[m.To][name+"/"+route.ID] = got
				})
			}
		}
	}
	for _, axis := range []string{"pan", "tilt"} {
		for _, want := range []string{"default/rc_head", "default/joystick_head", "rc_manual/rc_head"} {
			if _, ok := full[axis][want]; !ok {
				t.Errorf("%s drives head %s from no stick any more: the test checked %v", want, axis, full[axis])
			}
		}
		for route, got := range full[axis] {
			if math.Abs(got-full[axis]["default/joystick_head"]) > 1e-9 {
				t.Errorf("full stick: %s moves head %s to %v°, default/joystick_head to %v°; want the same", route, axis, got, full[axis]["default/joystick_head"])
			}
		}
	}
}
