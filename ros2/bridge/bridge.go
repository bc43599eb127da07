package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/urdf"
)

// QoS is the DDS QoS of one endpoint, as ROS 2's profiles set it.
type QoS struct {
	Reliable bool // reliable, or best effort
	Depth    int  // keep-last depth
	// TransientLocal keeps the last samples for late joiners; otherwise
	// volatile, as every state topic here is.
	TransientLocal bool
}

// ROS 2's profiles: the default (reliable, volatile, keep last 10) for
// state, commands and services, sensor data (best effort, keep last 5)
// for camera frames.
var (
	DefaultQoS    = QoS{Reliable: true, Depth: 10}
	SensorDataQoS = QoS{Reliable: false, Depth: 5}
)

// DDS is the participant the bridge writes and reads through. Samples are
// XCDR1 bytes with their encapsulation header.
type DDS interface {
	NewWriter(topic, typeName string, q QoS) (Writer, error)
	NewReader(topic, typeName string, q QoS, fn func(cdr []byte)) error
}

// Writer writes samples of one DDS topic.
type Writer interface {
	Write(cdr []byte) error
}

// Options configures a Bridge.
type Options struct {
	Bus  bus.Bus
	Exec *executor.Executor // the bus callbacks and the commands run here
	DDS  DDS
	// Registry is the interface definitions; nil means ros2.Load().
	Registry *ros2.Registry
	// Filter selects the ROS names bridged.
	Filter Filter
	// RobotID is the robot namespace: every ROS 2 name the bridge makes
	// is under /robot_{id} ("7": /robot_7/saint/head/state, DDS topic
	// "rt/robot_7/saint/head/state"), as the PI Plus launch puts every
	// node of a robot under robot_{id}; empty for none. Bus must be inside
	// the same namespace (bus.WithRobotID): the bus names the bridge uses,
	// and the Filter's patterns, are the names inside it.
	RobotID string
	// Roles are the role instances the robot has, as prefixes
	// ("/saint/head", "/saint/arms/left", "/saint/limb/neck"): the
	// topics and services of a role — the head's state and commands, an
	// arm's, the tracks' odometry and cmd_vel, the balancing base's, the
	// console's — are bridged only when it is listed; the root
	// middleware's names, the nodes', the router's and the server's
	// always are. RolesOf gives a robot configuration's; nil means
	// DefaultRoles (the reference robot's), an empty list none. A listed
	// role that serves a motor middleware (roles/rolespec) has its
	// middleware's names bridged, MotorNodes listing it or not: a
	// humanoid's limb, for which the bridge has no other names, is
	// reached through it.
	Roles []string
	// MotorNodes are the prefixes of the node middlewares whose names the
	// bridge carries beside the root's: request_control, release_control,
	// reset_zero, get_available_motors, control_command, joint_states and
	// session_status under each ("/saint/limb/leg_left/joint_states").
	// MotorNodesOf gives a robot configuration's; nil means
	// DefaultMotorNodes, an empty list none beyond the Roles' own.
	MotorNodes []string
	// Model is the robot's URDF model (urdf.Reference, urdf.Humanoid):
	// when set, the bridge publishes it on /robot_description and the
	// transforms of its links on /tf and /tf_static, as
	// robot_state_publisher does; nil publishes none.
	Model *urdf.Robot
	// Clock is the clock the bus's times are on: WallClock (the robot) or
	// SimClock (saint-sim, whose relay publishes SimClockTopic). See
	// ClockMode.
	Clock ClockMode
	// CallTimeout bounds a service call on the bus; 0 means 5 s.
	CallTimeout time.Duration
	Log         *slog.Logger
}

// Stats counts what crossed the bridge.
type Stats struct {
	Out      uint64 // bus messages written to DDS
	In       uint64 // DDS samples put on the bus
	Calls    uint64 // service calls answered
	Rejected uint64 // samples and messages dropped as bad input
}

// Bridge maps the bus and a DDS domain onto each other.
type Bridge struct {
	o     Options
	ns    string // the robot namespace, "/robot_7"; "" for none
	reg   *ros2.Registry
	log   *slog.Logger
	mu    sync.Mutex
	subs  []bus.Subscription
	nodes map[string]Writer // node status writers by bus topic
	clock rosClock          // on the executor only
	stats struct{ out, in, calls, rejected atomic.Uint64 }
}

// New checks o and returns a bridge that has not started.
func New(o Options) (*Bridge, error) {
	if o.Bus == nil || o.Exec == nil || o.DDS == nil {
		return nil, errors.New("bridge: Options need Bus, Exec and DDS")
	}
	if err := o.Filter.Validate(); err != nil {
		return nil, err
	}
	if err := checkPrefixes("Roles", o.Roles); err != nil {
		return nil, err
	}
	if err := checkPrefixes("MotorNodes", o.MotorNodes); err != nil {
		return nil, err
	}
	ns, err := bus.RobotNamespace(o.RobotID)
	if err != nil {
		return nil, fmt.Errorf("bridge: Options.RobotID: %w", err)
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	reg := o.Registry
	if reg == nil {
		var err error
		if reg, err = ros2.Load(); err != nil {
			return nil, err
		}
	}
	if o.Clock != WallClock && o.Clock != SimClock {
		return nil, fmt.Errorf("bridge: Options.Clock %d: want WallClock or SimClock", o.Clock)
	}
	return &Bridge{o: o, ns: ns, reg: reg, log: o.Log.With("component", "ros2"), nodes: map[string]Writer{},
		clock: rosClock{mode: o.Clock}}, nil
}

// Stats returns the counts so far. Safe from any goroutine.
func (b *Bridge) Stats() Stats {
	return Stats{Out: b.stats.out.Load(), In: b.stats.in.Load(), Calls: b.stats.calls.Load(), Rejected: b.stats.rejected.Load()}
}

// Start creates the DDS endpoints and the bus subscriptions of every
// bridged topic and service.
func (b *Bridge) Start() error {
	if b.o.Clock == SimClock && b.o.Filter.Bridged(ClockTopic) {
		if err := b.startClock(); err != nil {
			return err
		}
	}
	for _, t := range b.topics() {
		if !b.o.Filter.Bridged(t.Name) {
			continue
		}
		if err := b.startTopic(t); err != nil {
			b.Stop()
			return err
		}
	}
	if b.o.Filter.Bridged("/saint/nodes/*/status") || b.o.Filter.Bridged("/saint/nodes/x/status") {
		if err := b.startNodeStatus(); err != nil {
			b.Stop()
			return err
		}
	}
	for _, s := range b.services() {
		if !b.o.Filter.Bridged(s.Name) {
			continue
		}
		if err := b.startService(s); err != nil {
			b.Stop()
			return err
		}
	}
	if b.o.Model != nil {
		if err := b.startModel(b.o.Model); err != nil {
			b.Stop()
			return err
		}
	}
	return nil
}

// Stop ends the bus subscriptions. The DDS endpoints belong to the
// participant, which its owner closes.
func (b *Bridge) Stop() {
	b.mu.Lock()
	subs := b.subs
	b.subs = nil
	b.mu.Unlock()
	for _, s := range subs {
		_ = s.Unsubscribe()
	}
}

func (b *Bridge) message(name string) *ros2.Message {
	m, ok := b.reg.Message(name)
	if !ok {
		panic("bridge: no interface " + name) // the tables below name only defined ones; a test checks
	}
	return m
}

// decodeJSON decodes a bus payload keeping integers exact.
func decodeJSON(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Topic is one bridged topic.
type Topic struct {
	Name string // the ROS 2 name; the DDS topic is "rt" + Name
	Bus  string // the bus topic; "" means Name
	Type string // the ROS 2 type, "nav_msgs/Odometry"
	QoS  QoS
	// Out topics go from the bus to DDS, through ToROS when the bus type
	// is not the ROS type's shape.
	Out   bool
	ToROS func(v map[string]any) (map[string]any, error)
	// BusType is the ROS 2 type the bus payload has the shape of when
	// ToROS converts it into another ("saint_os/PowerState" for a
	// BatteryState); "" when the bus topic has no type of its own here.
	BusType string
	// In topics go from DDS to the bus through In, which returns what to
	// publish where (the router's input, or the topic itself).
	In func(v map[string]any) (topic string, payload any, err error)
}

func (t Topic) busTopic() string {
	if t.Bus != "" {
		return t.Bus
	}
	return t.Name
}

func (b *Bridge) startTopic(t Topic) error {
	m := b.message(t.Type)
	dds := "rt" + b.rosName(t.Name)
	if t.Out {
		w, err := b.o.DDS.NewWriter(dds, m.DDSTypeName(), t.QoS)
		if err != nil {
			return err
		}
		sub, err := b.o.Bus.Subscribe(t.busTopic(), bus.QoS{Reliability: busReliability(t.QoS), Depth: t.QoS.Depth}, b.o.Exec, func(bm bus.Msg) {
			b.out(t, m, w, bm)
		})
		if err != nil {
			return err
		}
		b.addSub(sub)
		return nil
	}
	return b.o.DDS.NewReader(dds, m.DDSTypeName(), t.QoS, func(cdr []byte) {
		v, _, err := b.reg.Decode(m, cdr)
		if err != nil {
			b.reject("dropped a sample that does not decode", t.Name, err)
			return
		}
		topic, payload, err := t.In(v)
		if err != nil {
			b.reject("dropped a command", t.Name, err)
			return
		}
		b.o.Exec.Post(func() {
			if err := b.o.Bus.Publish(topic, payload); err != nil {
				b.log.Warn("publishing a ROS 2 command on the bus failed", "topic", t.Name, "bus_topic", topic, "err", err)
				return
			}
			b.stats.in.Add(1)
		})
	})
}

// rosName is the ROS 2 name of name, a name inside the robot namespace:
// name itself without a robot id, "/robot_7"+name with robot id 7.
func (b *Bridge) rosName(name string) string { return b.ns + name }

func busReliability(q QoS) bus.Reliability {
	if q.Reliable {
		return bus.Reliable
	}
	return bus.BestEffort
}

func (b *Bridge) addSub(s bus.Subscription) {
	b.mu.Lock()
	b.subs = append(b.subs, s)
	b.mu.Unlock()
}

func (b *Bridge) reject(what, name string, err error) {
	b.stats.rejected.Add(1)
	b.log.Warn(what, "topic", name, "err", err)
}

func (b *Bridge) out(t Topic, m *ros2.Message, w Writer, bm bus.Msg) {
	v, err := decodeJSON(bm.Data)
	if err == nil && t.ToROS != nil {
		v, err = t.ToROS(v)
	}
	if err == nil && !b.restamp(m, v) {
		return // the simulation's clock is not known yet: no stamp to give
	}
	var cdr []byte
	if err == nil {
		cdr, err = b.reg.Encode(m, v, nil)
	}
	if err == nil {
		err = w.Write(cdr)
	}
	if err != nil {
		b.reject("dropped a bus message", t.Name, err)
		return
	}
	b.stats.out.Add(1)
}

// startNodeStatus bridges every node's status topic, creating a writer
// per node as it first reports.
func (b *Bridge) startNodeStatus() error {
	m := b.message("saint_os/NodeStatus")
	sub, err := b.o.Bus.Subscribe(msg.TopicAllNodeStatus, bus.QoS{}, b.o.Exec, func(bm bus.Msg) {
		w, ok := b.nodes[bm.Topic]
		if !ok {
			id := strings.TrimSuffix(strings.TrimPrefix(bm.Topic, "/saint/nodes/"), "/status")
			name := "/saint/nodes/" + ROSNodeName(id) + "/status"
			if !b.o.Filter.Bridged(name) {
				b.nodes[bm.Topic] = nil
				return
			}
			var err error
			if w, err = b.o.DDS.NewWriter("rt"+b.rosName(name), m.DDSTypeName(), DefaultQoS); err != nil {
				b.log.Warn("cannot bridge a node's status", "topic", name, "err", err)
				b.nodes[bm.Topic] = nil
				return
			}
			b.nodes[bm.Topic] = w
		}
		if w != nil {
			b.out(Topic{Name: bm.Topic}, m, w, bm)
		}
	})
	if err != nil {
		return err
	}
	b.addSub(sub)
	return nil
}

// Service is one bridged service.
type Service struct {
	Name string // the ROS 2 name; DDS topics "rq"+Name+"Request", "rr"+Name+"Reply"
	Type string // "saint_os/AdoptNode"
	// Bus is the bus service called with the request; BusFor, when set,
	// chooses it from the request instead (a node's own service).
	Bus    string
	BusFor func(req map[string]any) (string, error)
	// Wrap puts the bus's response into the ROS response's field Wrap
	// (GetSystemStatus's "status"); "" when they have the same shape.
	Wrap string
}

func (b *Bridge) startService(s Service) error {
	svc, ok := b.reg.Service(s.Type)
	if !ok {
		return fmt.Errorf("bridge: no service type %s", s.Type)
	}
	w, err := b.o.DDS.NewWriter("rr"+b.rosName(s.Name)+"Reply", svc.Response.DDSTypeName(), DefaultQoS)
	if err != nil {
		return err
	}
	return b.o.DDS.NewReader("rq"+b.rosName(s.Name)+"Request", svc.Request.DDSTypeName(), DefaultQoS, func(cdr []byte) {
		req, hdr, err := b.reg.Decode(svc.Request, cdr)
		if err != nil {
			b.reject("dropped a service request that does not decode", s.Name, err)
			return
		}
		b.o.Exec.Post(func() { b.call(s, svc, w, req, hdr) })
	})
}

// call runs on the executor: it calls the bus service and writes the
// reply, which carries the request's header.
func (b *Bridge) call(s Service, svc *ros2.Service, w Writer, req map[string]any, hdr ros2.RequestHeader) {
	reply := func(resp map[string]any) {
		b.restamp(svc.Response, resp) // unchanged while the clock is unknown: an answer is better than none
		cdr, err := b.reg.Encode(svc.Response, resp, &hdr)
		if err == nil {
			err = w.Write(cdr)
		}
		if err != nil {
			b.log.Warn("cannot write a service reply", "service", s.Name, "err", err)
			return
		}
		b.stats.calls.Add(1)
	}
	fail := func(err error) {
		b.log.Warn("ROS 2 service call failed", "service", s.Name, "err", err)
		reply(map[string]any{"success": false, "message": err.Error()})
	}
	target := s.Bus
	if s.BusFor != nil {
		var err error
		if target, err = s.BusFor(req); err != nil {
			fail(err)
			return
		}
	}
	b.o.Bus.CallAsync(target, req, b.o.CallTimeout, b.o.Exec, func(m bus.Msg, err error) {
		if errors.Is(err, bus.ErrNoResponders) {
			fail(fmt.Errorf("%s: nobody answers %s (no such node, or it is offline)", s.Name, target))
			return
		}
		if err != nil {
			fail(err)
			return
		}
		resp, err := decodeJSON(m.Data)
		if err != nil {
			fail(fmt.Errorf("%s: the bus's response does not decode: %w", s.Name, err))
			return
		}
		if s.Wrap != "" {
			resp = map[string]any{s.Wrap: resp}
		}
		reply(resp)
	})
}
