// Package ws is the WebSocket gateway of the server:
// JSON requests {"id","type","target","action","params"} dispatched to
// handlers, responses {"id","type":"response","status":"ok","data"} or
// status "error" with a message that names the parameter at fault, and
// state updates pushed to clients that subscribed to them, at the rate they
// asked for. Malformed JSON, unknown actions and bad parameters get such an
// error and the connection stays open.
//
// A client's robot-control, router, rc and subscription requests run in
// arrival order; management requests run concurrently. Authentication
// (auth message or bearer header), the Origin check, the message size
// limit and the per-client token-bucket rate limit are enforced here, so
// every handler sees only well-formed requests from authenticated clients.
package ws
