package msg

// Router states.
const (
	RouterIdle     = "IDLE"     // no active inputs
	RouterRouting  = "ROUTING"  // every output has a single source
	RouterBlending = "BLENDING" // some output is combining sources
)

// Router input sources, with their default priorities.
const (
	SourceRC         = "rc"         // 300
	SourceWebSocket  = "websocket"  // 200
	SourceLiveLink   = "livelink"   // 100
	SourceAutonomous = "autonomous" // 50
	SourceSafety     = "safety"     // 1000
	// SourceJoystick is a gamepad or joystick on a client: 250, above
	// WebSocket commands and below the RC transmitter, which is the
	// operator's hand on the robot.
	SourceJoystick = "joystick" // 250
	// SourceROS2 is a ROS 2 node on the robot's DDS domain, through the
	// saint-ros2 bridge: 150, below the operator's WebSocket clients and
	// above LiveLink animation.
	SourceROS2 = "ros2" // 150
)

// RouteStatus is RouteStatus.msg: the router's current state, published
// on TopicRouterStatus when it changes and at a low rate otherwise. Its
// fields are what the Routes page and the route flow view show.
type RouteStatus struct {
	State     string        `json:"state"` // RouterIdle ...
	Routes    []RouteState  `json:"routes"`
	Outputs   []OutputState `json:"outputs"`
	Timestamp float64       `json:"timestamp"` // seconds since the Unix epoch
	// EStopActive is true while an emergency stop is latched; EStopSource
	// says who engaged it.
	EStopActive bool   `json:"estop_active"`
	EStopSource string `json:"estop_source,omitempty"`
}

// RouteState is one configured route's status.
type RouteState struct {
	RouteID  string `json:"route_id"`
	Enabled  bool   `json:"enabled"`
	Priority int32  `json:"priority"`
	Source   string `json:"source"` // SourceRC ...
	Target   string `json:"target"` // "head", "arms.left", "tracks" ...
	// Active is true while the route's source is sending (it has not timed
	// out); an active route may still be overridden by a higher priority.
	Active bool `json:"active"`
	// LastInput is when the route last received input, seconds since the
	// Unix epoch; 0 if never.
	LastInput float64 `json:"last_input"`
}

// OutputState is what the router is sending to one output target.
type OutputState struct {
	Target string `json:"target"`
	// State is this output's RouterIdle, RouterRouting or RouterBlending.
	State string `json:"state"`
	// RouteIDs are the routes contributing, highest priority first: one in
	// priority mode, several while blending.
	RouteIDs []string `json:"route_ids"`
	// Values are the output's properties as last sent ("pan", "linear").
	Values map[string]float32 `json:"values"`
}

// TopicRouterInput carries RouterInput: inputs for the router from inside
// the robot (a joystick bridge, an autonomous behaviour, a safety monitor)
// that have no receiver of their own.
const TopicRouterInput = "/saint/router/input"

// RouterInput is one input for the router. Values are by property name
// ("channel_2", "headYaw", "pan"); Target and Command are for passthrough
// routes ("head" "move"); Command "estop" with Values["enable"] 1 engages
// the emergency stop and 0 releases it.
type RouterInput struct {
	Source  string             `json:"source"` // SourceAutonomous ...
	Subject string             `json:"subject,omitempty"`
	Target  string             `json:"target,omitempty"` // "head", "arms.left", "tracks"
	Command string             `json:"command,omitempty"`
	Values  map[string]float32 `json:"values"`
}

// TopicHeadCameraCmd carries HeadCameraCommand: the WebSocket API's
// "head camera" command, which the router forwards to the head.
const TopicHeadCameraCmd = "/saint/head/camera/cmd"

// HeadCameraCommand turns the head camera's stream on or off.
type HeadCameraCommand struct {
	Enable bool `json:"enable"`
}
