package msg

// The robot's motor middleware at the root of the bus (server/motors): the
// same services and topics as a node's middleware, at the root ("/"; on the
// wire inside the robot namespace, "/robot_{id}/", as every name of the
// robot), over every motor of every motor role, with robot-wide
// motor ids. RootMotorName builds the names.
//
// Extensions of the node middleware's types at the root:
// RequestControlRequest.MotorIDs (which motors the session takes; empty:
// all) and SessionStatus.Sessions (every session, who holds which motors).

// RootMotorName returns the root name of one of the middleware's
// interfaces: RootMotorName("request_control") is "/request_control".
func RootMotorName(name string) string { return MotorName("", name) }

// MotorSession is one control session of the root middleware, as
// session_status and the WebSocket "motors" topic show it (never its
// uuid).
type MotorSession struct {
	Client    string `json:"client"`
	MotorIDs  []int  `json:"motor_ids"`
	Behavior  string `json:"behavior"`
	Mode      string `json:"mode"`
	TimeoutMS int    `json:"timeout_ms"`
	Commands  uint64 `json:"commands"`
	// Groups are the motor groups (nodes) the session holds.
	Groups []string `json:"groups"`
}

// MotorGroupStatus is one motor group (a motor role's node middleware) as
// the root middleware sees it.
type MotorGroupStatus struct {
	Name     string `json:"name"`
	Prefix   string `json:"prefix"`
	Online   bool   `json:"online"`
	MotorIDs []int  `json:"motor_ids"` // robot-wide
	// HeldBy is the client whose session holds the group, "" when free.
	HeldBy string `json:"held_by"`
}

// MotorsStatus is the WebSocket "motors" topic: the groups and the
// sessions.
type MotorsStatus struct {
	Groups   []MotorGroupStatus `json:"groups"`
	Sessions []MotorSession     `json:"sessions"`
}

// MotorPlayAction is the root service playing a custom action of the
// robot's custom_action.yaml (PlayActionRequest → PlayActionResponse), and
// MotorListActions the one listing them (ListActionsRequest →
// ListActionsResponse).
const (
	MotorPlayAction  = "play_action"
	MotorListActions = "list_actions"
)

// PlayActionRequest plays the action Name; Client names the session it
// takes in session_status (default "play_action <name>"). With Async the
// answer comes as soon as the action starts (its session granted), not
// when it ends.
type PlayActionRequest struct {
	Name   string `json:"name"`
	Client string `json:"client"`
	Async  bool   `json:"async"`
}

// PlayActionResponse answers when the action has been played (or failed).
type PlayActionResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	// DurationS is how long the motion took, s.
	DurationS float64 `json:"duration_s"`
}

// ListActionsRequest asks for the custom actions.
type ListActionsRequest struct{}

// ActionInfo describes one custom action.
type ActionInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Joints      []string `json:"joints"`
	DurationS   float64  `json:"duration_s"`
}

// ListActionsResponse lists the custom actions.
type ListActionsResponse struct {
	Actions []ActionInfo `json:"actions"`
}
