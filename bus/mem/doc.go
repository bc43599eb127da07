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
//	br := mem.NewBroker()
//	server, node := br.Connect(nil), br.Connect(nil)
//	defer server.Close()
//	defer node.Close()
//
// Closing a connection ends only its own subscriptions, services and calls,
// as a process exiting would.
package mem
