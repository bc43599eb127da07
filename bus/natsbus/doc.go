// Package natsbus carries the bus between processes and machines over NATS
// (https://nats.io): saint-server embeds a NATS server (package
// natsbus/broker) on the robot's internal network, and every node connects
// to it (Connect). This package is the client only, so the node firmware
// does not link the server.
//
// A topic is a NATS subject ("/saint/head/cmd" travels as "saint.head.cmd",
// "+" and "#" become "*" and ">"); a service request goes to the subject
// "_srv." + the service's subject and is answered on a reply inbox. All of
// that, the JSON encoding, the keep-last queues and the executors live in
// bus.Conn, shared with the in-process bus; this package is only the
// Transport: publish, subscribe, request, and the two things NATS adds:
//
//   - No responders. A request to a service nobody serves is answered by
//     the server at once with a 503 status (NATS headers), which becomes
//     bus.ErrNoResponders instead of a timeout.
//   - Reconnection. Clients retry forever with a short pause; while the
//     server is away publications are buffered, and on reconnection
//     nats.go replays every subscription, so nodes ride out a server
//     restart without help. Calls in flight during the outage time out.
//
// Delivery is asynchronous: a subscription's messages arrive on a nats.go
// goroutine and are posted into the subscriber's executor, in order per
// subscription. Across topics, and between processes, there is no order, as
// with ROS 2; for deterministic runs use the mem bus and a virtual clock.
//
// Clients authenticate with an nkey (Options.Key): saint-server's broker
// (broker.Options.Authentication, package server/busaccess) refuses
// clients without one and gives each key its permissions. A node makes its
// key at first boot (LoadOrCreateKey), connects as NodeClientName(id) and
// takes its replies under NodeInboxPrefix(id), the only inbox it may read.
// A broker without Authentication accepts anyone and must stay on
// loopback.
package natsbus
