package msg

// ConsoleInput is ConsoleInput.msg, published on TopicConsoleInput for
// every user input event at the console. Its fields cover buttons,
// rotary encoders, switches and a touch screen.
type ConsoleInput struct {
	Control string `json:"control"` // the control's name in the console's role config, "estop", "knob_1"
	Kind    string `json:"kind"`    // InputButton ...
	Event   string `json:"event"`   // EventPress ...
	// Value is the control's value after the event: 1/0 for buttons and
	// switches, the position for an encoder or slider, unused for touch.
	Value float32 `json:"value"`
	// X and Y are the touch position in pixels, for touch events.
	X int32 `json:"x,omitempty"`
	Y int32 `json:"y,omitempty"`
	// Timestamp is when the event happened, seconds since the Unix epoch.
	Timestamp float64 `json:"timestamp"`
}

// ConsoleInput kinds.
const (
	InputButton  = "button"
	InputSwitch  = "switch"
	InputEncoder = "encoder"
	InputSlider  = "slider"
	InputTouch   = "touch"
)

// ConsoleInput events.
const (
	EventPress   = "press"
	EventRelease = "release"
	EventChange  = "change" // a switch, encoder or slider moved
	EventTouch   = "touch"
)

// ConsoleOverride is published on TopicConsoleOverride while someone at
// the console takes manual control: the router treats it as an input that
// outranks every source but safety for Target, until Active goes false.
type ConsoleOverride struct {
	Active bool   `json:"active"`
	Target string `json:"target"` // router output target: "head", "arms.left", "tracks" ...
	// Values are the controlled properties, named as the router's
	// mappings name them ("linear", "angular", "pan").
	Values map[string]float32 `json:"values"`
}

// ConsoleDisplay is taken on TopicConsoleDisplay: what the console's
// screen shows.
type ConsoleDisplay struct {
	Page  string   `json:"page"`            // "status", "menu", "message" ...
	Title string   `json:"title,omitempty"` // first line, highlighted
	Lines []string `json:"lines"`
	// Clear blanks the screen before drawing; otherwise unchanged lines
	// are left alone.
	Clear bool `json:"clear,omitempty"`
}

// ConsoleAlert is taken on TopicConsoleAlerts: a message to show (and, for
// Critical, sound) at the console. Nodes publish it on their own
// NodeAlertTopic, where Source is ignored.
type ConsoleAlert struct {
	Level   string `json:"level"` // AlertInfo ...
	Message string `json:"message"`
	// Source is who raised the alert: the id of the node, set by the
	// server from the topic the node published on.
	Source    string  `json:"source"`
	Timestamp float64 `json:"timestamp"`
}

// Alert levels.
const (
	AlertInfo     = "info"
	AlertWarning  = "warning"
	AlertError    = "error"
	AlertCritical = "critical"
)
