package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saint-os/saint/hal/executor"
)

// RobotNamespace returns the namespace of the robot with id robotID,
// "/robot_{robotID}" as the PI Plus software names it, or "" when robotID
// is empty (no namespace). It checks that the id makes one name segment.
func RobotNamespace(robotID string) (string, error) {
	if robotID == "" {
		return "", nil
	}
	ns := "/robot_" + robotID
	if strings.Contains(robotID, "/") {
		return "", fmt.Errorf("bus: robot id %q: %w", robotID, &NameError{Kind: "topic", Name: ns, Reason: "a robot id is one name segment"})
	}
	if _, err := TopicSubject(ns, false); err != nil {
		return "", fmt.Errorf("bus: robot id %q: %w", robotID, err)
	}
	return ns, nil
}

// Namespaced is a Bus whose every topic and service name is inside a
// namespace on the wire: with namespace "/robot_7", Publish("/saint/head/cmd")
// sends on "/robot_7/saint/head/cmd", Serve("/request_control") answers
// "/robot_7/request_control", and messages are delivered with the namespace
// taken off again (Msg.Topic "/saint/head/cmd"). Code on a Namespaced bus is
// written exactly as on any other; two robots, each wrapping its processes'
// connections in its own namespace, share one broker without seeing each
// other's topics or services.
type Namespaced struct {
	b  Bus
	ns string

	topics  sync.Map // local topic → wire topic, for Publish
	nTopics atomic.Int64
}

var _ Bus = (*Namespaced)(nil)

// WithNamespace returns b inside namespace ns ("/robot_7", one or more
// segments). An empty ns returns b itself. The returned Bus owns b: Close
// closes it.
func WithNamespace(b Bus, ns string) (Bus, error) {
	if ns == "" {
		return b, nil
	}
	if _, err := TopicSubject(ns, false); err != nil {
		return nil, fmt.Errorf("bus: namespace: %w", err)
	}
	return &Namespaced{b: b, ns: ns}, nil
}

// WithRobotID is WithNamespace(b, RobotNamespace(robotID)): b itself when
// robotID is empty.
func WithRobotID(b Bus, robotID string) (Bus, error) {
	ns, err := RobotNamespace(robotID)
	if err != nil {
		return nil, err
	}
	return WithNamespace(b, ns)
}

// Namespace returns the namespace ("/robot_7").
func (n *Namespaced) Namespace() string { return n.ns }

// Inner returns the bus the names are sent on, outside the namespace.
func (n *Namespaced) Inner() Bus { return n.b }

// Logger returns the inner bus's logger, for the typed helpers.
func (n *Namespaced) Logger() *slog.Logger { return loggerOf(n.b) }

// wire checks a name by the rules of names outside any namespace (so that
// "/#" or "/_srv/x" are refused here as everywhere, naming the caller's
// name) and puts it inside the namespace.
func (n *Namespaced) wire(kind, name string, filter bool) (string, error) {
	prefix := ""
	if kind == "service" {
		prefix = serviceToken + "."
	}
	if _, _, err := toSubject(kind, name, filter, prefix); err != nil {
		return "", err
	}
	return n.ns + name, nil
}

// publishTopic is wire("topic", topic, false), remembered as Conn
// remembers subjects: Publish is the hot path.
func (n *Namespaced) publishTopic(topic string) (string, error) {
	if w, ok := n.topics.Load(topic); ok {
		return w.(string), nil
	}
	w, err := n.wire("topic", topic, false)
	if err == nil && n.nTopics.Add(1) <= maxSubjects {
		n.topics.Store(topic, w)
	}
	return w, err
}

// local takes the namespace off a name delivered from the wire.
func (n *Namespaced) local(name string) string {
	if rest, ok := strings.CutPrefix(name, n.ns); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return name
}

// deliver passes m on with its name inside the namespace; Msg's in-process
// value is kept (see Msg).
func (n *Namespaced) deliver(m Msg) Msg {
	m.Topic = n.local(m.Topic)
	return m
}

// localErr gives a *RemoteError the caller's own service name.
func (n *Namespaced) localErr(err error) error {
	var re *RemoteError
	if errors.As(err, &re) {
		return &RemoteError{Service: n.local(re.Service), Message: re.Message}
	}
	return err
}

// Publish implements Bus.
func (n *Namespaced) Publish(topic string, v any) error {
	w, err := n.publishTopic(topic)
	if err != nil {
		return err
	}
	return n.b.Publish(w, v)
}

// Subscribe implements Bus. Wildcards stay inside the namespace: "/saint/#"
// sees the robot's own topics only.
func (n *Namespaced) Subscribe(topic string, qos QoS, ex *executor.Executor, h Handler) (Subscription, error) {
	w, err := n.wire("topic", topic, true)
	if err != nil {
		return nil, err
	}
	return n.b.Subscribe(w, qos, ex, func(m Msg) { h(n.deliver(m)) })
}

// Serve implements Bus. Wildcards stay inside the namespace, and a
// request's Msg.Topic is the name it was sent to without the namespace.
func (n *Namespaced) Serve(service string, ex *executor.Executor, h ServiceHandler) (Subscription, error) {
	w, err := n.wire("service", service, true)
	if err != nil {
		return nil, err
	}
	return n.b.Serve(w, ex, func(req Msg, reply Reply) { h(n.deliver(req), reply) })
}

// Call implements Bus.
func (n *Namespaced) Call(ctx context.Context, service string, req, resp any) error {
	w, err := n.wire("service", service, false)
	if err != nil {
		return err
	}
	return n.localErr(n.b.Call(ctx, w, req, resp))
}

// CallAsync implements Bus.
func (n *Namespaced) CallAsync(service string, req any, timeout time.Duration, ex *executor.Executor, done func(Msg, error)) {
	w, err := n.wire("service", service, false)
	if err != nil {
		ex.Post(func() { done(Msg{}, err) })
		return
	}
	n.b.CallAsync(w, req, timeout, ex, func(m Msg, err error) {
		done(n.deliver(m), n.localErr(err))
	})
}

// Close implements Bus: it closes the inner bus.
func (n *Namespaced) Close() error { return n.b.Close() }
