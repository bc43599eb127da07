package busaccess

import (
	"strings"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
)

// commandTopics are, per role, the topics under the role's prefix that
// others send it: the node subscribes to them and may not publish on them
// (a node cannot forge its own commands either). The console's alerts are
// the server's to send: each names the node that raised it on its own
// alert topic.
var commandTopics = map[string][]string{
	msg.RoleHead:    {"cmd", "camera.cmd"},
	msg.RoleArms:    {"cmd", "gripper.cmd"},
	msg.RoleTracks:  {"cmd_vel", "estop"},
	msg.RoleBalance: {"cmd_vel", "estop", "arm"},
	msg.RoleConsole: {"display", "alerts"},
}

// motorCommand is the motor middleware's command topic (head and arms), at
// "<prefix>.control_command" or, with a robot id, one level deeper.
var motorCommand = []string{msg.MotorControlCommand, "*." + msg.MotorControlCommand}

// subjects maps bus names to NATS subjects inside a robot namespace.
type subjects struct{ ns string } // "" or "robot_7."

func newSubjects(namespace string) subjects {
	ns := strings.Trim(namespace, "/")
	if ns != "" {
		ns = strings.ReplaceAll(ns, "/", ".") + "."
	}
	return subjects{ns}
}

// topic turns "/saint/head/#" into "robot_7.saint.head.>".
func (s subjects) topic(name string) string {
	name = strings.ReplaceAll(strings.TrimPrefix(name, "/"), "/", ".")
	name = strings.ReplaceAll(name, "+", "*")
	name = strings.ReplaceAll(name, "#", ">")
	return s.ns + name
}

// service is the subject a service's requests travel on.
func (s subjects) service(name string) string { return "_srv." + s.topic(name) }

// unadoptedPermissions is what node id may do before adoption.
func unadoptedPermissions(s subjects, id string) *natsserver.Permissions {
	p := basePermissions(s, id)
	p.Publish.Allow = append(p.Publish.Allow, s.topic(msg.NodeAnnounceTopic(id)))
	return p
}

// basePermissions is what every node may do, adopted or not: say how it
// is, fetch firmware, and serve its own node services.
func basePermissions(s subjects, id string) *natsserver.Permissions {
	return &natsserver.Permissions{
		Publish: &natsserver.SubjectPermission{Allow: []string{
			s.topic(msg.NodeStatusTopic(id)),
			s.topic(msg.NodeLogTopic(id)),
			// The firmware services answer every node alike: the node
			// in a request changes nothing.
			s.service(msg.ServiceFirmwareCheck),
			s.service(msg.ServiceFirmwareDownload),
			// Its own role validation only: the server takes the node
			// from this name.
			s.service(msg.NodeValidateRoleService(id)),
			// The shared names of older firmware, which the server
			// answers only with a refusal telling the node to update.
			s.service(msg.LegacyServiceValidateRole),
			s.service(msg.LegacyServiceRoleConfig),
		}},
		Subscribe: &natsserver.SubjectPermission{Allow: []string{
			s.service("/saint/node/" + id + "/#"),
			natsbus.NodeInboxPrefix(id) + ".>",
			s.topic(msg.TopicServerHeartbeat),
		}},
		// Answering a request the node received is always allowed, once.
		Response: &natsserver.ResponsePermission{MaxMsgs: 1},
	}
}

// rolePermissions is what node id adopted as role (instance) may do.
func rolePermissions(s subjects, id, role, instance string) *natsserver.Permissions {
	p := basePermissions(s, id)
	prefix := s.topic(msg.TopicPrefix(role, instance))
	p.Publish.Allow = append(p.Publish.Allow,
		prefix+".>",
		// Its own role's configuration, during the adoption.
		s.service(msg.NodeRoleConfigService(id)),
		// Any role's power monitor and faults raise console alerts, on
		// the node's own topic: the server relays them to the console
		// naming this node.
		s.topic(msg.NodeAlertTopic(id)),
	)
	for _, c := range append(commandTopics[role], motorCommand...) {
		p.Publish.Deny = append(p.Publish.Deny, prefix+"."+c)
	}
	p.Subscribe.Allow = append(p.Subscribe.Allow,
		prefix+".>",
		"_srv."+prefix+".>", // the role's services (arm home, motor sessions, balance console)
	)
	if role == msg.RoleConsole {
		// What the console shows of the rest of the robot: the router's
		// status, every node's status and a role's power (its
		// battery_topic, which its configuration may name only among
		// those: a role's "{prefix}/power").
		p.Subscribe.Allow = append(p.Subscribe.Allow, consoleReads(s)...)
	}
	return p
}

// consoleReads are the topics outside its prefix the console role
// subscribes to.
func consoleReads(s subjects) []string {
	return []string{
		s.topic(msg.TopicRouterStatus),
		s.topic(msg.TopicAllNodeStatus),
		s.topic(msg.PowerTopic("/saint/+")),   // /saint/tracks/power
		s.topic(msg.PowerTopic("/saint/+/+")), // /saint/arms/left/power
	}
}
