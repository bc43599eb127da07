package bus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// TestSubscribeStrictJSONTakesOnlyItsType: on a command topic, a service's
// reply envelope, null, an empty object, an object missing a required
// field or with one the type does not have are not the command (they would decode leniently as its zero value: the e-stop
// released); each is counted and never handled. Complete messages, with
// or without their omitempty fields, and values published in process
// are handled.
func TestSubscribeStrictJSONTakesOnlyItsType(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()

	var estops []msg.EStop
	es, err := bus.SubscribeStrictJSON(sub, msg.TopicTracksEStop, bus.QoS{Depth: 100}, ex, func(_ string, e msg.EStop) { estops = append(estops, e) })
	if err != nil {
		t.Fatal(err)
	}
	var heads []msg.HeadCommand
	hs, err := bus.SubscribeStrictJSON(sub, msg.TopicHeadCmd, bus.QoS{Depth: 100}, ex, func(_ string, c msg.HeadCommand) { heads = append(heads, c) })
	if err != nil {
		t.Fatal(err)
	}
	var twists []msg.Twist
	ts, err := bus.SubscribeStrictJSON(sub, msg.TopicTracksCmdVel, bus.QoS{Depth: 100}, ex, func(_ string, v msg.Twist) { twists = append(twists, v) })
	if err != nil {
		t.Fatal(err)
	}

	refused := map[string][]string{
		msg.TopicTracksEStop: {
			`{"result":{"update_available":false}}`,
			`{"error":"bus: service busy, too many requests waiting"}`,
			`null`, `{}`, `[]`, `"active"`,
			`{"active":false}`, // no source
			`{"active":false,"source":"x","released_by":"y"}`,
		},
		msg.TopicHeadCmd: {
			`{"result":{"pan":0,"tilt":0}}`,
			`{"pan":0,"tilt":0,"roll":0}`, // no speed
			`{"pan":0,"tilt":0,"roll":0,"speed":1,"result":null}`,
		},
		msg.TopicTracksCmdVel: {
			`{"result":null}`,
			`{"linear":{"x":0,"y":0,"z":0}}`, // no angular
			`{"linear":{"x":0,"y":0,"z":0,"w":1},"angular":{"x":0,"y":0,"z":0}}`, // unknown nested field
		},
	}
	accepted := map[string][]string{
		msg.TopicTracksEStop:  {`{"active":true,"source":"rc"}`, `{"active":true,"source":"rc","reason":"button"}`},
		msg.TopicHeadCmd:      {`{"pan":10,"tilt":5,"roll":0,"speed":0.5}`, `{"pan":10,"tilt":5,"roll":0,"speed":0.5,"jaw":0.2,"eyes_pan":3}`},
		msg.TopicTracksCmdVel: {`{"linear":{"x":0.3},"angular":{"z":0.1}}`},
	}
	ex.Post(func() {
		for topic, list := range refused {
			for _, m := range list {
				if err := pub.Publish(topic, json.RawMessage(m)); err != nil {
					t.Errorf("publishing %s: %v", m, err)
				}
			}
		}
		for topic, list := range accepted {
			for _, m := range list {
				_ = pub.Publish(topic, json.RawMessage(m))
			}
		}
		// In process, a value of the type itself.
		_ = pub.Publish(msg.TopicTracksEStop, msg.EStop{Active: true, Source: "console"})
	})
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if len(estops) != 3 || !estops[0].Active || !estops[1].Active || estops[1].Reason != "button" || estops[2].Source != "console" {
		t.Errorf("e-stops handled: %+v, want the two sent whole and the value", estops)
	}
	if len(heads) != 2 || heads[0].Pan != 10 || heads[1].Jaw != 0.2 {
		t.Errorf("head commands handled: %+v", heads)
	}
	if len(twists) != 1 || twists[0].Linear.X != 0.3 {
		t.Errorf("twists handled: %+v", twists)
	}
	for s, topic := range map[bus.Subscription]string{es: msg.TopicTracksEStop, hs: msg.TopicHeadCmd, ts: msg.TopicTracksCmdVel} {
		st, _ := bus.SubscriptionStats(s)
		if st.DecodeErrors != uint64(len(refused[topic])) {
			t.Errorf("%s: %d messages refused, want %d", topic, st.DecodeErrors, len(refused[topic]))
		}
	}
}
