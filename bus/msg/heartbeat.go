package msg

import "time"

// TopicServerHeartbeat carries the server's ServerHeartbeat, published
// every HeartbeatInterval. Motor nodes watch it: a node that hears none for
// its link_timeout_ms has lost the server (or the bus) and stops its
// actuators.
const TopicServerHeartbeat = "/saint/server/heartbeat"

// HeartbeatInterval is how often the server publishes its heartbeat. A
// node's link timeout is at least MinLinkTimeout, so that one late or lost
// heartbeat does not stop the robot.
const HeartbeatInterval = 50 * time.Millisecond

// Bounds and default of a role's link_timeout_ms.
const (
	MinLinkTimeout     = 100 * time.Millisecond
	MaxLinkTimeout     = 5 * time.Second
	DefaultLinkTimeout = 200 * time.Millisecond
)

// ServerHeartbeat says the server is alive: Seq counts up from 1 at every
// server start (a node seeing it fall back knows the server restarted).
type ServerHeartbeat struct {
	Seq   uint64 `json:"seq"`
	Stamp Time   `json:"stamp"`
}
