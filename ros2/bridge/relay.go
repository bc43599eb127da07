package bridge

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// Endpoints are the bus names a bridge uses: the topics it reads (Out),
// the topics it publishes (In) and the services it calls. Services
// chosen per request (a node's gpio_probe) are not listed.
type Endpoints struct {
	Out, In, Services []string
}

// BusEndpoints lists the bus names a bridge of the role instances roles
// (Options.Roles: nil means DefaultRoles) and the node middlewares
// motorNodes (Options.MotorNodes: nil means DefaultMotorNodes) uses: the
// names inside its robot namespace, the same whatever the robot id.
func BusEndpoints(roles, motorNodes []string) Endpoints {
	b := &Bridge{o: Options{Roles: roles, MotorNodes: motorNodes}}
	var e Endpoints
	seen := map[string]bool{}
	for _, t := range b.topics() {
		if t.Out && !seen[t.busTopic()] {
			seen[t.busTopic()] = true
			e.Out = append(e.Out, t.busTopic())
		}
		if t.In != nil {
			topic, _, err := t.In(map[string]any{"target_positions": []any{0.0}})
			if err == nil && !seen[topic] {
				seen[topic] = true
				e.In = append(e.In, topic)
			}
		}
	}
	e.Out = append(e.Out, msg.TopicAllNodeStatus)
	for _, s := range b.services() {
		if s.Bus != "" {
			e.Services = append(e.Services, s.Bus)
		}
	}
	return e
}

// RelayOptions configures Relay.
type RelayOptions struct {
	// Robot is the robot's bus; Remote the bus the bridge process joins
	// (a NATS broker the simulator starts for it).
	Robot, Remote bus.Bus
	Exec          *executor.Executor
	// NodeIDs are the nodes whose own services (gpio_probe) are relayed.
	NodeIDs []string
	// Roles and MotorNodes are the bridge's Options.Roles and
	// Options.MotorNodes, whose names are relayed; nil means
	// DefaultRoles and DefaultMotorNodes.
	Roles, MotorNodes []string
	// CallTimeout bounds a relayed service call; 0 means 5 s.
	CallTimeout time.Duration
	// ClockPeriod is how often, in the executor's (simulated) time, the
	// simulation's clock goes to the bridge on SimClockTopic (the bridge
	// runs with Options.Clock SimClock); 0 means 10 ms.
	ClockPeriod time.Duration
	// WallClock, set when the simulation is paced to the wall clock
	// (real-time speed), reads the wall clock: each clock sample then
	// carries the wall-clock time of its instant, on which the bridge
	// stamps.
	WallClock func() time.Time
	Log       *slog.Logger
}

// Relay carries a bridge's endpoints between two buses: the bridge's
// state topics from Robot to Remote, its commands from Remote to Robot,
// and its service calls from Remote to Robot; and it publishes the
// simulation's clock (the executor's) on Remote's SimClockTopic every
// ClockPeriod. saint-sim, whose robot
// runs on an in-process bus, uses it to give saint-ros2 a NATS broker.
// The payloads are passed through as they are. Call it on Exec's
// goroutine or before Exec runs; stop undoes it.
func Relay(o RelayOptions) (stop func(), err error) {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 5 * time.Second
	}
	if o.ClockPeriod <= 0 {
		o.ClockPeriod = 10 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	var subs []bus.Subscription
	stop = func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	forward := func(from, to bus.Bus, topic string) error {
		s, err := from.Subscribe(topic, bus.QoS{}, o.Exec, func(m bus.Msg) {
			if err := to.Publish(m.Topic, json.RawMessage(m.Data)); err != nil {
				o.Log.Warn("relay: publish failed", "topic", m.Topic, "err", err)
			}
		})
		if err == nil {
			subs = append(subs, s)
		}
		return err
	}
	e := BusEndpoints(o.Roles, o.MotorNodes)
	for _, t := range e.Out {
		if err := forward(o.Robot, o.Remote, t); err != nil {
			stop()
			return nil, err
		}
	}
	for _, t := range e.In {
		if err := forward(o.Remote, o.Robot, t); err != nil {
			stop()
			return nil, err
		}
	}
	services := e.Services
	for _, id := range o.NodeIDs {
		services = append(services, msg.NodeGPIOProbeService(id))
	}
	for _, name := range services {
		name := name
		s, err := o.Remote.Serve(name, o.Exec, func(req bus.Msg, reply bus.Reply) {
			o.Robot.CallAsync(name, json.RawMessage(req.Data), o.CallTimeout, o.Exec, func(m bus.Msg, err error) {
				if err != nil {
					reply(nil, err)
					return
				}
				reply(json.RawMessage(m.Data), nil)
			})
		})
		if err != nil {
			stop()
			return nil, err
		}
		subs = append(subs, s)
	}
	publishClock := func() {
		sample := SimClockSample{Time: msg.TimeOf(o.Exec.Now())}
		if o.WallClock != nil {
			w := msg.TimeOf(o.WallClock())
			sample.Wall = &w
		}
		if err := o.Remote.Publish(SimClockTopic, sample); err != nil {
			o.Log.Debug("relay: publishing the simulation clock failed", "err", err)
		}
	}
	publishClock()
	clock := o.Exec.Every(o.ClockPeriod, publishClock)
	unsubscribe := stop
	return func() {
		clock.Stop()
		unsubscribe()
	}, nil
}
