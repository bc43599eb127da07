package msg

// Node alerts: what a node logs at warning level or above (a low battery,
// a clamped head command, a drive fault, a refused adoption) reaches the
// server on the node's log topic.

// TopicNodeLogs matches every node's log topic.
const TopicNodeLogs = "/saint/node/+/log"

// NodeLogTopic is node id's log topic, "/saint/node/{id}/log".
func NodeLogTopic(id string) string { return "/saint/node/" + id + "/log" }

// Node log levels.
const (
	NodeLogWarning = "warning"
	NodeLogError   = "error"
)

// NodeLog is one warning or error of a node.
type NodeLog struct {
	NodeID string `json:"node_id"`
	Level  string `json:"level"` // NodeLogWarning or NodeLogError
	// Source is what on the node said it: the role's key ("tracks",
	// "arms_left") or "node" for the node itself.
	Source  string            `json:"source"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs,omitempty"`
	// Suppressed is how many times the same message from the same source
	// was left out before this one by the node's rate limit.
	Suppressed int     `json:"suppressed,omitempty"`
	Timestamp  float64 `json:"timestamp"`
}
