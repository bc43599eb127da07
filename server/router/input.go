package router

import (
	"errors"
	"math"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// Input is one input for the router, whatever its source: an RC frame, a
// LiveLink frame, a joystick, a WebSocket command, a ROS message, an
// autonomous behaviour, a failsafe. It is the one contract between the
// sources and the router. Sources in the server's process hand it to a
// Sink on the executor (the joystick, the WebSocket commands); sources
// elsewhere publish it as msg.RouterInput on msg.TopicRouterInput (see
// BusInput); the RC and LiveLink receivers, whose messages have other
// readers too, publish their own messages, which the router turns into
// inputs with RCInput and LiveLinkInput.
type Input struct {
	Source   string // msg.SourceRC ...
	Subject  string // LiveLink subject name
	Type     string // LiveLink subject type
	Protocol string // RC protocol
	// Target is the output a passthrough input is for ("head",
	// "arms.left"); Command is what it asks ("move", "home", "drive").
	Target  string
	Command string
	// Holder is who, within Source, sent the input, for a source with
	// many users that each hold something of their own: the WebSocket
	// client or the Foxglove server holding the head camera on
	// (target.CommandCamera). Empty for a source that is one party (ros2, rc).
	Holder string
	// Values are by property name: "channel_2", "headYaw", or for
	// passthrough the output's own properties ("pan", "linear").
	Values map[string]float64
	// Time is when the input arrived; zero means now.
	Time time.Time
}

// Sink takes inputs on the executor: a *Router.
type Sink interface {
	Submit(in Input) error
}

// ErrNoRoute is returned by Submit when no enabled route takes the input.
var ErrNoRoute = errors.New("router: no enabled route takes this input")

// RCInput turns an RC receiver state into an input: "channel_N" is
// channel N's normalised value. A receiver that is not connected or in
// failsafe gives no input, so the RC routes time out and the other
// sources take over; the receiver carries out hold and neutral by the
// values it publishes, and its e-stop failsafe with a RouterInput.
func RCInput(s msg.RCReceiverState) (Input, bool) {
	if !s.Connected || s.Failsafe {
		return Input{}, false
	}
	in := Input{Source: msg.SourceRC, Protocol: s.Protocol, Values: make(map[string]float64, len(s.Channels))}
	for _, c := range s.Channels {
		if c.Failsafe {
			continue
		}
		in.Values[msg.RCChannelProperty(int(c.ChannelNumber))] = float64(c.Normalized)
	}
	return in, true
}

// LiveLinkInput turns a LiveLink frame into an input: every property by
// its name (blend shapes, bones). Transform and camera subjects also give
// their transform as "x", "y", "z" (metres), "yaw", "pitch", "roll"
// (degrees; rotations about z, y and x, applied in that order) and the
// rotation quaternion itself as "qw", "qx", "qy", "qz" (normalised), which
// the arms' pose targets take.
func LiveLinkInput(f msg.LiveLinkFrame) Input {
	in := Input{Source: msg.SourceLiveLink, Subject: f.SubjectName, Type: f.SubjectType,
		Values: make(map[string]float64, len(f.PropertyNames)+10)}
	if f.SubjectType == msg.SubjectTransform || f.SubjectType == msg.SubjectCamera {
		t := f.Transform
		in.Values["x"], in.Values["y"], in.Values["z"] = t.Translation.X, t.Translation.Y, t.Translation.Z
		in.Values["yaw"], in.Values["pitch"], in.Values["roll"] = eulerDegrees(t.Rotation)
		q := t.Rotation
		if n := math.Sqrt(q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W); n > 0 {
			in.Values["qw"], in.Values["qx"], in.Values["qy"], in.Values["qz"] = q.W/n, q.X/n, q.Y/n, q.Z/n
		}
	}
	for i, n := range f.PropertyNames {
		if i < len(f.PropertyValues) {
			in.Values[n] = float64(f.PropertyValues[i])
		}
	}
	return in
}

// eulerDegrees converts a rotation to yaw (about z), pitch (about y) and
// roll (about x), in degrees.
func eulerDegrees(q msg.Quaternion) (yaw, pitch, roll float64) {
	n := math.Sqrt(q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W)
	if n == 0 {
		return 0, 0, 0
	}
	x, y, z, w := q.X/n, q.Y/n, q.Z/n, q.W/n
	yaw = math.Atan2(2*(w*z+x*y), 1-2*(y*y+z*z))
	pitch = math.Asin(math.Max(-1, math.Min(1, 2*(w*y-z*x))))
	roll = math.Atan2(2*(w*x+y*z), 1-2*(x*x+y*y))
	const deg = 180 / math.Pi
	return yaw * deg, pitch * deg, roll * deg
}

// BusInput turns a RouterInput from the bus into an input.
func BusInput(m msg.RouterInput) Input {
	in := Input{Source: m.Source, Subject: m.Subject, Target: m.Target, Command: m.Command,
		Values: make(map[string]float64, len(m.Values))}
	for k, v := range m.Values {
		in.Values[k] = float64(v)
	}
	return in
}
