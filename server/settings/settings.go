package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/node/persist"
)

// FileName is the settings file inside the data directory.
const FileName = "settings.json"

// Settings is everything on the spec's Settings page that the server
// stores. JSON names are the API's.
type Settings struct {
	System   System   `json:"system"`
	LiveLink LiveLink `json:"livelink"`
	RC       RC       `json:"rc"`
	Auth     Auth     `json:"auth"`
}

// System is the Settings page's SYSTEM box.
type System struct {
	ServerName string `json:"server_name"`
	Hostname   string `json:"hostname"`
}

// LiveLink is the LIVELINK box (spec: Default Ports).
type LiveLink struct {
	Enabled       bool   `json:"enabled"`
	DiscoveryPort int    `json:"discovery_port"`
	DataPort      int    `json:"data_port"`
	BroadcastName string `json:"broadcast_name"`
}

// RC is the RC RECEIVER box and the spec's rc_receiver.yaml.
type RC struct {
	Enabled  bool      `json:"enabled"`
	Protocol string    `json:"protocol"`
	Failsafe Failsafe  `json:"failsafe"`
	UART     UART      `json:"uart"`
	GPIO     GPIO      `json:"gpio"`
	Channels []Channel `json:"channels"`
}

// Failsafe is what happens when the transmitter's signal is lost.
type Failsafe struct {
	TimeoutMs int    `json:"timeout_ms"`
	Action    string `json:"action"`
}

// UART is the serial line of SBUS, IBUS and CRSF receivers.
type UART struct {
	Device   string `json:"device"`
	BaudRate int    `json:"baud_rate"`
	Inverted bool   `json:"inverted"`
}

// GPIO is where PPM and PWM receivers are wired (BCM numbers).
type GPIO struct {
	PPMPin  int   `json:"ppm_pin"`
	PWMPins []int `json:"pwm_pins"`
}

// Channel is one RC channel's calibration (rc set_channel_config).
type Channel struct {
	Number   int    `json:"channel"`
	Name     string `json:"name"`
	Min      int    `json:"min"`
	Max      int    `json:"max"`
	Center   int    `json:"center"`
	Reversed bool   `json:"reversed"`
}

// Auth is the AUTHENTICATION box; the token itself lives in package auth.
type Auth struct {
	Required bool `json:"required"`
}

// MaxChannels is the most channels a receiver protocol carries (SBUS).
const MaxChannels = 16

// Defaults are the spec's values: the default ports, rc_receiver.yaml's
// example and authentication on.
func Defaults() Settings {
	names := []string{"steering", "throttle", "head_tilt", "head_pan", "gripper", "estop", "aux1", "aux2"}
	var chans []Channel
	for i, n := range names {
		chans = append(chans, Channel{Number: i + 1, Name: n, Min: 1000, Max: 2000, Center: 1500})
	}
	return Settings{
		System:   System{ServerName: "SAINT-01", Hostname: "saint-server"},
		LiveLink: LiveLink{Enabled: true, DiscoveryPort: 54321, DataPort: 54322, BroadcastName: "SAINT-01"},
		RC: RC{
			Enabled: true, Protocol: msg.RCProtocolSBUS,
			Failsafe: Failsafe{TimeoutMs: 500, Action: msg.FailsafeHold},
			UART:     UART{Device: "/dev/ttyAMA0", BaudRate: 100000, Inverted: true},
			GPIO:     GPIO{PPMPin: 18, PWMPins: []int{12, 13, 19, 26}},
			Channels: chans,
		},
		Auth: Auth{Required: true},
	}
}

// FieldError is a validation failure naming the setting at fault by its
// dotted JSON path ("livelink.data_port", "rc.channels[2].min").
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// ParamField names the field (the WebSocket gateway reports it).
func (e *FieldError) ParamField() string { return e.Field }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Protocols lists the RC protocols the spec supports.
func Protocols() []string {
	return []string{msg.RCProtocolPWM, msg.RCProtocolPPM, msg.RCProtocolSBUS, msg.RCProtocolIBUS, msg.RCProtocolCRSF}
}

// FailsafeActions lists the spec's failsafe actions.
func FailsafeActions() []string {
	return []string{msg.FailsafeHold, msg.FailsafeNeutral, msg.FailsafeEStop, msg.FailsafePassthrough}
}

func oneOf(field, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fieldErr(field, "%q is not one of %s", v, strings.Join(allowed, ", "))
}

// ValidHostname reports whether h is an RFC 1123 host name.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// ValidateChannel checks one channel's calibration; field prefixes the
// names in errors.
func ValidateChannel(field string, c Channel) error {
	if c.Number < 1 || c.Number > MaxChannels {
		return fieldErr(field+"channel", "want 1 to %d, got %d", MaxChannels, c.Number)
	}
	if len(c.Name) > 32 {
		return fieldErr(field+"name", "at most 32 characters")
	}
	// Raw values are µs for PWM/PPM/IBUS and 172–1811 for SBUS/CRSF.
	for _, v := range []struct {
		name string
		v    int
	}{{"min", c.Min}, {"max", c.Max}, {"center", c.Center}} {
		if v.v < 0 || v.v > 2500 {
			return fieldErr(field+v.name, "want 0 to 2500, got %d", v.v)
		}
	}
	if c.Min >= c.Max {
		return fieldErr(field+"min", "want below max (%d), got %d", c.Max, c.Min)
	}
	if c.Center < c.Min || c.Center > c.Max {
		return fieldErr(field+"center", "want between min (%d) and max (%d), got %d", c.Min, c.Max, c.Center)
	}
	return nil
}

// Validate checks every field, returning a *FieldError for the first
// problem.
func (s Settings) Validate() error {
	if n := strings.TrimSpace(s.System.ServerName); n == "" || len(n) > 64 {
		return fieldErr("system.server_name", "want 1 to 64 characters, got %q", s.System.ServerName)
	}
	if !validHostname(s.System.Hostname) {
		return fieldErr("system.hostname", "%q is not a host name (letters, digits, '-', dot-separated labels)", s.System.Hostname)
	}
	port := func(field string, p int) error {
		if p < 1 || p > 65535 {
			return fieldErr(field, "want a port 1 to 65535, got %d", p)
		}
		return nil
	}
	if err := port("livelink.discovery_port", s.LiveLink.DiscoveryPort); err != nil {
		return err
	}
	if err := port("livelink.data_port", s.LiveLink.DataPort); err != nil {
		return err
	}
	if n := strings.TrimSpace(s.LiveLink.BroadcastName); n == "" || len(n) > 64 {
		return fieldErr("livelink.broadcast_name", "want 1 to 64 characters, got %q", s.LiveLink.BroadcastName)
	}
	if err := oneOf("rc.protocol", s.RC.Protocol, Protocols()); err != nil {
		return err
	}
	if err := oneOf("rc.failsafe.action", s.RC.Failsafe.Action, FailsafeActions()); err != nil {
		return err
	}
	if t := s.RC.Failsafe.TimeoutMs; t < 20 || t > 10000 {
		return fieldErr("rc.failsafe.timeout_ms", "want 20 to 10000 ms, got %d", t)
	}
	if s.RC.UART.BaudRate < 0 || s.RC.UART.BaudRate > 4000000 {
		return fieldErr("rc.uart.baud_rate", "want 0 to 4000000, got %d", s.RC.UART.BaudRate)
	}
	if p := s.RC.GPIO.PPMPin; p < 0 || p > 27 {
		return fieldErr("rc.gpio.ppm_pin", "want a BCM GPIO 0 to 27, got %d", p)
	}
	for i, p := range s.RC.GPIO.PWMPins {
		if p < 0 || p > 27 {
			return fieldErr(fmt.Sprintf("rc.gpio.pwm_pins[%d]", i), "want a BCM GPIO 0 to 27, got %d", p)
		}
	}
	seen := map[int]bool{}
	for i, c := range s.RC.Channels {
		if err := ValidateChannel(fmt.Sprintf("rc.channels[%d].", i), c); err != nil {
			return err
		}
		if seen[c.Number] {
			return fieldErr(fmt.Sprintf("rc.channels[%d].channel", i), "channel %d configured twice", c.Number)
		}
		seen[c.Number] = true
	}
	return nil
}

// Store holds the settings and writes every change to disk. It is safe for
// concurrent use.
type Store struct {
	path string
	// check vets a change before it is stored (the server refuses to turn
	// authentication off while it listens beyond loopback).
	check func(old, new Settings) error

	mu       sync.Mutex
	cur      Settings
	watchers []func(Settings)
}

// Open reads dir/settings.json, or starts from Defaults if there is none.
// A file that does not parse or validate is an error, not silently reset.
func Open(dir string) (*Store, error) {
	s := &Store{cur: Defaults()}
	if dir == "" {
		return s, nil // in memory only
	}
	s.path = filepath.Join(dir, FileName)
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	cur, err := merge(Defaults(), data)
	if err == nil {
		err = cur.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("settings: %s: %w", s.path, err)
	}
	s.cur = cur
	return s, nil
}

// SetCheck installs a veto run on every change before it is stored.
func (s *Store) SetCheck(check func(old, new Settings) error) {
	s.mu.Lock()
	s.check = check
	s.mu.Unlock()
}

// Get returns a copy of the current settings.
func (s *Store) Get() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.cur)
}

// Watch calls f with the new settings after every stored change. f runs
// on the changing goroutine and must not call Update.
func (s *Store) Watch(f func(Settings)) {
	s.mu.Lock()
	s.watchers = append(s.watchers, f)
	s.mu.Unlock()
}

// Patch merges a partial JSON document onto the current settings,
// validates the result and stores it. Unknown fields are errors naming
// the field.
func (s *Store) Patch(patch []byte) (Settings, error) {
	return s.Update(func(cur Settings) (Settings, error) { return merge(cur, patch) })
}

// Update applies change to a copy of the current settings, validates and
// stores the result; on any error nothing changes.
func (s *Store) Update(change func(Settings) (Settings, error)) (Settings, error) {
	s.mu.Lock()
	next, err := change(clone(s.cur))
	if err == nil {
		err = next.Validate()
	}
	if err == nil && s.check != nil {
		err = s.check(s.cur, next)
	}
	if err == nil && s.path != "" {
		data, _ := json.MarshalIndent(next, "", "  ")
		if err = os.MkdirAll(filepath.Dir(s.path), 0o755); err == nil {
			err = persist.WriteFile(s.path, append(data, '\n'), 0o644)
		}
	}
	if err != nil {
		s.mu.Unlock()
		return Settings{}, err
	}
	s.cur = next
	watchers := append([]func(Settings){}, s.watchers...)
	s.mu.Unlock()
	for _, w := range watchers {
		w(clone(next))
	}
	return clone(next), nil
}

// merge decodes patch onto a copy of cur: objects merge field by field,
// lists replace, unknown fields are rejected by name.
func merge(cur Settings, patch []byte) (Settings, error) {
	next := clone(cur)
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&next); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return Settings{}, fieldErr("settings", "want a JSON object, got %s", te.Value)
			}
			return Settings{}, fieldErr(te.Field, "want %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
			name := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			if name == "" {
				return Settings{}, fieldErr("settings", `unknown setting ""`)
			}
			return Settings{}, fieldErr(name, "unknown setting")
		}
		return Settings{}, fieldErr("settings", "not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Settings{}, fieldErr("settings", "want one JSON object, found more after it")
	}
	return next, nil
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "struct":
		return "an object"
	}
	return k
}

func clone(s Settings) Settings {
	s.RC.Channels = append([]Channel(nil), s.RC.Channels...)
	s.RC.GPIO.PWMPins = append([]int(nil), s.RC.GPIO.PWMPins...)
	return s
}
