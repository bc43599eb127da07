// Package feature is the contract between saint-server and the features it
// is built from. Each feature package (adoption, firmware, system, admin,
// activity, router, rc, livelink, balance, telemetry) exports a Register
// function that takes a *Host and the few things it depends on, and adds
// its WebSocket actions and topics, its HTTP routes and its components to
// the host. The server only makes the host, calls the Register functions
// and runs the components' lifecycle; adding a WebSocket feature touches
// its own package and one line of the server's wiring.
//
// A Host lends a feature the server's executor, bus, logger and WebSocket
// gateway. Components added with Add are started on the executor in the
// order they were added, after the listeners' handlers are in place, and
// stopped in reverse order on shutdown. Forward and Subscribe are the
// usual components: a bus topic forwarded to WebSocket subscribers, and a
// typed bus subscription that counts and logs messages it cannot decode.
package feature
