package adoption

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/roles/rolespec"
	"github.com/saint-os/saint/server/firmware"
)

// Timing of the registries.
const (
	// OnlineWindow: an adopted node is online while its last status is
	// younger than this.
	OnlineWindow = 3 * time.Second
	// UnadoptedExpiry: an unadopted node that stopped announcing is dropped
	// from the list after this.
	UnadoptedExpiry = 10 * time.Second
	// DefaultCallTimeout bounds calls to a node's services.
	DefaultCallTimeout = 5 * time.Second
	// adoptionSettle is how long after an adoption an "unadopted" word from
	// the node is taken for a message sent before it: NATS delivers each
	// subscription on its own goroutine, so an announcement published just
	// before the adoption can arrive after its reply.
	adoptionSettle = 2 * time.Second
)

// Unadopted is a node announcing itself on its own
// /saint/nodes/{node_id}/announce (relayed on /saint/nodes/unadopted).
type Unadopted struct {
	NodeID    string             `json:"node_id"`
	Status    msg.NodeGPIOStatus `json:"gpio_status"`
	FirstSeen time.Time          `json:"first_seen"`
	LastSeen  time.Time          `json:"last_seen"`
	// BusKey is the public nkey the node connects to the bus with (an
	// authenticated bus only): the admin compares it with the one the
	// node prints before adopting it.
	BusKey string `json:"bus_key,omitempty"`
	// BusKeyEnrolled is true when BusKey is the key the node was enrolled
	// with before its first boot (flash_node.sh): the server knew it
	// before the node connected, so it is the node's own.
	BusKeyEnrolled bool `json:"bus_key_enrolled"`
}

// Adopted is an adopted node. The fields above Online are persisted.
type Adopted struct {
	NodeID        string    `json:"node_id"`
	Role          string    `json:"role"`
	Instance      string    `json:"instance,omitempty"`
	DisplayName   string    `json:"display_name"`
	AdoptedAt     time.Time `json:"adopted_at"`
	ConfigVersion string    `json:"config_version"`
	TopicPrefix   string    `json:"topic_prefix"`

	Online     bool            `json:"online"`
	LastSeen   time.Time       `json:"last_seen,omitzero"`
	LastStatus *msg.NodeStatus `json:"last_status,omitempty"`
	// NeedsAdoption says why the node, adopted here, must be adopted
	// again: the bus holds no grant of its role for its key (the grants
	// file was lost), so it gets none of its commands whatever it reports.
	// Its LastStatus then reads StateNeedsAdoption, never ACTIVE.
	NeedsAdoption string `json:"needs_adoption,omitempty"`
}

// StateNeedsAdoption is the state the server shows for an adopted node
// the bus does not grant its role (Adopted.NeedsAdoption), in place of
// the one it reports.
const StateNeedsAdoption = "NEEDS_ADOPTION"

// Options configures a Manager.
type Options struct {
	Exec     *executor.Executor // required
	Bus      bus.Bus            // required
	Firmware *firmware.Repository
	// DataDir is where the registry is kept (adopted.json); "" keeps it in
	// memory only.
	DataDir     string
	CallTimeout time.Duration
	Log         *slog.Logger
	// OnEvent is told of adoptions, resets and nodes appearing or going
	// offline, for the activity log. Called on the executor.
	OnEvent func(level, nodeID, text string)
	// Access, when set, is the authority of an authenticated bus
	// (server/busaccess): adopting a node grants its key the role's
	// subjects, resetting it revokes them, and a node is never taken
	// into the registry on its own word (an ACTIVE status, a stored role)
	// unless the bus already granted it that role.
	Access Access
	// Roles, when not nil, are the only role instances a node may be
	// adopted into: those the robot configuration of type RobotType
	// declares. Nil accepts every role.
	Roles     []RoleChoice
	RobotType string
}

// Access is the bus's authority over what each node's key may do.
type Access interface {
	// Grant gives node id's key the subjects of role (instance); key,
	// unless "", is the key the administrator was shown, and the grant
	// fails when the node connects with another.
	Grant(id, role, instance, key string) error
	// Revoke takes them away again.
	Revoke(id string) error
	// Role is the role node id's key was granted, if any.
	Role(id string) (role, instance string, ok bool)
	// NodeKey is the public key node id connects with, "" if unknown.
	NodeKey(id string) string
}

// Enrolments is an Access that knows the keys nodes were enrolled with
// before their first boot (busaccess.Authority).
type Enrolments interface {
	// Enrolled reports whether key is the one node id was enrolled with.
	Enrolled(id, key string) bool
}

// Manager is the server's adoption manager:
// it tracks unadopted and adopted nodes, adopts and resets them through
// their services, validates stored roles at node boot, and keeps the
// adopted registry on disk so a server restart loses nothing. Its methods
// run on Options.Exec.
type Manager struct {
	o         Options
	log       *slog.Logger
	unadopted map[string]*Unadopted
	adopted   map[string]*Adopted
	status    map[string]msg.NodeStatus // last status of any node
	// adopting is the role key each node being adopted is adopted into,
	// until its adopt service answers: the one role configuration it may
	// fetch meanwhile.
	adopting map[string]string
	subs     []bus.Subscription
	sweep    *executor.Timer
}

// New loads the registry from o.DataDir.
func New(o Options) (*Manager, error) {
	if o.Exec == nil || o.Bus == nil {
		return nil, errors.New("adoption: Exec and Bus are required")
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.OnEvent == nil {
		o.OnEvent = func(string, string, string) {}
	}
	m := &Manager{
		o: o, log: o.Log,
		unadopted: map[string]*Unadopted{},
		adopted:   map[string]*Adopted{},
		status:    map[string]msg.NodeStatus{},
		adopting:  map[string]string{},
	}
	if err := m.load(); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Manager) registryPath() string { return filepath.Join(m.o.DataDir, "adopted.json") }

func (m *Manager) load() error {
	if m.o.DataDir == "" {
		return nil
	}
	var list []*Adopted
	found, err := persist.ReadJSON(m.registryPath(), &list)
	if !found {
		return nil
	}
	if err != nil && !errors.Is(err, persist.ErrDamaged) {
		return fmt.Errorf("adoption: %w", err)
	}
	if err != nil {
		// Empty and null too: a registry with no node is written "[]".
		// A damaged registry must not keep the server from starting: it is
		// kept aside for repair, and the nodes come back into the registry
		// as they validate their stored roles.
		moved, mvErr := persist.MoveAside(m.registryPath(), m.o.Exec.Now())
		if mvErr != nil {
			return fmt.Errorf("adoption: %s: %w (and it could not be moved aside: %v)", m.registryPath(), err, mvErr)
		}
		why := fmt.Sprintf("%s is damaged (%v): moved to %s; adopted nodes rejoin the registry as they come online, "+
			"adopt any that do not, or repair that file and put it back while the server is stopped", m.registryPath(), err, moved)
		m.o.OnEvent("ERROR", "", why)
		return nil
	}
	for i, a := range list {
		if a == nil || !msg.ValidNodeID(a.NodeID) {
			m.o.OnEvent("ERROR", "", fmt.Sprintf("%s: entry %d is not a node (%s); skipped", m.registryPath(), i, describeEntry(a)))
			continue
		}
		role, inst, err := NormalizeRole(a.Role, a.Instance)
		if err != nil {
			m.o.OnEvent("ERROR", a.NodeID, fmt.Sprintf("%s: %s: %v; skipped, adopt it again", m.registryPath(), a.NodeID, err))
			continue
		}
		a.Role, a.Instance = role, inst
		a.Online, a.LastStatus = false, nil
		m.adopted[a.NodeID] = a
	}
	return nil
}

func describeEntry(a *Adopted) string {
	if a == nil {
		return "null"
	}
	return fmt.Sprintf("node_id %q", a.NodeID)
}

func (m *Manager) save() error {
	if m.o.DataDir == "" {
		return nil
	}
	type record struct {
		NodeID        string    `json:"node_id"`
		Role          string    `json:"role"`
		Instance      string    `json:"instance,omitempty"`
		DisplayName   string    `json:"display_name"`
		AdoptedAt     time.Time `json:"adopted_at"`
		ConfigVersion string    `json:"config_version"`
		TopicPrefix   string    `json:"topic_prefix"`
	}
	list := []record{}
	for _, a := range m.Adopted() {
		list = append(list, record{a.NodeID, a.Role, a.Instance, a.DisplayName, a.AdoptedAt, a.ConfigVersion, a.TopicPrefix})
	}
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("adoption: %w", err)
	}
	return persist.WriteFile(m.registryPath(), append(data, '\n'), 0o600)
}

// Start subscribes to announcements and statuses and serves the server's
// adoption and role services.
func (m *Manager) Start() error {
	ex, b := m.o.Exec, m.o.Bus
	// Messages that do not decode are counted and logged by the bus.
	for _, start := range []func() (bus.Subscription, error){
		func() (bus.Subscription, error) {
			return bus.SubscribeJSON(b, msg.TopicAllNodeAnnounce, bus.QoS{Reliability: bus.BestEffort, Depth: 100}, ex, m.onAnnouncement)
		},
		func() (bus.Subscription, error) {
			return bus.SubscribeJSON(b, msg.TopicAllNodeStatus, bus.QoS{Depth: 100}, ex, m.onStatus)
		},
		func() (bus.Subscription, error) { return bus.ServeJSON(b, msg.ServiceAdopt, ex, m.serveAdopt) },
		func() (bus.Subscription, error) { return bus.ServeJSON(b, msg.ServiceReset, ex, m.serveReset) },
		func() (bus.Subscription, error) {
			return bus.ServeJSONWithName(b, msg.ServiceAllNodesRoleConfig, ex, m.serveRoleConfig)
		},
		func() (bus.Subscription, error) {
			return bus.ServeJSONWithName(b, msg.ServiceAllNodesValidateRole, ex, m.serveValidate)
		},
		func() (bus.Subscription, error) {
			return bus.ServeJSON(b, msg.LegacyServiceRoleConfig, ex, refuseLegacy[msg.RoleConfigRequest, msg.RoleConfigResponse](msg.NodeRoleConfigService))
		},
		func() (bus.Subscription, error) {
			return bus.ServeJSON(b, msg.LegacyServiceValidateRole, ex, refuseLegacy[msg.ValidateRoleRequest, msg.ValidateRoleResponse](msg.NodeValidateRoleService))
		},
	} {
		sub, err := start()
		if err != nil {
			return err
		}
		m.subs = append(m.subs, sub)
	}
	m.sweep = ex.Every(time.Second, m.sweepStale)
	return nil
}

// Stop ends the manager's subscriptions.
func (m *Manager) Stop() {
	if m.sweep != nil {
		m.sweep.Stop()
	}
	for _, s := range m.subs {
		_ = s.Unsubscribe()
	}
	m.subs = nil
}

func (m *Manager) onAnnouncement(topic string, st msg.NodeGPIOStatus) {
	if !msg.ValidNodeID(st.NodeID) || topic != msg.NodeAnnounceTopic(st.NodeID) {
		// The topic is the one the bus lets only that node publish on.
		m.log.Warn("bad announcement", "topic", topic, "node_id", st.NodeID)
		return
	}
	if m.o.Access != nil && m.o.Access.NodeKey(st.NodeID) == "" {
		// Sent by a connection the bus has let go since (its unadopted id
		// made room for another): the list holds only ids the bus knows,
		// so it is as bounded as the bus's.
		return
	}
	now := m.o.Exec.Now()
	if a, ok := m.adopted[st.NodeID]; ok {
		if now.Sub(a.AdoptedAt) < adoptionSettle || m.o.Access != nil {
			// Sent before the adoption; on an authenticated bus an adopted
			// node may not announce at all, so this one was too: only the
			// node's own status topic clears its adoption there.
			return
		}
		m.forget(a, "announced itself unadopted")
	}
	u, ok := m.unadopted[st.NodeID]
	if !ok {
		u = &Unadopted{NodeID: st.NodeID, FirstSeen: now}
		m.unadopted[st.NodeID] = u
		m.o.OnEvent("INFO", st.NodeID, "unadopted node "+st.NodeID+" discovered")
	}
	u.Status, u.LastSeen = st, now
	// The announcement on the topic every subscriber knows, now that its
	// node id is checked.
	if err := m.o.Bus.Publish(msg.TopicUnadopted, st); err != nil && !errors.Is(err, bus.ErrClosed) {
		m.log.Debug("announcement not relayed", "node_id", st.NodeID, "err", err)
	}
}

func (m *Manager) onStatus(topic string, st msg.NodeStatus) {
	if !msg.ValidNodeID(st.NodeID) || topic != msg.NodeStatusTopic(st.NodeID) {
		// The topic is the one the bus lets only that node publish on.
		m.log.Warn("bad node status", "topic", topic, "node_id", st.NodeID)
		return
	}
	now := m.o.Exec.Now()
	a, ok := m.adopted[st.NodeID]
	if ok {
		st = m.checkGranted(a, st)
	}
	m.status[st.NodeID] = st
	switch {
	case ok && st.State == msg.StateUnadopted && now.Sub(a.AdoptedAt) >= adoptionSettle:
		// Reset behind the server's back (button held).
		m.forget(a, "reports itself unadopted")
		ok = false
	case !ok && st.State == msg.StateActive && st.Role != "":
		// An ACTIVE node the registry does not know (the registry was lost
		// or the node was adopted elsewhere): the role lives on the node
		// until an explicit reset, so take it in.
		if role, inst, err := NormalizeRole(st.Role, st.Instance); err == nil && m.granted(st.NodeID, role, inst) {
			a = m.register(st.NodeID, role, inst, st.ConfigVersion)
			ok = true
			m.o.OnEvent("INFO", st.NodeID, fmt.Sprintf("%s is ACTIVE as %s; added to the registry", st.NodeID, msg.RoleKey(role, inst)))
		}
	}
	if ok {
		if !a.Online {
			m.o.OnEvent("INFO", st.NodeID, fmt.Sprintf("%s (%s) online, %s", a.DisplayName, st.NodeID, st.State))
		}
		a.Online, a.LastSeen = true, now
		s := st
		a.LastStatus = &s
	}
	if st.State != msg.StateUnadopted {
		delete(m.unadopted, st.NodeID)
	}
}

// checkGranted is what the server shows of st, the status of adopted
// node a: on an authenticated bus a node whose key is not granted its
// role receives none of its commands, so it is shown as needing adoption
// whatever state it reports. It sets a.NeedsAdoption, and reports the
// change once as an error event.
func (m *Manager) checkGranted(a *Adopted, st msg.NodeStatus) msg.NodeStatus {
	why := m.ungranted(a, st.State)
	if why == "" {
		a.NeedsAdoption = ""
		return st
	}
	if a.NeedsAdoption == "" {
		m.o.OnEvent("ERROR", a.NodeID, why)
	}
	a.NeedsAdoption = why
	st.State, st.Message = StateNeedsAdoption, why
	return st
}

// ungranted says why adopted node a, reporting state, must be adopted
// again (the bus does not grant its key its role), or "".
func (m *Manager) ungranted(a *Adopted, state string) string {
	if state == msg.StateUnadopted || m.granted(a.NodeID, a.Role, a.Instance) {
		return ""
	}
	why := fmt.Sprintf("%s reports %s as %s but the bus does not grant its key that role: it receives none of its commands; reset it and adopt it again",
		a.NodeID, state, msg.RoleKey(a.Role, a.Instance))
	if lost := m.grantsLost(); lost != "" {
		why += " (" + lost + ")"
	}
	return why
}

// Shown is the status the server shows for st, as a node reported it:
// for an adopted node the bus does not grant its role, StateNeedsAdoption
// and why, as in the registry (Adopted.LastStatus); st itself otherwise.
// It changes nothing, so every view of a node's status (the live node
// stream too) can agree with get_node_info whatever order the status
// reaches them in. Run it on Options.Exec.
func (m *Manager) Shown(st msg.NodeStatus) msg.NodeStatus {
	a, ok := m.adopted[st.NodeID]
	if !ok {
		return st
	}
	if why := m.ungranted(a, st.State); why != "" {
		st.State, st.Message = StateNeedsAdoption, why
	}
	return st
}

// Unreachable says why commands to router target ("head", "arms.left",
// "arms.left.pose") cannot reach its node: every node adopted into that
// role is shown as needing adoption (Adopted.NeedsAdoption). It is ""
// otherwise, with no such node too. Run it on Options.Exec.
func (m *Manager) Unreachable(target string) string {
	parts := strings.Split(target, ".")
	role, inst := parts[0], ""
	if len(parts) > 1 {
		inst = parts[1]
	}
	want := msg.RoleKey(role, inst)
	why := ""
	for _, a := range m.adopted {
		if msg.RoleKey(a.Role, a.Instance) != want {
			continue
		}
		if a.NeedsAdoption == "" {
			return ""
		}
		why = a.NeedsAdoption
	}
	return why
}

// grantsLost says why the bus's grants were not trusted at start, "" if
// they were (or there is no authority).
func (m *Manager) grantsLost() string {
	if l, ok := m.o.Access.(interface{ GrantsLost() string }); ok {
		return l.GrantsLost()
	}
	return ""
}

// granted reports whether the bus lets node id act as role (instance):
// always without an authenticated bus.
func (m *Manager) granted(id, role, inst string) bool {
	if m.o.Access == nil {
		return true
	}
	r, i, ok := m.o.Access.Role(id)
	return ok && r == role && i == inst
}

// revoke takes node id's role subjects away on the bus, if there is an
// authority.
func (m *Manager) revoke(id string) {
	if m.o.Access == nil {
		return
	}
	if err := m.o.Access.Revoke(id); err != nil {
		m.log.Error("bus permissions not revoked", "node_id", id, "err", err)
		m.o.OnEvent("ERROR", id, fmt.Sprintf("%s: bus permissions not revoked: %v", id, err))
	}
}

// register records a node found ACTIVE in a role the registry did not
// have, and saves the registry.
func (m *Manager) register(id, role, inst, configVersion string) *Adopted {
	a := &Adopted{NodeID: id, Role: role, Instance: inst, DisplayName: defaultDisplayName(role, inst),
		AdoptedAt: m.o.Exec.Now().UTC(), TopicPrefix: msg.TopicPrefix(role, inst), ConfigVersion: configVersion,
		Online: true, LastSeen: m.o.Exec.Now()}
	m.adopted[id] = a
	delete(m.unadopted, id)
	if err := m.save(); err != nil {
		m.log.Error("registry not saved", "err", err)
	}
	return a
}

// forget drops an adoption the node itself no longer holds.
func (m *Manager) forget(a *Adopted, why string) {
	delete(m.adopted, a.NodeID)
	m.revoke(a.NodeID)
	if err := m.save(); err != nil {
		m.log.Error("registry not saved", "err", err)
	}
	m.o.OnEvent("WARNING", a.NodeID, fmt.Sprintf("%s (%s) %s; adoption cleared", a.DisplayName, a.NodeID, why))
}

func (m *Manager) sweepStale() {
	now := m.o.Exec.Now()
	for id, u := range m.unadopted {
		if m.o.Access != nil && m.o.Access.NodeKey(id) == "" {
			// The bus let its id go to make room for another node.
			delete(m.unadopted, id)
			continue
		}
		if now.Sub(u.LastSeen) > UnadoptedExpiry {
			delete(m.unadopted, id)
			m.o.OnEvent("INFO", id, "unadopted node "+id+" stopped announcing")
		}
	}
	for id, a := range m.adopted {
		if a.Online && now.Sub(a.LastSeen) > OnlineWindow {
			a.Online = false
			m.o.OnEvent("WARNING", id, fmt.Sprintf("%s (%s) offline", a.DisplayName, id))
		}
	}
}

// Unadopted lists the unadopted nodes ordered by id.
func (m *Manager) Unadopted() []*Unadopted {
	out := make([]*Unadopted, 0, len(m.unadopted))
	for _, u := range m.unadopted {
		if m.o.Access != nil {
			u.BusKey = m.o.Access.NodeKey(u.NodeID)
		}
		if e, ok := m.o.Access.(Enrolments); ok && u.BusKey != "" {
			u.BusKeyEnrolled = e.Enrolled(u.NodeID, u.BusKey)
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// Adopted lists the adopted nodes ordered by id.
func (m *Manager) Adopted() []*Adopted {
	out := make([]*Adopted, 0, len(m.adopted))
	for _, a := range m.adopted {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// Lookup returns what the server knows of a node.
func (m *Manager) Lookup(id string) (u *Unadopted, a *Adopted, st *msg.NodeStatus) {
	u, a = m.unadopted[id], m.adopted[id]
	if s, ok := m.status[id]; ok {
		st = &s
	}
	return u, a, st
}

// RoleChoice is a role the UI can offer.
type RoleChoice struct {
	Key      string `json:"key"`
	Role     string `json:"role"`
	Instance string `json:"instance,omitempty"`
}

// Roles returns the role instances a node may be adopted into and the
// robot type that declares them; with no robot type, roles is nil and
// every role is accepted.
func (m *Manager) Roles() (robotType string, roles []RoleChoice) {
	if m.o.Roles == nil {
		return "", nil
	}
	return m.o.RobotType, append([]RoleChoice{}, m.o.Roles...)
}

// declared refuses a role instance the robot type does not declare,
// naming those it does.
func (m *Manager) declared(role, instance string) error {
	if m.o.Roles == nil {
		return nil
	}
	for _, c := range m.o.Roles {
		if c.Role == role && c.Instance == instance {
			return nil
		}
	}
	what := role
	if instance != "" {
		what += " " + instance
	}
	return &ParamError{Field: "role", Message: fmt.Sprintf("robot type %s has no %s: its robot configuration declares %s", m.o.RobotType, what, m.declaredList())}
}

// declaredList names the declared roles for an error: each role once, in
// the robot's order, with its instances ("limb (instance leg_left,
// neck)"), or every role when the server runs without a robot type.
func (m *Manager) declaredList() string {
	if m.o.Roles == nil {
		return "head, arms_left, arms_right, tracks, console or balance"
	}
	var order []string
	instances := map[string][]string{}
	for _, c := range m.o.Roles {
		if _, ok := instances[c.Role]; !ok {
			order = append(order, c.Role)
			instances[c.Role] = nil
		}
		if c.Instance != "" {
			instances[c.Role] = append(instances[c.Role], c.Instance)
		}
	}
	names := make([]string, len(order))
	for i, r := range order {
		names[i] = r
		if in := instances[r]; len(in) > 0 {
			names[i] += " (instance " + strings.Join(in, ", ") + ")"
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ParamError is a request error that names the parameter at fault: the
// project's field error, which the WebSocket gateway reports with its
// field.
type ParamError = fielderr.Error

// NormalizeRole accepts a role with its instance ("arms", "left"), or a
// Sides role's key ("arms_left"), and checks the instance fits the role.
func NormalizeRole(role, instance string) (string, string, error) {
	for _, s := range rolespec.Table() {
		if s.Instances != rolespec.Sides {
			continue
		}
		for _, side := range []string{rolespec.Left, rolespec.Right} {
			if role != rolespec.Key(s.Name, side) {
				continue
			}
			if instance != "" && instance != side {
				return "", "", &ParamError{Field: "instance", Message: fmt.Sprintf("%q contradicts role %q", instance, role)}
			}
			return s.Name, side, nil
		}
	}
	spec, ok := rolespec.Lookup(role)
	if !ok {
		return "", "", &ParamError{Field: "role", Message: fmt.Sprintf("%q is not a role; want one of %s", role, knownRoles())}
	}
	if spec.Instances == rolespec.Single {
		if instance != "" {
			return "", "", &ParamError{Field: "instance", Message: fmt.Sprintf("role %s has no instances, got %q", role, instance)}
		}
		return role, instance, nil
	}
	if !spec.ValidInstance(instance) {
		return "", "", &ParamError{Field: "instance", Message: fmt.Sprintf("%s needs %s, got %q", role, spec.InstanceRule(), instance)}
	}
	return role, instance, nil
}

// knownRoles lists the roles NormalizeRole takes, as an error's "want":
// "head, arms (with instance left or right), arms_left, arms_right, …".
func knownRoles() string {
	var names []string
	for _, s := range rolespec.Table() {
		switch s.Instances {
		case rolespec.Sides:
			names = append(names, s.Name+" (with instance left or right)", rolespec.Key(s.Name, rolespec.Left), rolespec.Key(s.Name, rolespec.Right))
		case rolespec.Named:
			names = append(names, s.Name+" (with an instance)")
		default:
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ", ")
}

// Adopt adopts an unadopted node: it calls the node's adopt service, which
// downloads its configuration, verifies its peripherals and starts the
// role, and records the adoption once the node reports success. done runs
// on the executor.
func (m *Manager) Adopt(req msg.AdoptNodeRequest, done func(msg.AdoptNodeResponse, error)) {
	if !msg.ValidNodeID(req.NodeID) {
		done(msg.AdoptNodeResponse{}, &ParamError{Field: "node_id", Message: fmt.Sprintf("%q is not a node id", req.NodeID)})
		return
	}
	role, inst, err := NormalizeRole(req.Role, req.Instance)
	if err == nil {
		err = m.declared(role, inst)
	}
	if err != nil {
		done(msg.AdoptNodeResponse{}, err)
		return
	}
	if a, ok := m.adopted[req.NodeID]; ok {
		done(msg.AdoptNodeResponse{}, &ParamError{Field: "node_id", Message: fmt.Sprintf("%s is already adopted as %s; reset it first", req.NodeID, msg.RoleKey(a.Role, a.Instance))})
		return
	}
	if cur, ok := m.adopting[req.NodeID]; ok {
		// A second adoption would change the node's grant and the role
		// its configuration fetch is checked against under the first.
		done(msg.AdoptNodeResponse{}, &ParamError{Field: "node_id", Message: fmt.Sprintf("%s is being adopted as %s; wait for that to finish", req.NodeID, cur)})
		return
	}
	if _, ok := m.unadopted[req.NodeID]; !ok {
		done(msg.AdoptNodeResponse{}, &ParamError{Field: "node_id", Message: fmt.Sprintf("no unadopted node %s is announcing itself", req.NodeID)})
		return
	}
	for _, a := range m.adopted {
		if a.Role == role && a.Instance == inst {
			m.o.OnEvent("WARNING", req.NodeID, fmt.Sprintf("%s also holds role %s", a.NodeID, msg.RoleKey(role, inst)))
		}
	}
	req.Role, req.Instance = role, inst
	if m.o.Firmware != nil {
		if _, ver, _, err := m.o.Firmware.RoleConfig(role, inst); err == nil {
			req.ConfigVersion = ver
		} else {
			done(msg.AdoptNodeResponse{}, &ParamError{Field: "role", Message: err.Error()})
			return
		}
	}
	display := req.DisplayName
	if m.o.Access != nil {
		if cur := m.o.Access.NodeKey(req.NodeID); req.BusKey != "" && cur != "" && cur != req.BusKey {
			done(msg.AdoptNodeResponse{}, &ParamError{Field: "bus_key", Message: fmt.Sprintf("%s now connects with key %s, not %s: compare the new key with the one the node logs before adopting it", req.NodeID, cur, req.BusKey)})
			return
		}
		// The node needs its role's subjects before it starts the role;
		// it reconnects under them, so the call below waits for it.
		if err := m.o.Access.Grant(req.NodeID, role, inst, req.BusKey); err != nil {
			done(msg.AdoptNodeResponse{}, fmt.Errorf("node %s: granting its bus permissions: %w", req.NodeID, err))
			return
		}
	}
	m.adopting[req.NodeID] = msg.RoleKey(role, inst)
	m.callNode(msg.NodeAdoptService(req.NodeID), req, m.o.Exec.Now().Add(m.o.CallTimeout), func(resp msg.AdoptNodeResponse, err error) {
		if m.adopting[req.NodeID] == msg.RoleKey(role, inst) {
			delete(m.adopting, req.NodeID)
		}
		if err != nil {
			m.revoke(req.NodeID)
			done(resp, fmt.Errorf("node %s did not answer the adoption: %w", req.NodeID, err))
			return
		}
		if !resp.Success {
			m.revoke(req.NodeID)
			m.o.OnEvent("ERROR", req.NodeID, fmt.Sprintf("adoption of %s as %s refused: %s", req.NodeID, msg.RoleKey(role, inst), resp.Message))
			done(resp, nil)
			return
		}
		if display == "" {
			display = defaultDisplayName(role, inst)
		}
		a := &Adopted{
			NodeID: req.NodeID, Role: role, Instance: inst, DisplayName: display,
			AdoptedAt: m.o.Exec.Now().UTC(), ConfigVersion: req.ConfigVersion,
			TopicPrefix: resp.AssignedTopicPrefix, Online: true, LastSeen: m.o.Exec.Now(),
		}
		if st, ok := m.status[req.NodeID]; ok {
			a.LastStatus = &st
		}
		m.adopted[req.NodeID] = a
		delete(m.unadopted, req.NodeID)
		if err := m.save(); err != nil {
			m.log.Error("registry not saved", "err", err)
			done(resp, fmt.Errorf("node adopted but the registry was not saved: %w", err))
			return
		}
		m.o.OnEvent("INFO", req.NodeID, fmt.Sprintf("%s adopted as %s (%s)", req.NodeID, msg.RoleKey(role, inst), display))
		done(resp, nil)
	})
}

// nodeRetry is the pause between calls to a node that is reconnecting
// (its bus permissions just changed).
const nodeRetry = 50 * time.Millisecond

// callNode calls a node's adopt service, calling again while nobody
// answers (the node reconnecting) until deadline.
func (m *Manager) callNode(service string, req msg.AdoptNodeRequest, deadline time.Time, done func(msg.AdoptNodeResponse, error)) {
	left := deadline.Sub(m.o.Exec.Now())
	bus.CallAsyncJSON(m.o.Bus, service, req, left, m.o.Exec, func(resp msg.AdoptNodeResponse, err error) {
		if errors.Is(err, bus.ErrNoResponders) && m.o.Access != nil && m.o.Exec.Now().Add(nodeRetry).Before(deadline) {
			m.o.Exec.After(nodeRetry, func() { m.callNode(service, req, deadline, done) })
			return
		}
		done(resp, err)
	})
}

// defaultDisplayName is the name of a node adopted without one: its
// role's (rolespec), "Arms L", "Limb leg left".
func defaultDisplayName(role, instance string) string {
	s, _ := rolespec.Lookup(role)
	return s.DefaultDisplayName(instance)
}

// Reset resets a node through its reset service and forgets its adoption.
func (m *Manager) Reset(req msg.ResetNodeRequest, done func(msg.ResetNodeResponse, error)) {
	if !msg.ValidNodeID(req.NodeID) {
		done(msg.ResetNodeResponse{}, &ParamError{Field: "node_id", Message: fmt.Sprintf("%q is not a node id", req.NodeID)})
		return
	}
	_, adopted := m.adopted[req.NodeID]
	_, unadopted := m.unadopted[req.NodeID]
	if !adopted && !unadopted {
		done(msg.ResetNodeResponse{}, &ParamError{Field: "node_id", Message: "unknown node " + req.NodeID})
		return
	}
	bus.CallAsyncJSON(m.o.Bus, msg.NodeResetService(req.NodeID), req, m.o.CallTimeout, m.o.Exec, func(resp msg.ResetNodeResponse, err error) {
		if err != nil {
			done(resp, fmt.Errorf("node %s did not answer the reset (is it online?): %w", req.NodeID, err))
			return
		}
		if !resp.Success {
			done(resp, nil)
			return
		}
		m.revoke(req.NodeID)
		if _, ok := m.adopted[req.NodeID]; ok {
			delete(m.adopted, req.NodeID)
			if err := m.save(); err != nil {
				done(resp, fmt.Errorf("node reset but the registry was not saved: %w", err))
				return
			}
		}
		kind := "reset"
		if req.FactoryReset {
			kind = "factory reset"
		}
		m.o.OnEvent("INFO", req.NodeID, fmt.Sprintf("%s %s", req.NodeID, kind))
		done(resp, nil)
	})
}

// SetDisplayName renames an adopted node.
func (m *Manager) SetDisplayName(id, name string) error {
	a, ok := m.adopted[id]
	if !ok {
		return &ParamError{Field: "node_id", Message: "no adopted node " + id}
	}
	if name == "" || len(name) > 64 {
		return &ParamError{Field: "display_name", Message: "want 1–64 characters"}
	}
	a.DisplayName = name
	return m.save()
}

func (m *Manager) serveAdopt(req msg.AdoptNodeRequest, reply func(msg.AdoptNodeResponse, error)) {
	m.Adopt(req, func(resp msg.AdoptNodeResponse, err error) {
		if err != nil {
			resp.Message = err.Error()
		}
		reply(resp, nil)
	})
}

func (m *Manager) serveReset(req msg.ResetNodeRequest, reply func(msg.ResetNodeResponse, error)) {
	m.Reset(req, func(resp msg.ResetNodeResponse, err error) {
		if err != nil {
			resp.Message = err.Error()
		}
		reply(resp, nil)
	})
}

// errOtherNode refuses a request sent to one node's own service that names
// another node.
var errOtherNode = errors.New("a node may ask only for itself")

// requester is the node a per-node service's request came from: the id
// in the name it was sent to, which on an authenticated bus only that
// node's key may call. A node_id in the request, where there is one, must
// be the same.
func requester(name, bodyID string) (string, error) {
	id, ok := msg.NodeOfName(name)
	if !ok {
		return "", fmt.Errorf("%s is not a node's own service", name)
	}
	if bodyID != "" && bodyID != id {
		return "", fmt.Errorf("node_id: %q, but the request was sent to %s's own service: %w", bodyID, id, errOtherNode)
	}
	return id, nil
}

// serveRoleConfig gives a node the configuration of the role it is being
// adopted into (or is adopted as), and no other: a role's configuration
// may hold what only its node should know.
func (m *Manager) serveRoleConfig(name string, req msg.RoleConfigRequest, reply func(msg.RoleConfigResponse, error)) {
	id, err := requester(name, req.NodeID)
	if err != nil {
		reply(msg.RoleConfigResponse{}, err)
		return
	}
	if m.o.Firmware == nil {
		reply(msg.RoleConfigResponse{Message: "server has no role configurations"}, nil)
		return
	}
	role, inst, err := NormalizeRole(req.Role, req.Instance)
	if err != nil {
		reply(msg.RoleConfigResponse{Message: err.Error()}, nil)
		return
	}
	if !m.holds(id, role, inst) {
		reply(msg.RoleConfigResponse{Message: fmt.Sprintf("%s is not being adopted as %s on this server", id, msg.RoleKey(role, inst))}, nil)
		return
	}
	data, ver, sum, err := m.o.Firmware.RoleConfig(role, inst)
	if err != nil {
		reply(msg.RoleConfigResponse{Message: err.Error()}, nil)
		return
	}
	reply(msg.RoleConfigResponse{Success: true, Version: ver, Checksum: sum, Config: string(data)}, nil)
}

// holds reports whether node id is being adopted as role (instance), or is
// adopted as it, with the bus's grant where there is an authority.
func (m *Manager) holds(id, role, inst string) bool {
	want := msg.RoleKey(role, inst)
	if m.adopting[id] != want {
		a, ok := m.adopted[id]
		if !ok || msg.RoleKey(a.Role, a.Instance) != want {
			return false
		}
	}
	return m.granted(id, role, inst)
}

// refuseLegacy answers a shared service of older firmware, which named
// the node only in the request, with an error that tells the node (in its
// status message) to update. The old firmware keeps its stored role and
// asks again later: an error, unlike an invalid role, clears nothing.
func refuseLegacy[Req, Resp any](perNode func(string) string) func(Req, func(Resp, error)) {
	text := fmt.Sprintf("refused: a node now calls its own %s, which the bus lets only that node call; update this node's firmware",
		perNode("{node_id}"))
	return func(_ Req, reply func(Resp, error)) {
		var zero Resp
		reply(zero, errors.New(text))
	}
}

// serveValidate checks a stored role at node boot. A node the server does
// not know as adopted (its registry was lost, or the node was adopted by
// another server) is taken into the registry: the role lives on the node
// until an explicit reset.
func (m *Manager) serveValidate(name string, req msg.ValidateRoleRequest, reply func(msg.ValidateRoleResponse, error)) {
	id, err := requester(name, req.NodeID)
	if err != nil {
		reply(msg.ValidateRoleResponse{}, err)
		return
	}
	req.NodeID = id
	role, inst, err := NormalizeRole(req.Role, req.Instance)
	if err != nil {
		reply(msg.ValidateRoleResponse{Message: err.Error()}, nil)
		return
	}
	resp := msg.ValidateRoleResponse{Valid: true, Message: "role valid"}
	if m.o.Firmware != nil {
		data, ver, sum, err := m.o.Firmware.RoleConfig(role, inst)
		if err != nil {
			reply(msg.ValidateRoleResponse{Message: err.Error()}, nil)
			return
		}
		if sum != req.ConfigSum {
			resp.Config, resp.ConfigVersion, resp.Checksum = string(data), ver, sum
			resp.Message = fmt.Sprintf("configuration updated %s → %s", req.ConfigVersion, ver)
		}
	}
	a, ok := m.adopted[req.NodeID]
	if ok && (a.Role != role || a.Instance != inst) {
		reply(msg.ValidateRoleResponse{Message: fmt.Sprintf("server has %s adopted as %s, node says %s", req.NodeID, msg.RoleKey(a.Role, a.Instance), msg.RoleKey(role, inst))}, nil)
		return
	}
	migrate := false
	if !m.granted(req.NodeID, role, inst) {
		if lost := m.grantsLost(); lost != "" {
			// The grants were lost, not never made: the key this node
			// connects with now is no proof it is the node adopted.
			reply(msg.ValidateRoleResponse{Message: fmt.Sprintf("%s is not adopted on this server's bus (%s): adopt it again", req.NodeID, lost)}, nil)
			return
		}
		if !ok {
			reply(msg.ValidateRoleResponse{Message: fmt.Sprintf("%s is not adopted on this server's bus: adopt it again", req.NodeID)}, nil)
			return
		}
		// In the registry but never granted on the bus (a registry from
		// before the bus was authenticated): the key the node connects with
		// now is taken as its own, once the answer is on its way (the grant
		// reconnects the node).
		migrate = true
	}
	if !ok {
		a = m.register(req.NodeID, role, inst, req.ConfigVersion)
		m.o.OnEvent("INFO", req.NodeID, fmt.Sprintf("%s resumed role %s; added to the registry", req.NodeID, msg.RoleKey(role, inst)))
	}
	a.ConfigVersion = req.ConfigVersion
	if resp.ConfigVersion != "" {
		a.ConfigVersion = resp.ConfigVersion
	}
	a.Online, a.LastSeen = true, m.o.Exec.Now()
	delete(m.unadopted, req.NodeID)
	if err := m.save(); err != nil {
		m.log.Error("registry not saved", "err", err)
	}
	reply(resp, nil)
	if migrate {
		if err := m.o.Access.Grant(req.NodeID, role, inst, ""); err != nil {
			m.o.OnEvent("ERROR", req.NodeID, fmt.Sprintf("%s: bus permissions for %s not granted: %v", req.NodeID, msg.RoleKey(role, inst), err))
			return
		}
		m.o.OnEvent("WARNING", req.NodeID, fmt.Sprintf("%s (adopted as %s) had no bus key on record; granted the key %s it connects with", req.NodeID, msg.RoleKey(role, inst), m.o.Access.NodeKey(req.NodeID)))
	}
}
