package bridge

import (
	"encoding/json"
	"math"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/ros2"
)

// ClockMode says which clock the times on the bus are on, and so what the
// bridge does to the stamps it puts on DDS.
type ClockMode int

const (
	// WallClock: the bus carries wall-clock time, as on the robot. Stamps
	// pass unchanged and nothing is published on /clock.
	WallClock ClockMode = iota
	// SimClock: the bus carries the simulation's clock (saint-sim's
	// virtual clock, which starts at 2026-01-01), which the relay
	// publishes on SimClockTopic. The bridge publishes it on /clock
	// (rosgraph_msgs/Clock), as a ROS 2 simulator does for nodes run with
	// use_sim_time:=true, and stamps on it. When the simulation is paced
	// to the wall clock (saint-sim --speed 1) every stamp, and /clock, is
	// the wall-clock time the simulation instant was paced to, so that
	// nodes on wall time (the ROS 2 default) can use them too.
	SimClock
)

// SimClockTopic carries SimClockSample from saint-sim's relay to the
// bridge, inside the robot namespace like every bridged topic.
const SimClockTopic = "/saint/sim/clock"

// SimClockSample is the simulation's clock at one instant.
type SimClockSample struct {
	// Time is the simulation's clock.
	Time msg.Time `json:"time"`
	// Wall is the wall-clock time the simulation is paced to at Time when
	// it runs at real-time speed; nil when it is not paced to the wall
	// clock (faster or slower than real time, or as fast as possible).
	Wall *msg.Time `json:"wall,omitempty"`
}

// ClockTopic is ROS 2's clock topic.
const ClockTopic = "/clock"

// ClockQoS is rclcpp's ClockQoS: best effort, keep last 1, volatile.
var ClockQoS = QoS{Reliable: false, Depth: 1}

// rosClock maps the bus's times to ROS 2 times. It is used on the
// executor only.
type rosClock struct {
	mode  ClockMode
	known bool          // a SimClockSample has arrived
	paced bool          // the latest one had Wall
	shift time.Duration // Wall − Time of the latest one
	sim   time.Time     // the latest one's Time
	now   time.Time     // the latest one's ROS time
}

// toROS is the ROS 2 time of bus time t; false while the simulation's
// clock is not known yet.
func (c *rosClock) toROS(t time.Time) (time.Time, bool) {
	switch {
	case c.mode == WallClock:
		return t, true
	case !c.known:
		return time.Time{}, false
	case c.paced:
		return t.Add(c.shift), true
	}
	return t, true
}

// observe takes a clock sample and returns the ROS 2 time it stands for.
func (c *rosClock) observe(s SimClockSample) time.Time {
	sim := s.Time.Time()
	c.known = true
	c.paced = s.Wall != nil
	c.shift = 0
	if c.paced {
		c.shift = s.Wall.Time().Sub(sim)
	}
	c.sim = sim
	c.now = sim.Add(c.shift)
	return c.now
}

// epochSeconds are the float64 fields of saint_os messages that hold a
// time as seconds since the Unix epoch (0: never).
var epochSeconds = map[string]bool{
	"saint_os/SystemStatus.timestamp":     true,
	"saint_os/NodeStatus.timestamp":       true,
	"saint_os/ConsoleInput.timestamp":     true,
	"saint_os/ConsoleAlert.timestamp":     true,
	"saint_os/RouteStatus.timestamp":      true,
	"saint_os/LiveLinkFrame.timestamp":    true,
	"saint_os/LiveLinkSubject.last_frame": true,
	"saint_os/RouteState.last_input":      true,
}

// restamp puts every time in v, a value of message m about to go on DDS,
// on the ROS 2 clock: each builtin_interfaces/Time (header stamps) and
// each saint_os time in seconds since the epoch, at any depth. It returns
// false while the simulation's clock is not known.
func (b *Bridge) restamp(m *ros2.Message, v map[string]any) bool {
	if b.clock.mode == WallClock {
		return true
	}
	if !b.clock.known {
		return false
	}
	if !b.clock.paced {
		return true // the bus's times are the simulation's: /clock's
	}
	b.restampFields(m, v)
	return true
}

func (b *Bridge) restampFields(m *ros2.Message, v map[string]any) {
	for _, f := range m.Fields {
		x, ok := v[f.Name]
		if !ok {
			continue
		}
		switch {
		case f.Type.Name == "builtin_interfaces/Time" && !f.Type.Sequence && f.Type.Size == 0:
			if t, ok := x.(map[string]any); ok {
				sec, nsec := number(t["sec"]), number(t["nanosec"])
				ros, _ := b.clock.toROS(time.Unix(int64(sec), int64(nsec)))
				v[f.Name] = timeValue(ros)
			}
		case f.Type.Name == "float64" && !f.Type.Sequence && f.Type.Size == 0 && epochSeconds[m.FullName()+"."+f.Name]:
			if s := number(x); s != 0 {
				ros, _ := b.clock.toROS(time.Unix(0, int64(math.Round(s*1e9))))
				v[f.Name] = float64(ros.UnixNano()) / 1e9
			}
		case !f.Type.Primitive():
			sub, ok := b.reg.Message(f.Type.Name)
			if !ok {
				continue
			}
			if f.Type.Sequence || f.Type.Size > 0 {
				if xs, ok := x.([]any); ok {
					for _, e := range xs {
						if em, ok := e.(map[string]any); ok {
							b.restampFields(sub, em)
						}
					}
				}
			} else if xm, ok := x.(map[string]any); ok {
				b.restampFields(sub, xm)
			}
		}
	}
}

// number reads a JSON number as decodeJSON (json.Number) or a converter
// (float64, int) left it.
func number(x any) float64 {
	switch n := x.(type) {
	case json.Number:
		f, _ := n.Float64()
		return f
	case float64:
		return n
	case float32:
		return float64(n)
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case uint32:
		return float64(n)
	}
	return 0
}

func timeValue(t time.Time) map[string]any {
	s := msg.TimeOf(t)
	return map[string]any{"sec": float64(s.Sec), "nanosec": float64(s.Nanosec)}
}

// busNow is the bus's time now, for what the bridge stamps itself
// (restamp then maps it as it maps the bus's own stamps): the executor's
// clock on the robot, the latest simulation clock sample in simulation.
func (b *Bridge) busNow() time.Time {
	if b.clock.mode == WallClock {
		return b.o.Exec.Now()
	}
	return b.clock.sim
}

// startClock follows the simulation's clock: each sample updates the
// mapping and is written on /clock.
func (b *Bridge) startClock() error {
	m := b.message("rosgraph_msgs/Clock")
	// /clock is the domain's, outside any robot namespace: ROS 2 nodes
	// run with use_sim_time:=true read /clock.
	w, err := b.o.DDS.NewWriter("rt"+ClockTopic, m.DDSTypeName(), ClockQoS)
	if err != nil {
		return err
	}
	sub, err := b.o.Bus.Subscribe(SimClockTopic, bus.QoS{Reliability: bus.BestEffort, Depth: 1}, b.o.Exec, func(bm bus.Msg) {
		var s SimClockSample
		if err := json.Unmarshal(bm.Data, &s); err != nil {
			b.reject("dropped a simulation clock sample", SimClockTopic, err)
			return
		}
		if !b.clock.known {
			b.log.Info("following the simulation's clock", "paced_to_wall_clock", s.Wall != nil)
		}
		now := b.clock.observe(s)
		cdr, err := b.reg.Encode(m, map[string]any{"clock": timeValue(now)}, nil)
		if err == nil {
			err = w.Write(cdr)
		}
		if err != nil {
			b.reject("cannot write /clock", ClockTopic, err)
		}
	})
	if err != nil {
		return err
	}
	b.addSub(sub)
	return nil
}
