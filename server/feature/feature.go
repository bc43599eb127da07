package feature

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/ws"
)

// Component is a part of the server with a lifecycle on the executor:
// Start and Stop run there.
type Component interface {
	Start() error
	Stop()
}

// Funcs makes a Component of two functions; either may be nil.
type Funcs struct {
	OnStart func() error
	OnStop  func()
}

// Start implements Component.
func (f Funcs) Start() error {
	if f.OnStart == nil {
		return nil
	}
	return f.OnStart()
}

// Stop implements Component.
func (f Funcs) Stop() {
	if f.OnStop != nil {
		f.OnStop()
	}
}

// Options are what the server lends its features.
type Options struct {
	Gateway *ws.Gateway
	Exec    *executor.Executor
	Bus     bus.Bus
	Log     *slog.Logger
	// Protect guards an HTTP handler with the API token; nil serves it
	// unguarded.
	Protect func(http.Handler) http.Handler
}

// Host is where features register. Register functions run before the
// server starts, from one goroutine.
type Host struct {
	Gateway *ws.Gateway
	Exec    *executor.Executor
	Bus     bus.Bus
	Log     *slog.Logger

	protect    func(http.Handler) http.Handler
	mux        *http.ServeMux
	components []Component
	closeMu    sync.Mutex
	closers    []func()
}

// NewHost returns a host with no features.
func NewHost(o Options) *Host {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Protect == nil {
		o.Protect = func(h http.Handler) http.Handler { return h }
	}
	return &Host{Gateway: o.Gateway, Exec: o.Exec, Bus: o.Bus, Log: o.Log, protect: o.Protect, mux: http.NewServeMux()}
}

// HandleHTTP serves pattern (http.ServeMux syntax) on the server's HTTP
// listener behind the API token.
func (h *Host) HandleHTTP(pattern string, handler http.Handler) {
	h.mux.Handle(pattern, h.protect(handler))
}

// HTTP returns the handler of every route added with HandleHTTP.
func (h *Host) HTTP() *http.ServeMux { return h.mux }

// Add registers c to be started and stopped with the server.
func (h *Host) Add(c Component) { h.components = append(h.components, c) }

// Components lists the components in the order they were added.
func (h *Host) Components() []Component { return append([]Component(nil), h.components...) }

// OnClose registers f to run when the server begins to shut down, before
// it waits for open HTTP requests: long-lived responses end there.
func (h *Host) OnClose(f func()) {
	h.closeMu.Lock()
	h.closers = append(h.closers, f)
	h.closeMu.Unlock()
}

// Close runs the functions given to OnClose, once each.
func (h *Host) Close() {
	h.closeMu.Lock()
	fs := h.closers
	h.closers = nil
	h.closeMu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Topics declares WebSocket topics clients may subscribe to.
func (h *Host) Topics(topics ...string) { h.Gateway.SetTopics(topics...) }

// Do runs f on the executor and waits for it (WebSocket handlers run on
// their own goroutines; the features' state lives on the executor).
func (h *Host) Do(ctx context.Context, f func()) error { return h.Exec.Do(ctx, f) }

// Await runs start on h's executor and waits until it calls finish, or
// ctx ends.
func Await[T any](ctx context.Context, h *Host, start func(finish func(T, error))) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	h.Exec.Post(func() {
		start(func(v T, err error) { ch <- result{v, err} })
	})
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Forward adds a component that publishes every message of busTopic to
// the WebSocket topic wsTopic (wrap, if not nil, rewrites the value first).
// Each bus topic is a stream of its own at the gateway
// (ws.Gateway.PublishStream): when busTopic is a wildcard (every node's
// status) or several bus topics share wsTopic (both arms'), a client's
// rate_hz limits each node's or arm's updates on their own rather than
// keeping whichever published last before each slot.
func (h *Host) Forward(busTopic, wsTopic string, wrap func(any) any) {
	// Values (bus.SubscribeValues) leave the encoding to the gateway, which
	// encodes only for subscribed clients: in one process nothing is
	// JSON-encoded for a state no client watches.
	h.SubscribeValues(busTopic, FeedQoS, func(topic string, v any) {
		if wrap != nil {
			v = wrap(v)
		}
		h.Gateway.PublishStream(wsTopic, topic, v)
	})
}

// SubscribeValues adds a component that subscribes f to topic on the
// executor with each message as a value to encode (bus.SubscribeValues).
func (h *Host) SubscribeValues(topic string, qos bus.QoS, f func(topic string, v any)) {
	h.Add(&subscription{subscribe: func() (bus.Subscription, error) {
		return bus.SubscribeValues(h.Bus, topic, qos, h.Exec, f)
	}})
}

// SubscribeRaw adds a component that subscribes f to topic on the
// executor with the messages as they came, for handlers that pass them on
// without decoding them; the others use Subscribe.
func (h *Host) SubscribeRaw(topic string, qos bus.QoS, f bus.Handler) {
	h.Add(&subscription{subscribe: func() (bus.Subscription, error) {
		return h.Bus.Subscribe(topic, qos, h.Exec, f)
	}})
}

// FeedQoS is the QoS of topics forwarded to WebSocket clients: the
// latest samples matter, not every one.
var FeedQoS = bus.QoS{Reliability: bus.BestEffort, Depth: 16}

// Subscribe adds a component that subscribes f to topic on the executor,
// with each message decoded into a T; one that does not decode is counted
// and logged (bus.SubscribeJSON), never passed on.
func Subscribe[T any](h *Host, topic string, qos bus.QoS, f func(topic string, v T)) {
	h.Add(&subscription{subscribe: func() (bus.Subscription, error) {
		return bus.SubscribeJSON(h.Bus, topic, qos, h.Exec, f)
	}})
}

// Serve adds a component that serves a bus service with typed requests
// and responses (bus.ServeJSON).
func Serve[Req, Resp any](h *Host, service string, f func(req Req, reply func(Resp, error))) {
	h.Add(&subscription{subscribe: func() (bus.Subscription, error) {
		return bus.ServeJSON(h.Bus, service, h.Exec, f)
	}})
}

// subscription is a bus subscription as a Component.
type subscription struct {
	subscribe func() (bus.Subscription, error)
	sub       bus.Subscription
}

func (s *subscription) Start() error {
	sub, err := s.subscribe()
	if err != nil {
		return err
	}
	s.sub = sub
	return nil
}

func (s *subscription) Stop() {
	if s.sub != nil {
		_ = s.sub.Unsubscribe()
		s.sub = nil
	}
}
