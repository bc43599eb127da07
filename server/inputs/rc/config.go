package rc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/bus/msg"
	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/persist"
)

// FileName is the receiver's configuration file in the server's
// configuration directory.
const FileName = "rc_receiver.yaml"

// File is rc_receiver.yaml: the receiver's Config under "rc_receiver".
type File struct {
	Receiver Config `yaml:"rc_receiver" json:"rc_receiver"`
}

// Config is the receiver's configuration.
type Config struct {
	Enabled  bool   `yaml:"enabled" json:"enabled"`
	Protocol string `yaml:"protocol" json:"protocol"` // msg.RCProtocolSBUS ...
	// PublishHz limits how often RCReceiverState is published; 0 publishes
	// every frame (the receiver's frame rate).
	PublishHz float64   `yaml:"publish_hz,omitempty" json:"publish_hz,omitempty"`
	UART      UART      `yaml:"uart" json:"uart"`
	GPIO      GPIO      `yaml:"gpio" json:"gpio"`
	Failsafe  Failsafe  `yaml:"failsafe" json:"failsafe"`
	Channels  []Channel `yaml:"channels" json:"channels"`
}

// UART is the serial line of SBUS, IBUS and CRSF receivers.
type UART struct {
	Device string `yaml:"device" json:"device"`
	// BaudRate overrides the protocol's line speed; 0 means the protocol's
	// (SBUS 100000, IBUS 115200, CRSF 420000).
	BaudRate int `yaml:"baud_rate" json:"baud_rate"`
	// Inverted says the line carries inverted SBUS, which a Raspberry Pi
	// UART reads only through a hardware inverter in front of RX (see
	// hal/serial). False is for receivers with an uninverted SBUS pad.
	Inverted bool `yaml:"inverted" json:"inverted"`
}

// GPIO is where PPM and PWM receivers are wired (BCM numbers).
type GPIO struct {
	PPMPin  int   `yaml:"ppm_pin" json:"ppm_pin"`
	PWMPins []int `yaml:"pwm_pins" json:"pwm_pins"`
}

// Failsafe is what happens when the transmitter's signal is lost.
type Failsafe struct {
	TimeoutMs int    `yaml:"timeout_ms" json:"timeout_ms"`
	Action    string `yaml:"action" json:"action"` // msg.FailsafeHold ...
}

// Channel types: a stick is centred and normalises to −1..1, a switch (or
// a throttle without centre) to 0..1.
const (
	TypeStick  = "stick"
	TypeSwitch = "switch"
)

// Channel is one channel's calibration. Min, Max and Center are pulse
// widths in µs, whatever the protocol (SBUS and CRSF values are converted
// as Betaflight does: 172, 992 and 1811 are 988, 1500 and 2012 µs).
type Channel struct {
	Number   int    `yaml:"number" json:"channel"`
	Name     string `yaml:"name" json:"name"`
	Min      int    `yaml:"min" json:"min"`
	Max      int    `yaml:"max" json:"max"`
	Center   int    `yaml:"center" json:"center"`
	Reversed bool   `yaml:"reversed" json:"reversed"`
	Type     string `yaml:"type,omitempty" json:"type"` // TypeStick (default) or TypeSwitch
}

// Limits of the configuration.
const (
	MaxChannels  = wire.MaxChannels
	MinTimeoutMs = 20
	MaxTimeoutMs = 10000
	MaxMicros    = 2500
	MaxPublishHz = 500
)

// DefaultChannel is channel n with the nominal 1000/1500/2000 µs stick
// calibration.
func DefaultChannel(n int) Channel {
	return Channel{Number: n, Min: 1000, Max: 2000, Center: 1500, Type: TypeStick}
}

// DefaultConfig is the shipped rc_receiver.yaml: SBUS on the Pi's UART,
// hold after 500 ms, eight channels named as the shipped routes use them.
func DefaultConfig() Config {
	names := []string{"steering", "throttle", "head_tilt", "head_pan", "gripper", "estop", "aux1", "aux2"}
	c := Config{
		Enabled: true, Protocol: msg.RCProtocolSBUS,
		UART:     UART{Device: "/dev/ttyAMA0", BaudRate: 100000, Inverted: true},
		GPIO:     GPIO{PPMPin: 18, PWMPins: []int{12, 13, 19, 26}},
		Failsafe: Failsafe{TimeoutMs: 500, Action: msg.FailsafeHold},
	}
	for i, n := range names {
		ch := DefaultChannel(i + 1)
		ch.Name = n
		if n == "gripper" || n == "estop" {
			ch.Type, ch.Center = TypeSwitch, ch.Min
		}
		c.Channels = append(c.Channels, ch)
	}
	return c
}

// FieldError is a configuration problem naming the field at fault by its
// path in the file ("rc_receiver.channels[2].min").
// It is the project's field error, which the WebSocket gateway reports
// with its field.
type FieldError = fielderr.Error

func fieldErr(field, format string, args ...any) error { return fielderr.New(field, format, args...) }

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fieldErr(field, "%q is not one of %s", v, strings.Join(allowed, ", "))
}

// ValidateChannel checks one channel; prefix goes before the field names
// in errors.
func ValidateChannel(prefix string, c Channel) error {
	if c.Number < 1 || c.Number > MaxChannels {
		return fieldErr(prefix+"number", "want 1 to %d, got %d", MaxChannels, c.Number)
	}
	if len(c.Name) > 32 {
		return fieldErr(prefix+"name", "want at most 32 characters, got %d", len(c.Name))
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"min", c.Min}, {"max", c.Max}, {"center", c.Center}} {
		if v.v < 0 || v.v > MaxMicros {
			return fieldErr(prefix+v.name, "want 0 to %d µs, got %d", MaxMicros, v.v)
		}
	}
	if c.Min >= c.Max {
		return fieldErr(prefix+"min", "want below max (%d), got %d", c.Max, c.Min)
	}
	if c.Center < c.Min || c.Center > c.Max {
		return fieldErr(prefix+"center", "want between min (%d) and max (%d), got %d", c.Min, c.Max, c.Center)
	}
	if c.Type != "" {
		if err := oneOf(prefix+"type", c.Type, TypeStick, TypeSwitch); err != nil {
			return err
		}
	}
	if c.Type != TypeSwitch && (c.Center == c.Min || c.Center == c.Max) {
		return fieldErr(prefix+"center", "a stick needs its centre strictly between min (%d) and max (%d), got %d (make it a switch?)", c.Min, c.Max, c.Center)
	}
	return nil
}

// Protocols lists the protocols the receiver reads.
func Protocols() []string {
	return []string{msg.RCProtocolPWM, msg.RCProtocolPPM, msg.RCProtocolSBUS, msg.RCProtocolIBUS, msg.RCProtocolCRSF}
}

// FailsafeActions lists the failsafe actions.
func FailsafeActions() []string {
	return []string{msg.FailsafeHold, msg.FailsafeNeutral, msg.FailsafeEStop, msg.FailsafePassthrough}
}

// Validate checks every field, returning a *FieldError for the first
// problem.
func (c Config) Validate() error {
	const p = "rc_receiver."
	if err := oneOf(p+"protocol", c.Protocol, Protocols()...); err != nil {
		return err
	}
	if c.PublishHz < 0 || c.PublishHz > MaxPublishHz || c.PublishHz != c.PublishHz {
		return fieldErr(p+"publish_hz", "want 0 (every frame) to %d, got %v", MaxPublishHz, c.PublishHz)
	}
	if c.UART.BaudRate < 0 || c.UART.BaudRate > 4000000 {
		return fieldErr(p+"uart.baud_rate", "want 0 (the protocol's) to 4000000, got %d", c.UART.BaudRate)
	}
	if wire.Protocol(c.Protocol).Serial() && c.Enabled && strings.TrimSpace(c.UART.Device) == "" {
		return fieldErr(p+"uart.device", "want a serial device path for %s", c.Protocol)
	}
	if pin := c.GPIO.PPMPin; pin < 0 || pin > 27 {
		return fieldErr(p+"gpio.ppm_pin", "want a BCM GPIO 0 to 27, got %d", pin)
	}
	if len(c.GPIO.PWMPins) > MaxChannels {
		return fieldErr(p+"gpio.pwm_pins", "want at most %d pins, got %d", MaxChannels, len(c.GPIO.PWMPins))
	}
	for i, pin := range c.GPIO.PWMPins {
		if pin < 0 || pin > 27 {
			return fieldErr(fmt.Sprintf("%sgpio.pwm_pins[%d]", p, i), "want a BCM GPIO 0 to 27, got %d", pin)
		}
	}
	if c.Protocol == msg.RCProtocolPWM && c.Enabled && len(c.GPIO.PWMPins) == 0 {
		return fieldErr(p+"gpio.pwm_pins", "want at least one pin for pwm")
	}
	if t := c.Failsafe.TimeoutMs; t < MinTimeoutMs || t > MaxTimeoutMs {
		return fieldErr(p+"failsafe.timeout_ms", "want %d to %d ms, got %d", MinTimeoutMs, MaxTimeoutMs, t)
	}
	if err := oneOf(p+"failsafe.action", c.Failsafe.Action, FailsafeActions()...); err != nil {
		return err
	}
	seen := map[int]bool{}
	for i, ch := range c.Channels {
		prefix := fmt.Sprintf("%schannels[%d].", p, i)
		if err := ValidateChannel(prefix, ch); err != nil {
			return err
		}
		if seen[ch.Number] {
			return fieldErr(prefix+"number", "channel %d configured twice", ch.Number)
		}
		seen[ch.Number] = true
	}
	return nil
}

// Channel returns channel n's configuration: the configured one, or the
// default stick calibration.
func (c Config) Channel(n int) Channel {
	for _, ch := range c.Channels {
		if ch.Number == n {
			if ch.Type == "" {
				ch.Type = TypeStick
			}
			return ch
		}
	}
	return DefaultChannel(n)
}

// fillTypes spells out the default channel type.
func (c *Config) fillTypes() {
	for i := range c.Channels {
		if c.Channels[i].Type == "" {
			c.Channels[i].Type = TypeStick
		}
	}
}

// Clone returns a deep copy of c.
func (c Config) Clone() Config {
	c.Channels = append([]Channel(nil), c.Channels...)
	c.GPIO.PWMPins = append([]int(nil), c.GPIO.PWMPins...)
	return c
}

// SetChannel replaces (or adds, in channel order) ch.
func (c *Config) SetChannel(ch Channel) {
	for i := range c.Channels {
		if c.Channels[i].Number == ch.Number {
			c.Channels[i] = ch
			return
		}
	}
	i := 0
	for i < len(c.Channels) && c.Channels[i].Number < ch.Number {
		i++
	}
	c.Channels = append(c.Channels, Channel{})
	copy(c.Channels[i+1:], c.Channels[i:])
	c.Channels[i] = ch
}

// Parse reads rc_receiver.yaml. Fields the file leaves out keep
// DefaultConfig's values (channels are replaced as a whole); unknown fields
// are errors, and the result is validated.
func Parse(data []byte) (Config, error) {
	f := File{Receiver: DefaultConfig()}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, fieldErr("rc_receiver", "the file is empty")
		}
		return Config{}, fieldErr("rc_receiver", "%v", err)
	}
	// A null document decodes as nothing at all: it is as damaged as an
	// empty file, not the defaults.
	var whole map[string]any
	if err := persist.DecodeYAML(data, &whole); err != nil {
		return Config{}, fieldErr("rc_receiver", "%v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Config{}, fieldErr("rc_receiver", "want one YAML document, found more")
	}
	if err := f.Receiver.Validate(); err != nil {
		return Config{}, err
	}
	f.Receiver.fillTypes()
	return f.Receiver, nil
}

// Marshal writes c as rc_receiver.yaml.
func Marshal(c Config) []byte {
	var b bytes.Buffer
	b.WriteString("# RC receiver; see docs/rc.md.\n")
	b.WriteString("# Written by saint-server when the rc commands change it.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(File{Receiver: c}) // plain structs always encode
	_ = enc.Close()
	return b.Bytes()
}
