package msg_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
)

// The simulator's messages round-trip through JSON and name every field in
// snake_case, as the rest of the package does.
func TestSimMessages(t *testing.T) {
	for _, p := range []any{
		&msg.SimWorld{}, &msg.SimDisturbRequest{}, &msg.SimDisturbResponse{},
		&msg.SimHead{}, &msg.SimArm{}, &msg.SimTracks{}, &msg.SimBalance{},
	} {
		typ := reflect.TypeOf(p).Elem()
		n := 0
		want := reflect.New(typ)
		fill(want.Elem(), &n)
		data, err := json.Marshal(want.Interface())
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(typ)
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(got.Interface()); err != nil || !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("%s: round trip of %s: %v", typ.Name(), data, err)
		}
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !snake.MatchString(name) {
				t.Errorf("%s.%s has JSON name %q", typ.Name(), typ.Field(i).Name, name)
			}
		}
	}
}

func TestSimNames(t *testing.T) {
	if got := msg.SimTruthTopic("arm_left"); got != "/saint/sim/truth/arm_left" {
		t.Errorf("SimTruthTopic = %q", got)
	}
	for _, name := range []string{msg.TopicSimWorld, msg.SimTruthTopic("head")} {
		if _, err := bus.TopicSubject(name, false); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := bus.TopicSubject(msg.TopicSimAllTruth, true); err != nil {
		t.Errorf("%s: %v", msg.TopicSimAllTruth, err)
	}
	if _, err := bus.ServiceSubject(msg.ServiceSimDisturb); err != nil {
		t.Errorf("%s: %v", msg.ServiceSimDisturb, err)
	}
}
