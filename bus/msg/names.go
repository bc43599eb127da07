package msg

import "strings"

// Topic and service names, exactly as the spec writes them.
const (
	// TopicUnadopted carries NodeGPIOStatus announcements from unadopted nodes.
	TopicUnadopted = "/saint/nodes/unadopted"
	// TopicAllNodeStatus subscribes to every node's NodeStatus.
	TopicAllNodeStatus = "/saint/nodes/+/status"

	// ServiceFirmwareCheck answers FirmwareCheckRequest.
	ServiceFirmwareCheck = "/saint/firmware/check"
	// ServiceFirmwareDownload answers FirmwareDownloadRequest.
	ServiceFirmwareDownload = "/saint/firmware/download"
	// ServiceAdopt is the server's AdoptNode service.
	ServiceAdopt = "/saint/nodes/adopt"
	// ServiceReset is the server's ResetNode service.
	ServiceReset = "/saint/nodes/reset"
	// ServiceRoleConfig returns a role's configuration (RoleConfigRequest).
	ServiceRoleConfig = "/saint/roles/config"
	// ServiceValidateRole lets a node with a stored role check it with the
	// server at boot (ValidateRoleRequest).
	ServiceValidateRole = "/saint/nodes/validate_role"
	// ServiceSystemStatus answers SystemStatus.
	ServiceSystemStatus = "/saint/system/status"
	// ServiceSystemShutdown starts a system shutdown (SystemCommand).
	ServiceSystemShutdown = "/saint/system/shutdown"
)

// NodeStatusTopic is "/saint/nodes/{node_id}/status".
func NodeStatusTopic(nodeID string) string { return "/saint/nodes/" + nodeID + "/status" }

// NodeAdoptService is the node's "/saint/node/{node_id}/adopt" service.
func NodeAdoptService(nodeID string) string { return "/saint/node/" + nodeID + "/adopt" }

// NodeResetService is the node's "/saint/node/{node_id}/reset" service.
func NodeResetService(nodeID string) string { return "/saint/node/" + nodeID + "/reset" }

// NodeGPIOProbeService is the node's "/saint/node/{node_id}/gpio_probe" service.
func NodeGPIOProbeService(nodeID string) string { return "/saint/node/" + nodeID + "/gpio_probe" }

// NodeUpdateService is the node's "/saint/node/{node_id}/update" service,
// used by the server's trigger_update to make a node check firmware now.
func NodeUpdateService(nodeID string) string { return "/saint/node/" + nodeID + "/update" }

// Roles the generic node can be adopted into.
const (
	RoleHead    = "head"
	RoleArms    = "arms"
	RoleTracks  = "tracks"
	RoleConsole = "console"
	RoleBalance = "balance"
)

// Roles lists every role in the order the UI shows them.
func Roles() []string {
	return []string{RoleHead, RoleArms, RoleTracks, RoleConsole, RoleBalance}
}

// RoleKey is the configuration name of a role instance: "head",
// "arms_left", "arms_right", "tracks" ... (the spec's configs/ file names).
func RoleKey(role, instance string) string {
	if instance == "" {
		return role
	}
	return role + "_" + instance
}

// TopicPrefix is where a role instance publishes: "/saint/head",
// "/saint/arms/left".
func TopicPrefix(role, instance string) string {
	if instance == "" {
		return "/saint/" + role
	}
	return "/saint/" + role + "/" + instance
}

// ValidNodeID reports whether id can be used as a node id: 1–64 characters
// of letters, digits, '-' and '_' (it becomes a topic name segment).
func ValidNodeID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	return strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0
}
