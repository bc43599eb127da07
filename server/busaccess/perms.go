package busaccess

import (
	"sort"
	"strings"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/roles/rolespec"
)

// A role's command topics (rolespec.RoleSpec.CommandTopics) are the
// topics under its prefix that others send it: the node subscribes to
// them and may not publish on them (a node cannot forge its own commands
// either). The console's alerts are the server's to send: each names the
// node that raised it on its own alert topic.

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
			// Answers to the requests it serves, in the caller's inbox.
			// Not NATS's response permission: that lets a client publish
			// once to the reply subject of any message it receives, and
			// a node subscribed to its own prefix would name a command
			// topic as the reply subject of its own status, receive it
			// and answer there.
			replySubjects,
		}},
		Subscribe: &natsserver.SubjectPermission{Allow: []string{
			s.service("/saint/node/" + id + "/#"),
			natsbus.NodeInboxPrefix(id) + ".>",
			s.topic(msg.TopicServerHeartbeat),
		}},
	}
}

// replySubjects are the subjects replies go to: the inboxes clients make
// for their requests (bus/natsbus, nats.go). Each is a random name under a
// prefix only its client may subscribe to (a node's is NodeInboxPrefix),
// so whoever else a request names, an answer reaches only an asker.
const replySubjects = "_INBOX.>"

// servicePermissions is what saint-server's service connection
// (natsbus.ServerServicesName) may do: receive the requests of the
// services it serves and answer them in inboxes. Whatever subject a
// request names as its reply, the server's answer cannot land on a topic
// (a command topic, with the server's rights); the broker refuses it and
// the server counts the refusal.
func servicePermissions() *natsserver.Permissions {
	return &natsserver.Permissions{
		Publish:   &natsserver.SubjectPermission{Allow: []string{replySubjects}},
		Subscribe: &natsserver.SubjectPermission{Allow: []string{"_srv.>"}},
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
	spec, _ := rolespec.Lookup(role)
	for _, c := range spec.CommandTopics {
		p.Publish.Deny = append(p.Publish.Deny, s.topic(msg.TopicPrefix(role, instance)+"/"+c))
	}
	for _, c := range motorCommand {
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

// CommandSubjects are the NATS subjects, in namespace, of the roles'
// command topics (rolespec's table, and the control_command of a role with
// a motor middleware): what only the server (and the tools and bridge)
// may publish, and what a forged reply subject would aim at. A role with
// sides is listed with "left" and "right"; a role with named instances
// with the wildcard "*" in the instance's place.
func CommandSubjects(namespace string) []string {
	s := newSubjects(namespace)
	var out []string
	for _, spec := range rolespec.Table() {
		instances := map[rolespec.Instances][]string{
			rolespec.Single: {""}, rolespec.Sides: {rolespec.Left, rolespec.Right}, rolespec.Named: {"+"},
		}[spec.Instances]
		for _, in := range instances {
			prefix := msg.TopicPrefix(spec.Name, in)
			for _, c := range spec.CommandTopics {
				out = append(out, s.topic(prefix+"/"+c))
			}
			if spec.MotorMiddleware {
				out = append(out, s.topic(prefix+"/"+msg.MotorControlCommand))
			}
		}
	}
	sort.Strings(out)
	return out
}
