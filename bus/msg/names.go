package msg

import (
	"strings"

	"github.com/saint-os/saint/roles/rolespec"
)

// Topic and service names of the node protocol, in slash form.
const (
	// TopicUnadopted carries NodeGPIOStatus announcements of unadopted
	// nodes. The server publishes them there, each relayed from the node's
	// own NodeAnnounceTopic once it has checked the node id: on an
	// authenticated bus only that node's connection may publish on its own
	// subject, so an announcement here names the node that sent it.
	TopicUnadopted = "/saint/nodes/unadopted"
	// TopicAllNodeAnnounce subscribes to every node's NodeAnnounceTopic.
	TopicAllNodeAnnounce = "/saint/nodes/+/announce"
	// TopicAllNodeStatus subscribes to every node's NodeStatus.
	TopicAllNodeStatus = "/saint/nodes/+/status"
	// TopicAllNodeAlerts subscribes to every node's NodeAlertTopic.
	TopicAllNodeAlerts = "/saint/nodes/+/alert"

	// ServiceFirmwareCheck answers FirmwareCheckRequest.
	ServiceFirmwareCheck = "/saint/firmware/check"
	// ServiceFirmwareDownload answers FirmwareDownloadRequest.
	ServiceFirmwareDownload = "/saint/firmware/download"
	// ServiceAdopt is the server's AdoptNode service.
	ServiceAdopt = "/saint/nodes/adopt"
	// ServiceReset is the server's ResetNode service.
	ServiceReset = "/saint/nodes/reset"
	// ServiceAllNodesRoleConfig is every node's NodeRoleConfigService, as
	// the server serves them.
	ServiceAllNodesRoleConfig = "/saint/nodes/+/role_config"
	// ServiceAllNodesValidateRole is every node's NodeValidateRoleService,
	// as the server serves them.
	ServiceAllNodesValidateRole = "/saint/nodes/+/validate_role"
	// LegacyServiceRoleConfig and LegacyServiceValidateRole are the shared
	// names firmware before the per-node services called, naming the node
	// only in the request. The server answers them with an error telling
	// the node to update its firmware: on them any node could speak for
	// another.
	LegacyServiceRoleConfig   = "/saint/roles/config"
	LegacyServiceValidateRole = "/saint/nodes/validate_role"
	// ServiceSystemStatus answers SystemStatus.
	ServiceSystemStatus = "/saint/system/status"
	// ServiceSystemShutdown starts a system shutdown (SystemCommand).
	ServiceSystemShutdown = "/saint/system/shutdown"
)

// NodeStatusTopic is "/saint/nodes/{node_id}/status".
func NodeStatusTopic(nodeID string) string { return "/saint/nodes/" + nodeID + "/status" }

// NodeAnnounceTopic is where an unadopted node announces itself
// (NodeGPIOStatus): "/saint/nodes/{node_id}/announce". The server relays
// each announcement whose node_id is the topic's to TopicUnadopted.
func NodeAnnounceTopic(nodeID string) string { return "/saint/nodes/" + nodeID + "/announce" }

// NodeAlertTopic is where node nodeID raises the alerts it wants shown at
// the console (ConsoleAlert): "/saint/nodes/{node_id}/alert". An
// authenticated bus lets only that node's key publish there, so the server
// relays each to TopicConsoleAlerts with the node's id as its source,
// whatever the message says.
func NodeAlertTopic(nodeID string) string { return "/saint/nodes/" + nodeID + "/alert" }

// NodeRoleConfigService is where node nodeID fetches the configuration of
// the role it is being adopted into (RoleConfigRequest):
// "/saint/nodes/{node_id}/role_config". Like the node's status topic, an
// authenticated bus lets only that node's key call it, so the server takes
// the node from the name, not from the request.
func NodeRoleConfigService(nodeID string) string { return "/saint/nodes/" + nodeID + "/role_config" }

// NodeValidateRoleService is where node nodeID, booting with a stored role,
// checks it with the server (ValidateRoleRequest):
// "/saint/nodes/{node_id}/validate_role", callable by that node's key only.
func NodeValidateRoleService(nodeID string) string {
	return "/saint/nodes/" + nodeID + "/validate_role"
}

// NodeOfName returns the node id of a per-node name,
// "/saint/nodes/{node_id}/..." (a status topic, an announcement, a
// NodeRoleConfigService), and whether name is one.
func NodeOfName(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "/saint/nodes/")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, "/")
	return id, ok && ValidNodeID(id)
}

// NodeAdoptService is the node's "/saint/node/{node_id}/adopt" service.
func NodeAdoptService(nodeID string) string { return "/saint/node/" + nodeID + "/adopt" }

// NodeResetService is the node's "/saint/node/{node_id}/reset" service.
func NodeResetService(nodeID string) string { return "/saint/node/" + nodeID + "/reset" }

// NodeGPIOProbeService is the node's "/saint/node/{node_id}/gpio_probe" service.
func NodeGPIOProbeService(nodeID string) string { return "/saint/node/" + nodeID + "/gpio_probe" }

// NodeUpdateService is the node's "/saint/node/{node_id}/update" service,
// used by the server's trigger_update to make a node check firmware now.
func NodeUpdateService(nodeID string) string { return "/saint/node/" + nodeID + "/update" }

// Roles the generic node can be adopted into (roles/rolespec's table).
const (
	RoleHead    = rolespec.Head
	RoleArms    = rolespec.Arms
	RoleTracks  = rolespec.Tracks
	RoleConsole = rolespec.Console
	RoleBalance = rolespec.Balance
	// RoleLimb is a humanoid's limb (roles/limb), with an instance naming
	// it: leg_left, arm_right, neck ….
	RoleLimb = rolespec.Limb
)

// Roles lists every role in the order the UI shows them.
func Roles() []string { return rolespec.Names() }

// ValidLimbInstance reports whether s can name a limb role's instance: a
// lower-case letter, then lower-case letters, digits and '_' (it is a
// topic name segment and part of the role key, "limb_leg_left").
func ValidLimbInstance(s string) bool { return rolespec.ValidName(s) }

// RoleKey is the configuration name of a role instance: "head",
// "arms_left", "arms_right", "tracks" ... (the file names under the
// firmware tree's configs/).
func RoleKey(role, instance string) string { return rolespec.Key(role, instance) }

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

// Topics of the role nodes, and the sides an
// arms node can be.
const (
	// TopicHeadState carries HeadState.
	TopicHeadState = "/saint/head/state"
	// TopicHeadCmd carries HeadCommand; it is the router's "head" output.
	TopicHeadCmd = "/saint/head/cmd"
	// TopicHeadCameraImageRaw carries the head camera's Image frames.
	TopicHeadCameraImageRaw = "/saint/head/camera/image_raw"
	// TopicHeadSensors carries the head's SensorReadings.
	TopicHeadSensors = "/saint/head/sensors"

	// ArmLeft and ArmRight are the arms instances.
	ArmLeft  = rolespec.Left
	ArmRight = rolespec.Right

	// TopicTracksOdom carries Odometry.
	TopicTracksOdom = "/saint/tracks/odom"
	// TopicTracksState carries TrackState.
	TopicTracksState = "/saint/tracks/state"
	// TopicTracksMotorCurrent carries MotorCurrent.
	TopicTracksMotorCurrent = "/saint/tracks/motor_current"
	// TopicTracksCmdVel carries Twist; it is the router's "tracks" output.
	TopicTracksCmdVel = "/saint/tracks/cmd_vel"
	// TopicTracksEStop carries EStop.
	TopicTracksEStop = "/saint/tracks/estop"

	// TopicConsoleInput carries ConsoleInput.
	TopicConsoleInput = "/saint/console/input"
	// TopicConsoleOverride carries ConsoleOverride.
	TopicConsoleOverride = "/saint/console/override"
	// TopicConsoleDisplay carries ConsoleDisplay.
	TopicConsoleDisplay = "/saint/console/display"
	// TopicConsoleAlerts carries ConsoleAlert. Only the server publishes
	// here: a node raises its alerts on its own NodeAlertTopic, and the
	// server relays each with the node's id as its source.
	TopicConsoleAlerts = "/saint/console/alerts"
)

// Topics inside the server, between its input receivers and the router.
const (
	// TopicRCState carries RCReceiverState.
	TopicRCState = "/saint/rc/state"
	// TopicLiveLinkFrames carries every subject's LiveLinkFrame; the
	// subject is in the frame, since LiveLink subject names need not be
	// valid topic segments.
	TopicLiveLinkFrames = "/saint/livelink/frames"
	// TopicLiveLinkSubjects carries LiveLinkSubject updates.
	TopicLiveLinkSubjects = "/saint/livelink/subjects"
	// TopicRouterStatus carries RouteStatus.
	TopicRouterStatus = "/saint/router/status"

	// ServiceSystemCommand takes every SystemCommandRequest, where
	// ServiceSystemShutdown is the shutdown-only service.
	ServiceSystemCommand = "/saint/system/command"
)

// ArmStateTopic is "/saint/arms/{side}/state" (ArmState).
func ArmStateTopic(side string) string { return "/saint/arms/" + side + "/state" }

// ArmCmdTopic is "/saint/arms/{side}/cmd" (ArmCommand); it is the router's
// "arms.{side}" output.
func ArmCmdTopic(side string) string { return "/saint/arms/" + side + "/cmd" }

// GripperStateTopic is "/saint/arms/{side}/gripper/state" (GripperState).
func GripperStateTopic(side string) string { return "/saint/arms/" + side + "/gripper/state" }

// GripperCmdTopic is "/saint/arms/{side}/gripper/cmd" (GripperCommand).
func GripperCmdTopic(side string) string { return "/saint/arms/" + side + "/gripper/cmd" }
