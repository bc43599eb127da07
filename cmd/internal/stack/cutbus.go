package stack

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
)

// cutBus is a bus connection that can be cut and reconnected, as a cable
// pulled from a switch would: while cut, publications are dropped, nothing
// is delivered, and calls fail as if nobody answered. Subscriptions made
// before the cut come back when it is restored.
type cutBus struct {
	bus.Bus
	cut atomic.Bool
}

func (c *cutBus) setCut(cut bool) { c.cut.Store(cut) }

func (c *cutBus) Publish(topic string, v any) error {
	if c.cut.Load() {
		return nil
	}
	return c.Bus.Publish(topic, v)
}

func (c *cutBus) Subscribe(topic string, qos bus.QoS, ex *executor.Executor, h bus.Handler) (bus.Subscription, error) {
	return c.Bus.Subscribe(topic, qos, ex, func(m bus.Msg) {
		if !c.cut.Load() {
			h(m)
		}
	})
}

func (c *cutBus) Serve(service string, ex *executor.Executor, h bus.ServiceHandler) (bus.Subscription, error) {
	return c.Bus.Serve(service, ex, func(req bus.Msg, reply bus.Reply) {
		if c.cut.Load() {
			// The caller times out, as it would with the server unreachable.
			return
		}
		h(req, reply)
	})
}

func (c *cutBus) Call(ctx context.Context, service string, req, resp any) error {
	if c.cut.Load() {
		return fmt.Errorf("%s: %w (connection cut)", service, bus.ErrNoResponders)
	}
	return c.Bus.Call(ctx, service, req, resp)
}

func (c *cutBus) CallAsync(service string, req any, timeout time.Duration, ex *executor.Executor, done func(bus.Msg, error)) {
	if c.cut.Load() {
		ex.Post(func() { done(bus.Msg{}, fmt.Errorf("%s: %w (connection cut)", service, bus.ErrNoResponders)) })
		return
	}
	c.Bus.CallAsync(service, req, timeout, ex, done)
}
