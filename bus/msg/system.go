package msg

// SystemStatusRequest asks ServiceSystemStatus for a SystemStatus.
type SystemStatusRequest struct{}

// SystemStatus is SystemStatus.msg: the whole robot at a glance, as the
// dashboard shows it: its fields are the dashboard's. ServiceSystemStatus
// answers with it.
type SystemStatus struct {
	ServerName      string  `json:"server_name"`
	Version         string  `json:"version"` // the server's software version
	UptimeSeconds   uint64  `json:"uptime_seconds"`
	CPUUsage        float32 `json:"cpu_usage"`    // percent
	MemoryUsage     float32 `json:"memory_usage"` // percent
	CPUTemp         float32 `json:"cpu_temp"`     // °C
	InternalAddress string  `json:"internal_address"`
	ExternalAddress string  `json:"external_address"`
	// EStopActive is true while any emergency stop holds.
	EStopActive    bool          `json:"estop_active"`
	Nodes          []NodeSummary `json:"nodes"`
	UnadoptedCount int32         `json:"unadopted_count"`
	Inputs         []InputStatus `json:"inputs"`
	// BusCA is the SHA-256 (hex) of the CA the bus's TLS certificate comes
	// from: the one each node pins on first contact (its announcement's
	// bus_ca_sha256), compared on the adopt page. Empty without TLS.
	BusCA     string  `json:"bus_ca_sha256,omitempty"`
	Timestamp float64 `json:"timestamp"` // seconds since the Unix epoch
}

// NodeSummary is one adopted node's line on the dashboard.
type NodeSummary struct {
	NodeID      string  `json:"node_id"`
	DisplayName string  `json:"display_name"`
	Role        string  `json:"role"`
	Instance    string  `json:"instance,omitempty"`
	State       string  `json:"state"` // StateActive ...
	Online      bool    `json:"online"`
	CPUTemp     float32 `json:"cpu_temp"`
}

// InputStatus is one input source's line on the dashboard.
type InputStatus struct {
	Source  string `json:"source"` // SourceWebSocket ...
	Enabled bool   `json:"enabled"`
	Active  bool   `json:"active"`
	Detail  string `json:"detail"` // "2 clients", "FaceCapture", "8ch SBUS"
}

// System commands (SystemCommand.srv). The WebSocket API's system target
// (docs/api.md) has shutdown and reboot; the rest are the dashboard's
// quick actions.
const (
	CommandShutdown   = "shutdown"    // power the robot down: nodes first, then the server
	CommandReboot     = "reboot"      // reboot NodeID, or everything when it is empty
	CommandRestart    = "restart"     // restart the server software
	CommandEStop      = "estop"       // engage the emergency stop everywhere
	CommandClearEStop = "clear_estop" // release it
)

// SystemCommandRequest is SystemCommand.srv's request, served on
// ServiceSystemShutdown (Command CommandShutdown) and ServiceSystemCommand.
type SystemCommandRequest struct {
	Command string `json:"command"`           // CommandShutdown ...
	NodeID  string `json:"node_id,omitempty"` // for CommandReboot: one node
	Reason  string `json:"reason,omitempty"`  // recorded in the activity log
	// DelaySeconds postpones the command, giving clients time to react.
	DelaySeconds float32 `json:"delay_seconds,omitempty"`
}

// SystemCommandResponse is SystemCommand.srv's response.
type SystemCommandResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}
