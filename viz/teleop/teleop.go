package teleop

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Key is a teleop key.
type Key uint16

// Keys; Forward..Right also answer to the arrows.
const (
	Forward   Key = 1 << iota // W, ↑
	Back                      // S, ↓
	Left                      // A, ←
	Right                     // D, →
	HeadUp                    // I
	HeadDown                  // K
	HeadLeft                  // J
	HeadRight                 // L
	EStop                     // space
	Clear                     // C
)

// Keys is a set of keys.
type Keys = Key

var keyNames = map[string]Key{
	"w": Forward, "up": Forward, "s": Back, "down": Back, "a": Left, "left": Left, "d": Right, "right": Right,
	"i": HeadUp, "k": HeadDown, "j": HeadLeft, "l": HeadRight, "space": EStop, "c": Clear,
}

// Command is one API robot-control command.
type Command struct {
	Target string
	Action string
	Params map[string]any
}

// Options are the teleop's speeds; zero fields take the defaults.
type Options struct {
	Linear   float64       // m/s while a forward/back key is held (default 0.3)
	Angular  float64       // rad/s while a turn key is held (default 0.8)
	HeadRate float64       // deg/s of pan or tilt while a head key is held (default 45)
	Resend   time.Duration // a held drive is repeated this often so the route stays active (default 100 ms)
}

func (o Options) withDefaults() Options {
	if o.Linear == 0 {
		o.Linear = 0.3
	}
	if o.Angular == 0 {
		o.Angular = 0.8
	}
	if o.HeadRate == 0 {
		o.HeadRate = 45
	}
	if o.Resend == 0 {
		o.Resend = 100 * time.Millisecond
	}
	return o
}

// Teleop turns key states, sampled every tick, into commands. Not safe for
// concurrent use: the window's update loop owns it.
type Teleop struct {
	o          Options
	prev       Keys
	sinceDrive time.Duration
	driving    bool
	lastDrive  [2]float64
	pan, tilt  float64 // deg, the head target
	sinceHead  time.Duration
	headDirty  bool
}

// New returns a teleop with the head target at 0/0.
func New(o Options) *Teleop { return &Teleop{o: o.withDefaults()} }

// HeadTarget is the pan and tilt (deg) the head keys have reached.
func (t *Teleop) HeadTarget() (pan, tilt float64) { return t.pan, t.tilt }

// Tick takes the keys held now, dt after the previous tick, and returns
// the commands to send.
func (t *Teleop) Tick(held Keys, dt time.Duration) []Command {
	pressed := held &^ t.prev
	t.prev = held
	var out []Command
	if pressed&EStop != 0 {
		out = append(out, Command{"tracks", "estop", map[string]any{"enable": true}})
	}
	if pressed&Clear != 0 {
		out = append(out, Command{"tracks", "estop", map[string]any{"enable": false}})
	}
	linear := t.o.Linear * axis(held, Forward, Back)
	angular := t.o.Angular * axis(held, Left, Right)
	t.sinceDrive += dt
	switch {
	case linear != 0 || angular != 0:
		if !t.driving || t.sinceDrive >= t.o.Resend || [2]float64{linear, angular} != t.lastDrive {
			out = append(out, Command{"tracks", "drive", map[string]any{"linear": linear, "angular": angular}})
			t.driving, t.sinceDrive, t.lastDrive = true, 0, [2]float64{linear, angular}
		}
	case t.driving:
		out = append(out, Command{"tracks", "stop", nil})
		t.driving, t.lastDrive = false, [2]float64{}
	}
	step := t.o.HeadRate * dt.Seconds()
	if dp := axis(held, HeadLeft, HeadRight) * step; dp != 0 {
		t.pan, t.headDirty = clamp(t.pan+dp, 180), true
	}
	if dtilt := axis(held, HeadUp, HeadDown) * step; dtilt != 0 {
		t.tilt, t.headDirty = clamp(t.tilt+dtilt, 90), true
	}
	t.sinceHead += dt
	if t.headDirty && t.sinceHead >= t.o.Resend {
		out = append(out, Command{"head", "move", map[string]any{"pan": round(t.pan), "tilt": round(t.tilt)}})
		t.headDirty, t.sinceHead = false, 0
	}
	return out
}

// axis is +1 while plus is held, -1 while minus is, 0 for both or neither.
func axis(held Keys, plus, minus Key) float64 {
	v := 0.0
	if held&plus != 0 {
		v++
	}
	if held&minus != 0 {
		v--
	}
	return v
}

func clamp(v, limit float64) float64 { return math.Max(-limit, math.Min(limit, v)) }

func round(v float64) float64 { return math.Round(v*10) / 10 }

// Step holds Keys for Hold.
type Step struct {
	Keys Keys
	Hold time.Duration
}

// Script is a sequence of steps, one after the other from time 0.
type Script []Step

// ParseScript reads "w+a:1.5s,space,c:200ms": comma-separated steps, each
// keys joined by "+" (w a s d, up down left right, i j k l, space, c) and
// an optional hold time (a Go duration; a bare key is held for one 100 ms
// tap). "-:1s" holds nothing for a second.
func ParseScript(s string) (Script, error) {
	var out Script
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		keys, hold, found := strings.Cut(part, ":")
		st := Step{Hold: 100 * time.Millisecond}
		if found {
			d, err := time.ParseDuration(hold)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("script: step %d %q: want KEYS:DURATION (e.g. w:2s), %q is not a duration", i+1, part, hold)
			}
			st.Hold = d
		}
		for _, k := range strings.Split(keys, "+") {
			k = strings.ToLower(strings.TrimSpace(k))
			if k == "-" {
				continue
			}
			key, ok := keyNames[k]
			if !ok {
				return nil, fmt.Errorf("script: step %d %q: unknown key %q (want w a s d, up down left right, i j k l, space, c or -)", i+1, part, k)
			}
			st.Keys |= key
		}
		out = append(out, st)
	}
	return out, nil
}

// Duration is the script's total length.
func (s Script) Duration() time.Duration {
	var d time.Duration
	for _, st := range s {
		d += st.Hold
	}
	return d
}

// KeysAt returns the keys held at time at after the script's start;
// nothing after its end.
func (s Script) KeysAt(at time.Duration) Keys {
	var start time.Duration
	for _, st := range s {
		if at >= start && at < start+st.Hold {
			return st.Keys
		}
		start += st.Hold
	}
	return 0
}
