package rolekit

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// Kit is a role's bookkeeping: its Env, the pins it claimed, and what
// Stop must undo. A role embeds a Kit, starts with Begin and stops with
// StopAll. Its methods run on the role's executor.
type Kit struct {
	Env  Env
	Pins *Pins

	subs    []bus.Subscription
	timers  []*executor.Timer
	cleanup []func()
}

// Begin takes env (a nil Log discards; the node tags it with the role),
// claims the pins of the configuration's gpio_mapping and runs open, where
// the role configures itself, opens its devices, subscribes and starts its
// timers. When open fails, Begin undoes it all (StopAll) and returns the
// error: a role that did not start holds nothing.
func (k *Kit) Begin(env Env, open func() error) error {
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	p, err := claimPins(env.Board, env.Config)
	if err != nil {
		return err
	}
	k.Env, k.Pins = env, p
	if err := open(); err != nil {
		k.StopAll()
		return err
	}
	return nil
}

// Subscribe delivers the messages of topic, decoded into T, to h on the
// role's executor until StopAll. Only a T is one (bus.SubscribeStrictJSON):
// a message with a field T does not have or without one of T's required
// fields (a service's reply envelope, say) is not read as T's zero value
// but counted (DecodeErrors) and logged by the bus, the first time and
// then at each power of two, and h does not see it.
func Subscribe[T any](k *Kit, topic string, qos bus.QoS, h func(T)) error {
	sub, err := bus.SubscribeStrictJSON(k.Env.Bus, topic, qos, k.Env.Exec, func(_ string, v T) { h(v) })
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", topic, err)
	}
	k.subs = append(k.subs, sub)
	return nil
}

// SubscribeState is Subscribe for a topic the role only reads to show or
// watch (another part's status, not a command it acts on): fields a
// newer publisher added are ignored rather than the message refused, so a
// server or node updated before this one does not blank what it shows.
// What does not decode at all is counted and logged as with Subscribe.
// The bus's permissions, not the decoder, keep such topics to their
// publishers.
func SubscribeState[T any](k *Kit, topic string, qos bus.QoS, h func(T)) error {
	sub, err := bus.SubscribeJSON(k.Env.Bus, topic, qos, k.Env.Exec, func(_ string, v T) { h(v) })
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", topic, err)
	}
	k.subs = append(k.subs, sub)
	return nil
}

// Serve answers service with h until StopAll; a request that does not
// decode into Req is answered with an error and counted.
func Serve[Req, Resp any](k *Kit, service string, h func(req Req, reply func(Resp, error))) error {
	sub, err := bus.ServeJSON(k.Env.Bus, service, k.Env.Exec, h)
	if err != nil {
		return fmt.Errorf("serve %s: %w", service, err)
	}
	k.subs = append(k.subs, sub)
	return nil
}

// DecodeErrors is how many messages and requests the role's
// subscriptions and services could not decode and so never handled.
func (k *Kit) DecodeErrors() uint64 {
	var n uint64
	for _, s := range k.subs {
		if st, ok := bus.SubscriptionStats(s); ok {
			n += st.DecodeErrors
		}
	}
	return n
}

// Every runs f every d on the role's executor until StopAll.
func (k *Kit) Every(d time.Duration, f func()) *executor.Timer {
	t := k.Env.Exec.Every(d, f)
	k.timers = append(k.timers, t)
	return t
}

// LimitsPeriod is how often a motion role publishes its CommandLimits.
const LimitsPeriod = time.Second

// AdvertiseLimits publishes the limits the role clamps its commands to on
// msg.LimitsTopic(Env.Prefix), now and every LimitsPeriod until StopAll,
// for the server to say in its replies which command values the role
// cuts.
func (k *Kit) AdvertiseLimits(limits msg.CommandLimits) {
	topic := msg.LimitsTopic(k.Env.Prefix)
	publish := func() {
		limits.Header = msg.Header{Stamp: msg.TimeOf(k.Env.Exec.Now())}
		_ = k.Env.Bus.Publish(topic, limits)
	}
	publish()
	k.Every(LimitsPeriod, publish)
}

// OnStop makes StopAll run f, after stopping the timers and subscriptions
// and before releasing the pins; clean-ups run newest first, as defers do.
func (k *Kit) OnStop(f func()) { k.cleanup = append(k.cleanup, f) }

// StopAll stops the timers, closes the subscriptions, runs the clean-ups
// and releases the pins (PWM halted, outputs low). It may be called more
// than once, and on a Kit whose Begin failed.
func (k *Kit) StopAll() {
	for _, t := range k.timers {
		t.Stop()
	}
	k.timers = nil
	for _, s := range k.subs {
		_ = s.Unsubscribe()
	}
	k.subs = nil
	for i := len(k.cleanup) - 1; i >= 0; i-- {
		k.cleanup[i]()
	}
	k.cleanup = nil
	if k.Pins != nil {
		k.Pins.release()
		k.Pins = nil
	}
}
