package roleconfig

import (
	"errors"
	"io/fs"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/fixtures"
)

// Every role configuration the robot ships parses and validates.
func TestFixtureRoleConfigs(t *testing.T) {
	for _, key := range []string{"head", "arms_left", "arms_right", "tracks", "console", "balance"} {
		name := "roles/" + key + ".yaml"
		data, err := fs.ReadFile(fixtures.Config(), name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseFile(name, data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if got := c.Role; !strings.HasPrefix(key, got) {
			t.Errorf("%s: role %q", name, got)
		}
	}
}

const head = `role: head
version: "1.0.0"
gpio_mapping:
  pan_servo:
    pin: 12
    type: pwm
    frequency: 50
  tilt_servo:
    pin: 13
    type: pwm
    frequency: 50
i2c_devices:
  - bus: 1
    address: 0x68
    driver: mpu6050
    purpose: imu
limits:
  pan: [-180, 180]
  max_speed: 1.0
state_rate_hz: 20
`

// Bad configurations are refused with the file, the line and the field.
func TestBadConfigs(t *testing.T) {
	cases := []struct {
		name      string
		old, new  string // replaced in head
		line      int
		field     string
		wantInMsg string
	}{
		{"no role", "role: head\n", "", 1, "role", "missing"},
		{"unknown role", "role: head", "role: neck", 1, "role", `"neck" is not one of`},
		{"no version", "version: \"1.0.0\"\n", "", 1, "version", "missing"},
		{"pin out of range", "pin: 13", "pin: 31", 9, "gpio_mapping.tilt_servo.pin", "not a BCM GPIO"},
		{"pin used twice", "pin: 13", "pin: 12", 9, "gpio_mapping.tilt_servo.pin", "already used by pan_servo"},
		{"pwm without frequency", "    frequency: 50\ni2c", "    frequency: 0\ni2c", 11, "gpio_mapping.tilt_servo.frequency", "positive frequency"},
		{"bad pin type", "type: pwm\n    frequency: 50\ni2c", "type: servo\n    frequency: 50\ni2c", 10, "gpio_mapping.tilt_servo.type", `"servo" is not one of`},
		{"bad pull", "    frequency: 50\ni2c", "    frequency: 50\n    pull: sideways\ni2c", 12, "gpio_mapping.tilt_servo.pull", `"sideways"`},
		{"bad i2c address", "address: 0x68", "address: 0x90", 14, "i2c_devices[0].address", "0x90 is not a 7-bit"},
		{"i2c without driver", "    driver: mpu6050\n", "", 13, "i2c_devices[0].driver", "missing"},
		{"limit not a pair", "pan: [-180, 180]", "pan: [-180, 0, 180]", 18, "limits.pan", "3 values"},
		{"limit min above max", "pan: [-180, 180]", "pan: [180, -180]", 18, "limits.pan", "min 180 is above max -180"},
		{"limit not a number", "max_speed: 1.0", "max_speed: fast", 19, "limits.max_speed", "want a number"},
		{"rate not positive", "state_rate_hz: 20", "state_rate_hz: -5", 20, "state_rate_hz", "positive rate"},
		{"wrong type", "pin: 13", "pin: thirteen", 9, "", "cannot unmarshal"},
		{"arms without instance", "role: head", "role: arms", 0, "instance", "left or right"},
		{"bad can name", "limits:", "can:\n  - name: eth0\nlimits:", 18, "can[0].name", "CAN interface"},
		{"bad camera resolution", "limits:", "camera:\n  enabled: true\n  resolution: [640]\nlimits:", 19, "camera.resolution", "[width, height]"},
		{"not YAML", "role: head", "role: [head", 0, "", "yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(head, tc.old) {
				t.Fatalf("the case's text %q is not in the config", tc.old)
			}
			data := strings.Replace(head, tc.old, tc.new, 1)
			_, err := ParseFile("head.yaml", []byte(data))
			if err == nil {
				t.Fatalf("accepted:\n%s", data)
			}
			var fe *FieldError
			var le *FileError
			if !errors.As(err, &fe) || !errors.As(err, &le) {
				t.Fatalf("%v is not a *FieldError in a *FileError", err)
			}
			if le.File != "head.yaml" || fe.Field != tc.field || !strings.Contains(err.Error(), tc.wantInMsg) {
				t.Errorf("got %v (file %q field %q), want field %q and %q", err, le.File, fe.Field, tc.field, tc.wantInMsg)
			}
			if tc.line > 0 && le.Line != tc.line {
				t.Errorf("line %d, want %d: %v", le.Line, tc.line, err)
			}
			if !strings.HasPrefix(err.Error(), "roleconfig: head.yaml:") {
				t.Errorf("%q does not start with the file", err)
			}
		})
	}
}

// A role reports its own parameters' errors with their line.
func TestErrorfNamesLine(t *testing.T) {
	c, err := ParseFile("tracks.yaml", []byte("role: tracks\nversion: \"1\"\nspeed_control:\n  kp: 0.5\n  ki: -4\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Errorf("speed_control.ki", "want 0 or more, got %v", -4)
	if got, want := err.Error(), "roleconfig: tracks.yaml:5: speed_control.ki: want 0 or more, got -4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if l := c.Line("speed_control.missing"); l != 3 {
		t.Errorf("an absent field's line is its parent's: got %d, want 3", l)
	}
}

func TestParseWithoutFile(t *testing.T) {
	_, err := Parse([]byte("version: \"1\"\n"))
	if err == nil || err.Error() != "roleconfig: 1: role: missing: one of head, arms, tracks, console, balance, limb" {
		t.Errorf("got %v", err)
	}
}

const headPCA = head + `pwm_outputs:
  roll_servo:
    pca9685: 0x40
    channel: 0
    frequency: 50
  jaw_servo:
    pca9685: 0x40
    channel: 1
    frequency: 50
`

// PWM outputs on a PCA9685 name a listed chip, a free channel and the
// chip's one frequency.
func TestPWMOutputs(t *testing.T) {
	withChip := strings.Replace(headPCA, "limits:", "  - bus: 1\n    address: 0x40\n    driver: pca9685\n    purpose: servos\nlimits:", 1)
	c, err := ParseFile("head.yaml", []byte(withChip))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.PWMOutputNames(); len(got) != 2 || got[0] != "jaw_servo" || got[1] != "roll_servo" {
		t.Errorf("PWMOutputNames() = %v", got)
	}
	if o := c.PWMOutputs["roll_servo"]; o.I2CBus() != 1 || o.PCA9685 != 0x40 || o.Channel != 0 || o.Frequency != 50 {
		t.Errorf("roll_servo = %+v", o)
	}
	if _, ok := c.Params["pwm_outputs"]; ok {
		t.Error("pwm_outputs left in Params, where a role's decoder would call it unknown")
	}

	for _, tc := range []struct {
		name, old, new, field, want string
	}{
		{"chip not listed", "driver: pca9685", "driver: ina219", "pwm_outputs.jaw_servo.pca9685", "no PCA9685 at 0x40 on bus 1"},
		{"not a PCA9685 address", "pca9685: 0x40\n    channel: 0", "pca9685: 0x20\n    channel: 0", "pwm_outputs.roll_servo.pca9685", "not a PCA9685 address"},
		{"channel out of range", "channel: 1", "channel: 16", "pwm_outputs.jaw_servo.channel", "0–15"},
		{"channel used twice", "channel: 1", "channel: 0", "pwm_outputs.roll_servo.channel", "already used by jaw_servo"},
		{"frequency beyond the chip", "channel: 1\n    frequency: 50", "channel: 1\n    frequency: 20000", "pwm_outputs.jaw_servo.frequency", "24–1526 Hz"},
		{"two frequencies on one chip", "channel: 1\n    frequency: 50", "channel: 1\n    frequency: 60", "pwm_outputs.roll_servo.frequency", "one frequency"},
		{"name also in gpio_mapping", "  roll_servo:\n    pca9685", "  tilt_servo:\n    pca9685", "pwm_outputs.tilt_servo", "same name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(withChip, tc.old, tc.new, 1)
			if data == withChip {
				t.Fatalf("%q is not in the config", tc.old)
			}
			_, err := ParseFile("head.yaml", []byte(data))
			var fe *FieldError
			var le *FileError
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &le) || le.Line == 0 {
				t.Errorf("got %v, want field %s with %q and a line", err, tc.field, tc.want)
			}
		})
	}
}

func TestBetweenNamesTheFileLineFieldAndRange(t *testing.T) {
	c, err := ParseFile("tracks.yaml", []byte("role: tracks\nversion: \"1\"\ncmd_timeout_ms: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Between("cmd_timeout_ms", 0, 20, 5000, "ms")
	if want := "roleconfig: tracks.yaml:3: cmd_timeout_ms: expected between 20 and 5000 ms, got 0"; err == nil || err.Error() != want {
		t.Errorf("Between: %v, want %q", err, want)
	}
	for _, v := range []float64{20, 5000, 1234.5} {
		if d, err := c.DurationMS("cmd_timeout_ms", v, 20, 5000); err != nil || d != time.Duration(v*float64(time.Millisecond)) {
			t.Errorf("DurationMS(%g): %v, %v", v, d, err)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), -1, 5000.5} {
		if _, err := c.DurationMS("cmd_timeout_ms", v, 20, 5000); err == nil {
			t.Errorf("DurationMS(%g) accepted", v)
		}
	}
}

func TestParseRefusesAnOversizedFile(t *testing.T) {
	data := []byte("role: head\nversion: \"1\"\n# " + strings.Repeat("x", MaxFileBytes) + "\n")
	_, err := ParseFile("head.yaml", data)
	if err == nil || !strings.Contains(err.Error(), "head.yaml: ") || !strings.Contains(err.Error(), "more than the 262144") {
		t.Errorf("oversized file: %v", err)
	}
}
