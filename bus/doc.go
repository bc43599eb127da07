// Package bus is how SAINT.OS processes talk: ROS 2-shaped topics
// (publish/subscribe) and services (request/response), with the names
// bus/msg defines ("/saint/head/cmd", "/saint/nodes/+/status",
// "/saint/node/{node_id}/adopt") and JSON payloads of the bus/msg types,
// the same shapes the WebSocket API shows.
//
// # The contract
//
// Bus is the interface every process programs against. Backends:
// bus/mem (in-process, deterministic; the simulator and tests) and
// bus/natsbus (NATS, between the server and the nodes on a robot). The
// behaviour both must have is written down once, as the test suite in
// bus/bustest.
//
// # Executors
//
// Every handler runs on the executor (hal/executor) given when it was
// registered, one at a time, so role and server code needs no locks.
// Messages reach an executor through a per-subscription keep-last queue:
// when a subscriber falls behind, the oldest waiting messages are dropped
// so that at most QoS.Depth wait (counted in Stats.Dropped). A backlog is
// handled one message per executor event, interleaved with timers and
// other topics. Publish, Call and CallAsync may be used from any goroutine.
//
// # Names
//
// Names are absolute, '/'-separated, with segments of ASCII letters,
// digits, '_' and '-'. Subscriptions and served services may use "+" for
// one segment and a final "#" for one or more (a request's Msg.Topic is
// then the name it was called by); publications and calls name one. On
// the wire a topic is a NATS-style subject ("/saint/nodes/+/status" is
// "saint.nodes.*.status"); services live in a
// namespace of their own ("_srv.saint.nodes.adopt"), as in ROS 2, so a
// topic subscriber never sees requests nor poses as a server. See
// TopicSubject and ServiceSubject. A bad name is an error (ErrInvalidName)
// naming it.
//
// # Services
//
// A service handler answers through a Reply it may call once, now or later,
// from any goroutine. On the wire the answer is an envelope,
// {"result": ...} or {"error": "..."}, so a handler's error reaches the
// caller as a *RemoteError. A call ends in exactly one of: the answer, a
// *RemoteError, ErrNoResponders (nobody serves the name; reported at once,
// not after the timeout), ErrTimeout, or ErrClosed. CallAsync measures its
// timeout on the caller's executor, so on a virtual clock it fires at the
// same virtual instant on every run; at equal instants the timeout (armed
// first) beats a reply.
//
// # Building a backend
//
// Conn implements Bus on any Transport: a small interface that moves raw
// bytes between subjects (publish, subscribe with a callback, request,
// close). Names, encoding, queues, executors, envelopes and timeouts live
// in Conn, once, so backends differ only where their networks do.
//
// # Typed helpers
//
// SubscribeJSON, ServeJSON (ServeJSONWithName for a wildcard service),
// CallJSON and CallAsyncJSON decode into Go types so handlers do not
// repeat json.Unmarshal and its error handling:
//
//	bus.SubscribeJSON(b, msg.TopicHeadCmd, bus.QoS{Depth: 1}, ex,
//		func(topic string, cmd msg.HeadCommand) { head.Move(cmd) })
//
// Message payloads are shared by every subscriber of a publication: treat
// Msg.Data as read-only. In process (bus/mem) SubscribeJSON receives a copy
// of the published value instead of its JSON when the types match (see
// InProcess); the handler cannot tell the difference. A subscriber to
// every topic that passes messages on as JSON but reads camera frames
// itself (the Foxglove server) uses SubscribeValuesOf: frames arrive as
// copies (Msg.Value), so the publisher never encodes their pixels into
// base64 JSON for it. With SubscribeValuesOfWanted it also says, by an
// atomic flag read on the publisher's goroutine, which topics it wants at
// the moment: no copy is made of a frame none of its clients watches.
package bus
