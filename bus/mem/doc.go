// Package mem is the in-process bus: every "process" of a simulated robot
// (server, nodes, router) gets a connection to one Broker inside a single Go
// program, and talks to the others through it exactly as it would over NATS.
//
// It is deterministic. Publish delivers to the matching subscriptions
// synchronously, in the order they were made, before it returns; the
// subscriber's keep-last queue posts to its executor at that moment. So a
// publication made from an executor callback is queued in publish order, a
// request to a service nobody serves fails with bus.ErrNoResponders at once,
// and nothing here reads a clock: call timeouts are timers on the caller's
// executor. With virtual-clock executors the same scenario produces the same
// events at the same virtual times on every run.
//
// Subjects are matched NATS-style ("*" one token, a final ">" one or more),
// which is what bus.TopicSubject makes of "+" and "#". Payload bytes are
// shared between the subscribers of a publication, so handlers must treat
// bus.Msg.Data as read-only.
//
// Publications skip JSON where they can (bus.InProcess): a subscriber made
// with bus.SubscribeJSON for the published value's own type gets a deep
// copy of the value, so neither the publisher nor another subscriber can
// change what it holds, and it is the value the JSON round trip would give
// (types JSON treats specially, strings that are not UTF-8 and values of
// another type go through JSON). The JSON encoding is made once, and only
// when a raw subscriber needs it; a value JSON cannot encode (NaN) still
// fails Publish and reaches nobody. On NATS every message is JSON.
//
//	br := mem.NewBroker()
//	server, node := br.Connect(nil), br.Connect(nil)
//	defer server.Close()
//	defer node.Close()
//
// Closing a connection ends only its own subscriptions, services and calls,
// as a process exiting would.
package mem
