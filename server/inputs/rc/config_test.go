package rc

import (
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/saint-os/saint/fixtures"
)

// TestShippedConfig: the fixtures' rc_receiver.yaml parses and says what
// DefaultConfig says.
func TestShippedConfig(t *testing.T) {
	data, err := fs.ReadFile(fixtures.Config(), FileName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, DefaultConfig()) {
		t.Fatalf("shipped config\n%+v\nwant DefaultConfig\n%+v", c, DefaultConfig())
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	c := DefaultConfig()
	c.Protocol, c.PublishHz = "crsf", 50
	c.Failsafe.Action = "estop"
	c.SetChannel(Channel{Number: 12, Name: "arm", Min: 990, Max: 2010, Center: 990, Type: TypeSwitch, Reversed: true})
	got, err := Parse(Marshal(c))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip\n%+v\nwant\n%+v", got, c)
	}
	if got.Channels[len(got.Channels)-1].Number != 12 {
		t.Fatal("SetChannel did not keep channel order")
	}
}

// TestParseErrors: every problem names its field.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, field string }{
		{"rc_receiver:\n  protocol: dsmx\n", "rc_receiver.protocol"},
		{"rc_receiver:\n  failsafe: {timeout_ms: 5, action: hold}\n", "rc_receiver.failsafe.timeout_ms"},
		{"rc_receiver:\n  failsafe: {timeout_ms: 500, action: panic}\n", "rc_receiver.failsafe.action"},
		{"rc_receiver:\n  channels: [{number: 1, min: 2000, max: 1000, center: 1500}]\n", "rc_receiver.channels[0].min"},
		{"rc_receiver:\n  channels: [{number: 17, min: 1000, max: 2000, center: 1500}]\n", "rc_receiver.channels[0].number"},
		{"rc_receiver:\n  channels: [{number: 1, min: 1000, max: 2000, center: 1000}]\n", "rc_receiver.channels[0].center"},
		{"rc_receiver:\n  channels: [{number: 1, min: 1000, max: 2000, center: 1500, type: knob}]\n", "rc_receiver.channels[0].type"},
		{"rc_receiver:\n  channels:\n  - {number: 2, min: 1000, max: 2000, center: 1500}\n  - {number: 2, min: 1000, max: 2000, center: 1500}\n", "rc_receiver.channels[1].number"},
		{"rc_receiver:\n  uart: {device: \"\"}\n", "rc_receiver.uart.device"},
		{"rc_receiver:\n  gpio: {pwm_pins: [12, 40]}\n", "rc_receiver.gpio.pwm_pins[1]"},
		{"rc_receiver:\n  bogus: 1\n", "rc_receiver"},
		{"", "rc_receiver"},
		{"null", "rc_receiver"},
		{"~\n", "rc_receiver"},
		{"rc_receiver: {}\n---\nrc_receiver: {}\n", "rc_receiver"},
	} {
		_, err := Parse([]byte(tc.yaml))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%q: error %v, want one naming %s", tc.yaml, err, tc.field)
		}
	}
	if _, err := Parse([]byte("rc_receiver:\n  bogus: 1\n")); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown field error %v does not name it", err)
	}
}

func TestNormalize(t *testing.T) {
	stick := Channel{Number: 1, Min: 1000, Max: 2000, Center: 1400, Type: TypeStick}
	sw := Channel{Number: 5, Min: 1100, Max: 1900, Center: 1100, Type: TypeSwitch}
	for _, tc := range []struct {
		c    Channel
		us   uint16
		want float64
	}{
		{stick, 1400, 0}, {stick, 2000, 1}, {stick, 1000, -1}, {stick, 1700, 0.5}, {stick, 1200, -0.5},
		{stick, 2100, 1}, {stick, 900, -1},
		{sw, 1100, 0}, {sw, 1900, 1}, {sw, 1500, 0.5}, {sw, 2000, 1}, {sw, 1000, 0},
	} {
		if got := tc.c.Normalize(tc.us); !near(got, tc.want, 1e-9) {
			t.Errorf("%s %d µs: %v, want %v", tc.c.Type, tc.us, got, tc.want)
		}
		r := tc.c
		r.Reversed = true
		want := -tc.want
		if r.Type == TypeSwitch {
			want = 1 - tc.want
		}
		if got := r.Normalize(tc.us); !near(got, want, 1e-9) {
			t.Errorf("reversed %s %d µs: %v, want %v", tc.c.Type, tc.us, got, want)
		}
	}
}
