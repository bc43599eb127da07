// Package ws is the WebSocket gateway of the server:
// JSON requests {"id","type","target","action","params"} dispatched to
// handlers, responses {"id","type":"response","status":"ok","data"} or
// status "error" with a message that names the parameter at fault, and
// state updates pushed to clients that subscribed to them, at the rate they
// asked for (for a topic several sources share, such as each arm's state on
// "arms", at that rate per source). Malformed JSON, unknown actions and bad parameters get such an
// error and the connection stays open.
//
// A client's robot-control, router, rc and subscription requests run in
// arrival order; management requests run concurrently. Authentication
// (auth message or bearer header), the Origin check, the message size
// limit and the per-client token-bucket rate limit are enforced here, so
// every handler sees only well-formed requests from authenticated clients.
//
// A handler that keeps something for each user until that user goes away
// (the router's claims on the head camera) asks CallerOf who called: the
// client, whose Done closes with its connection, or, for code that calls
// handlers on behalf of users of its own (the Foxglove server), the Caller
// it put in the context with WithCaller.
package ws
