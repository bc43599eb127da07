package msg

// GPIOPin is one pin of a node's header (GPIOPin.msg).
type GPIOPin struct {
	PinNumber    uint8  `json:"pin_number"`    // physical header pin, 1–40
	PinName      string `json:"pin_name"`      // BCM name, e.g. "GPIO17"
	Direction    string `json:"direction"`     // "input", "output", "pwm", "i2c", "spi", "uart"
	CurrentState string `json:"current_state"` // "high", "low", "pwm_50" ...
	InUse        bool   `json:"in_use"`
	UsedBy       string `json:"used_by"`
}

// PeripheralInfo is a detected peripheral (PeripheralInfo.msg).
type PeripheralInfo struct {
	Type        string `json:"type"`    // "i2c", "spi", "usb", "camera", "uart", "can"
	Address     string `json:"address"` // bus address or port, e.g. "1:0x68"
	Description string `json:"description"`
	Responsive  bool   `json:"responsive"`
}

// NodeGPIOStatus is what an unadopted node publishes at least once a second
// on its NodeAnnounceTopic, and the server relays on TopicUnadopted
// (NodeGPIOStatus.msg).
type NodeGPIOStatus struct {
	NodeID          string           `json:"node_id"`
	HardwareRev     string           `json:"hardware_rev"`
	FirmwareVersion string           `json:"firmware_version"`
	Pins            []GPIOPin        `json:"pins"`
	Peripherals     []PeripheralInfo `json:"peripherals"`
	CPUTemp         float32          `json:"cpu_temp"`
	CPUUsage        float32          `json:"cpu_usage"`
	MemoryUsage     float32          `json:"memory_usage"`
	UptimeSeconds   uint32           `json:"uptime_seconds"`
	// BusCA is the SHA-256 (hex) of the server CA the node pinned on first
	// contact ("" without TLS): the adopt page shows it beside the
	// server's own (SystemStatus.BusCA) and the node's bus key.
	BusCA string `json:"bus_ca_sha256,omitempty"`
}

// NodeAnnouncement is the identity part of an unadopted node's presence
// (NodeAnnouncement.msg); NodeGPIOStatus carries it in full.
type NodeAnnouncement struct {
	NodeID          string `json:"node_id"`
	MACAddress      string `json:"mac_address"`
	Model           string `json:"model"`
	HardwareRev     string `json:"hardware_rev"`
	FirmwareVersion string `json:"firmware_version"`
	Address         string `json:"address"`
}

// Node lifecycle states.
const (
	StateBoot      = "BOOT"
	StateUpdating  = "UPDATING"
	StateUnadopted = "UNADOPTED"
	StateAdopting  = "ADOPTING"
	StateActive    = "ACTIVE"
	StateError     = "ERROR"
)

// NodeStatus is published by every node on NodeStatusTopic, once a second
// and on every state change.
type NodeStatus struct {
	NodeID          string  `json:"node_id"`
	State           string  `json:"state"`
	Role            string  `json:"role,omitempty"`
	Instance        string  `json:"instance,omitempty"`
	TopicPrefix     string  `json:"topic_prefix,omitempty"`
	FirmwareVersion string  `json:"firmware_version"`
	ConfigVersion   string  `json:"config_version,omitempty"`
	HardwareRev     string  `json:"hardware_rev"`
	Model           string  `json:"model,omitempty"`
	MACAddress      string  `json:"mac_address,omitempty"`
	Address         string  `json:"address,omitempty"`
	CPUTemp         float32 `json:"cpu_temp"`
	CPUUsage        float32 `json:"cpu_usage"`
	MemoryUsage     float32 `json:"memory_usage"`
	UptimeSeconds   uint32  `json:"uptime_seconds"`
	Message         string  `json:"message,omitempty"` // last error or state detail
	// Timestamp is the node's clock at publication, seconds since the Unix epoch.
	Timestamp float64 `json:"timestamp"`
}

// AdoptNodeRequest is AdoptNode.srv's request, served by the server on
// ServiceAdopt and by a node on NodeAdoptService.
type AdoptNodeRequest struct {
	NodeID   string `json:"node_id"`
	Role     string `json:"role"`
	Instance string `json:"instance,omitempty"` // "left" / "right" for arms
	// DisplayName is kept by the server; nodes ignore it.
	DisplayName string `json:"display_name,omitempty"`
	// Config is the role configuration (YAML) the node is to run with and
	// ConfigVersion its version; the server fills them when it calls the node.
	Config        string `json:"config,omitempty"`
	ConfigVersion string `json:"config_version,omitempty"`
	AssignedBy    string `json:"assigned_by,omitempty"`
	ServerAddress string `json:"server_address,omitempty"`
	// BusKey is the public key the administrator was shown for the node
	// (list_unadopted's bus_key): on an authenticated bus the server
	// refuses the adoption when the node now connects with another. ""
	// adopts whatever key the node connects with. Nodes ignore it.
	BusKey string `json:"bus_key,omitempty"`
}

// AdoptNodeResponse is AdoptNode.srv's response.
type AdoptNodeResponse struct {
	Success             bool   `json:"success"`
	Message             string `json:"message"`
	AssignedTopicPrefix string `json:"assigned_topic_prefix"`
}

// ResetNodeRequest is ResetNode.srv's request.
type ResetNodeRequest struct {
	NodeID       string `json:"node_id"`
	FactoryReset bool   `json:"factory_reset"`
}

// ResetNodeResponse is ResetNode.srv's response.
type ResetNodeResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// GPIOProbeRequest is GPIOProbe.srv's request.
type GPIOProbeRequest struct {
	NodeID string `json:"node_id"`
	// Pins restricts the probe to these header pins; empty means all.
	Pins []int `json:"pins,omitempty"`
}

// GPIOProbeResponse is GPIOProbe.srv's response: the node's full GPIO
// status plus a fresh scan of its buses.
type GPIOProbeResponse struct {
	Success bool           `json:"success"`
	Message string         `json:"message"`
	Status  NodeGPIOStatus `json:"status"`
}

// FirmwareCheckRequest is FirmwareCheck.srv's request.
type FirmwareCheckRequest struct {
	NodeID          string `json:"node_id"`
	CurrentVersion  string `json:"current_version"`
	HardwareRev     string `json:"hardware_rev"`
	CurrentChecksum string `json:"current_checksum,omitempty"`
	// Force asks for the image even when the versions match (after a
	// factory reset).
	Force bool `json:"force,omitempty"`
}

// FirmwareCheckResponse is FirmwareCheck.srv's response.
type FirmwareCheckResponse struct {
	UpdateAvailable bool   `json:"update_available"`
	Version         string `json:"version"`
	ChecksumSHA256  string `json:"checksum_sha256"`
	SizeBytes       int64  `json:"size_bytes"`
	Changelog       string `json:"changelog"`
	// URL is where the image can be fetched over the internal firmware HTTP
	// server; FirmwareDownload returns the same.
	URL     string `json:"url"`
	Message string `json:"message"`
	// Signature is the release key's Ed25519 signature over Version,
	// ChecksumSHA256 and SizeBytes (package fwsign), base64; empty for an
	// unsigned image, which a node with a trusted release key refuses.
	Signature string `json:"signature,omitempty"`
	// DowngradeSignature is the release key's permission to go back to
	// Version (fwsign.SignDowngrade), base64: a node that has installed a
	// newer version refuses the offer without it.
	DowngradeSignature string `json:"downgrade_signature,omitempty"`
}

// FirmwareDownloadRequest is FirmwareDownload.srv's request. The image is
// fetched in chunks so that a download resumes where it stopped and no
// message exceeds the bus's payload limit.
type FirmwareDownloadRequest struct {
	NodeID  string `json:"node_id"`
	Version string `json:"version"`
	Offset  int64  `json:"offset"`
	// Length is the chunk size asked for; 0 means FirmwareChunkSize. The
	// server may return less.
	Length int64 `json:"length,omitempty"`
}

// FirmwareChunkSize is the default download chunk: small enough that a
// chunk, base64-encoded in JSON, stays under NATS's default 1 MiB payload
// limit even on a broker that was not configured for more.
const FirmwareChunkSize = 256 << 10

// FirmwareDownloadResponse is FirmwareDownload.srv's response: one chunk of
// the image, where the whole image is, and what it must hash to.
type FirmwareDownloadResponse struct {
	Success        bool   `json:"success"`
	Message        string `json:"message"`
	Version        string `json:"version"`
	URL            string `json:"url"`
	ChecksumSHA256 string `json:"checksum_sha256"`
	SizeBytes      int64  `json:"size_bytes"`
	Offset         int64  `json:"offset"`
	Data           []byte `json:"data"` // base64 in JSON
}

// RoleConfigRequest asks the server for a role instance's configuration.
type RoleConfigRequest struct {
	NodeID   string `json:"node_id"`
	Role     string `json:"role"`
	Instance string `json:"instance,omitempty"`
}

// RoleConfigResponse carries a role configuration (the YAML of configs/).
type RoleConfigResponse struct {
	Success  bool   `json:"success"`
	Message  string `json:"message"`
	Version  string `json:"version"`
	Checksum string `json:"checksum"`
	Config   string `json:"config"`
}

// ValidateRoleRequest is sent by a node that booted with a stored role.
type ValidateRoleRequest struct {
	NodeID        string `json:"node_id"`
	Role          string `json:"role"`
	Instance      string `json:"instance,omitempty"`
	ConfigVersion string `json:"config_version"`
	ConfigSum     string `json:"config_checksum"`
}

// ValidateRoleResponse tells the node whether its stored role stands, and
// if its configuration is outdated, carries the new one.
type ValidateRoleResponse struct {
	Valid   bool   `json:"valid"`
	Message string `json:"message"`
	// Config, ConfigVersion and Checksum are set when the node must replace
	// its stored configuration.
	Config        string `json:"config,omitempty"`
	ConfigVersion string `json:"config_version,omitempty"`
	Checksum      string `json:"checksum,omitempty"`
}

// NodeUpdateRequest asks a node to check for firmware now (trigger_update).
type NodeUpdateRequest struct {
	NodeID string `json:"node_id"`
	Force  bool   `json:"force,omitempty"`
}

// NodeUpdateResponse answers NodeUpdateRequest.
type NodeUpdateResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}
