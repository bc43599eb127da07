package motors

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolespec"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

// Topic is the WebSocket topic carrying msg.MotorsStatus: the groups and
// who holds them.
const Topic = "motors"

// JointsTopic is the WebSocket topic carrying each motor group's
// joint_states as its node publishes them (JointStatesUpdate), several
// groups on one topic: clients subscribe at every update (rate_hz 0).
const JointsTopic = "joint_states"

// Target is the WebSocket command target of the actions.
const Target = "motors"

// Timing of the feature's calls to the node middlewares.
const (
	// PollInterval is how often each group's get_available_motors is
	// asked (motors, names, reachability).
	PollInterval = time.Second
	// CallTimeout bounds a call to a node middleware.
	CallTimeout = 2 * time.Second
	// ResetZeroTimeout bounds a forwarded reset_zero (the nodes' 10 s
	// default and some margin).
	ResetZeroTimeout = 15 * time.Second
	// ConfirmWithin is how long after a grant a node's session_status
	// showing no session of the root's may still be one it published
	// before granting; later, the node has lost the session (a node
	// publishes its session_status as it grants, and at its state rate).
	ConfirmWithin = 2 * time.Second
)

// Group is one node middleware: a motor role's motors.
type Group struct {
	// Name names the group in messages ("arms_left").
	Name string
	// Prefix is the node middleware's prefix ("/saint/arms/left").
	Prefix string
	// Role and Instance are the motor role's node ("limb", "leg_left").
	Role, Instance string
	// Base is added to the node's motor ids to make robot-wide ones.
	Base int
	// JointPrefix is put before the node's joint names ("left_").
	JointPrefix string
	// Drives says the group's motors are speed-controlled drives (the
	// tracks, the balancing base): VELOCITY is their mode, and holding
	// them where they are is a VELOCITY of zero.
	Drives bool
}

// DefaultGroups are the robot's motor roles with middlewares: the two
// arms (motors 11–15 and 21–25), the head (31–33), the tracks (41, 42)
// and the balancing base's wheels (51, 52).
func DefaultGroups() []Group { return groupsFrom(bringup.DefaultMotorGroups()) }

// drivesRole says whether a role's motors are speed-controlled drives.
func drivesRole(role string) bool {
	s, _ := rolespec.Lookup(role)
	return s.Drives
}

// Options configures the feature.
type Options struct {
	// Groups are the node middlewares; nil means DefaultGroups.
	Groups []Group
	// Rand is the source of session uuids; nil means crypto/rand.
	Rand io.Reader
	// Robot is the robot configuration (bringup): with it, the groups and
	// the custom actions come from it. Its robot_id is not applied here:
	// the whole robot is inside its namespace at the bus (bus.WithRobotID,
	// which saint-server applies), so the root names are plain.
	Robot *bringup.Robot
}

// GroupsOf returns the motor groups of a robot configuration.
func GroupsOf(r *bringup.Robot) []Group { return groupsFrom(r.Param.MotorGroups) }

// groupsFrom makes the feature's groups of a robot configuration's.
func groupsFrom(gs []bringup.MotorGroup) []Group {
	var out []Group
	for _, g := range gs {
		out = append(out, Group{Name: g.Name, Prefix: msg.TopicPrefix(g.Role, g.Instance), Role: g.Role, Instance: g.Instance, Base: g.Base, JointPrefix: g.JointPrefix, Drives: drivesRole(g.Role)})
	}
	return out
}

// group is a Group and what the feature knows of it (executor).
type group struct {
	Group
	online    bool
	local     []int // the node's motor ids
	names     []string
	reachable []bool
	session   *session // holding the group, or reserved for one
	nodeUUID  string
	nodeTag   string            // msg.SessionTag of nodeUUID
	last      msg.SessionStatus // the node's latest session_status
	rejected  uint64            // the node's count at the last status
	// confirmed says the node's latest session_status showed the node
	// session of the group's root session active (the node publishes it
	// as it grants, before it answers; it is told by its tag, see ours):
	// from then on a status showing anything else means the node lost it
	// (it restarted, or another client took it there directly). Until
	// then a status may be one published before the grant, for
	// ConfirmWithin after grantedAt.
	confirmed bool
	grantedAt time.Time
}

func (g *group) name(n string) string { return msg.MotorName(g.Prefix, n) }

// ours says whether the node's status st is about its session of s: by
// the session's tag once the node granted it and when the node gives one,
// else by the client name the root gives its node sessions.
func (g *group) ours(s *session, st msg.SessionStatus) bool {
	if st.Session != "" && g.nodeTag != "" {
		return st.Session == g.nodeTag
	}
	return st.Client == "saint-server for "+s.client
}

// global returns the robot-wide id of the node's motor id.
func (g *group) global(local int) int { return g.Base + local }

// session is a root control session.
type session struct {
	uuid, client, behavior, mode string
	timeoutMS                    int
	motors                       []int // robot-wide, sorted
	groups                       []*group
	commands                     uint64
	granted                      bool
	dropped                      bool // released, refused or ended
	// router is the router output the session is for (Hold), "": a
	// client's. The router drives through the roles' own commands
	// (RequestControlRequest.RoleCommands), not control_command.
	router string
}

// Motors is the root middleware.
type Motors struct {
	h      *feature.Host
	o      Options
	groups []*group

	sessions map[string]*session // by uuid, granted ones
	pending  map[*session]bool   // asking their nodes
	// routerRefused is why the router's last session for an output was
	// refused, the answer to its Holds for RouterRetry.
	routerRefused map[string]refusal
	// positions are the joints' latest positions by robot-wide name.
	positions map[string]float64
	// estop is the latched emergency stop, "" when released.
	estop  string
	status msg.SessionStatus // the latest root session_status
	// ended is why recently ended sessions ended, by uuid, so that their
	// holders' next commands are told; endedOrder bounds it.
	ended      map[string]string
	endedOrder []string
}

// rememberEnded is how many ended sessions' reasons are kept for their
// holders' late commands.
const rememberEnded = 64

// StateNodeLost is the root session_status state of a session ended
// because a node of its groups restarted or went offline; last_error
// names the node and says which.
const StateNodeLost = "node_lost"

// Register installs the root middleware on h: the bus services and topics
// at the root, the WebSocket actions of target "motors" and the "motors"
// topic.
func Register(h *feature.Host, o Options) (*Motors, error) {
	if o.Robot != nil {
		if o.Groups == nil {
			o.Groups = GroupsOf(o.Robot)
		}
	}
	if o.Groups == nil {
		o.Groups = DefaultGroups()
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	m := &Motors{h: h, o: o, sessions: map[string]*session{}, pending: map[*session]bool{}, routerRefused: map[string]refusal{}, positions: map[string]float64{}, ended: map[string]string{}, status: msg.SessionStatus{State: "idle"}}
	seen := map[string]bool{}
	for _, g := range o.Groups {
		if g.Name == "" || g.Prefix == "" || seen[g.Name] {
			return nil, fmt.Errorf("motors: group %+v: a name and a prefix, unique", g)
		}
		seen[g.Name] = true
		m.groups = append(m.groups, &group{Group: g})
	}
	name := func(n string) string { return msg.RootMotorName(n) }
	feature.Serve(h, name(msg.MotorGetAvailableMotors), func(_ msg.GetAvailableMotorsRequest, reply func(msg.GetAvailableMotorsResponse, error)) {
		reply(m.Available(), nil)
	})
	feature.Serve(h, name(msg.MotorRequestControl), m.RequestControl)
	feature.Serve(h, name(msg.MotorReleaseControl), m.ReleaseControl)
	feature.Serve(h, name(msg.MotorResetZero), m.ResetZero)
	feature.Serve(h, name(msg.MotorPlayAction), m.PlayAction)
	feature.Serve(h, name(msg.MotorListActions), func(_ msg.ListActionsRequest, reply func(msg.ListActionsResponse, error)) {
		reply(m.ListActions(), nil)
	})
	feature.Subscribe(h, name(msg.MotorControlCommand), bus.QoS{Depth: 16}, func(_ string, c msg.ControlCommand) {
		if err := m.Command(c); err != nil {
			m.refused(err)
		}
	})
	feature.Subscribe(h, msg.TopicTracksEStop, bus.QoS{Depth: 8}, func(_ string, e msg.EStop) { m.EStop(e) })
	for _, g := range m.groups {
		g := g
		feature.Subscribe(h, g.name(msg.MotorJointStates), feature.FeedQoS, func(_ string, js msg.JointStates) { m.forwardJointStates(g, js) })
		feature.Subscribe(h, g.name(msg.MotorSessionStatus), bus.QoS{Depth: 16}, func(_ string, s msg.SessionStatus) { m.nodeStatus(g, s) })
	}
	h.Topics(Topic, JointsTopic)
	var poll interface{ Stop() bool }
	h.Add(feature.Funcs{
		OnStart: func() error {
			m.poll()
			poll = h.Exec.Every(PollInterval, m.poll)
			return nil
		},
		OnStop: func() {
			if poll != nil {
				poll.Stop()
			}
		},
	})
	m.handleWS()
	m.handleActionsWS()
	return m, nil
}

// poll asks every group for its motors. A node that does not answer
// while it holds a session (asked after the grant) has gone offline: the
// session ends.
func (m *Motors) poll() {
	for _, g := range m.groups {
		held := g.session
		if held != nil && !held.granted {
			held = nil
		}
		bus.CallAsyncJSON(m.h.Bus, g.name(msg.MotorGetAvailableMotors), msg.GetAvailableMotorsRequest{}, CallTimeout, m.h.Exec, func(r msg.GetAvailableMotorsResponse, err error) {
			was := g.online
			g.online = err == nil
			if err == nil {
				g.local, g.names, g.reachable = r.MotorIDs, r.JointNames, r.Reachable
			} else if held != nil && g.session == held {
				// The node does not answer: whatever its session does
				// there (it times out without commands), the root's
				// cannot go on through it.
				m.lose(g, fmt.Sprintf("the node of %s went offline (get_available_motors: %v)", g.Name, err))
				return
			}
			if was != g.online {
				m.publish()
			}
		})
	}
}

// Available lists every known motor with its robot-wide id and name.
// Call it on the executor.
func (m *Motors) Available() msg.GetAvailableMotorsResponse {
	r := msg.GetAvailableMotorsResponse{MotorIDs: []int{}, JointNames: []string{}, Reachable: []bool{}}
	for _, g := range m.groups {
		for i, id := range g.local {
			r.MotorIDs = append(r.MotorIDs, g.global(id))
			name := ""
			if i < len(g.names) {
				name = g.JointPrefix + g.names[i]
			}
			r.JointNames = append(r.JointNames, name)
			r.Reachable = append(r.Reachable, g.online && i < len(g.reachable) && g.reachable[i])
		}
	}
	return r
}

// locate returns the group and node id of a robot-wide motor id.
func (m *Motors) locate(id int) (*group, int, bool) {
	for _, g := range m.groups {
		if slices.Contains(g.local, id-g.Base) {
			return g, id - g.Base, true
		}
	}
	return nil, 0, false
}

// RequestControl grants a session over the motors of req (all when it
// names none) when no other session holds their groups, after each group's
// node middleware granted the feature its own.
func (m *Motors) RequestControl(req msg.RequestControlRequest, reply func(msg.RequestControlResponse, error)) {
	refuse := func(format string, a ...any) {
		reply(msg.RequestControlResponse{Message: fmt.Sprintf(format, a...)}, nil)
	}
	if m.estop != "" {
		refuse("the emergency stop (%s) is latched: release it first", m.estop)
		return
	}
	if req.TimeoutMS == 0 && m.o.Robot != nil {
		req.TimeoutMS = m.o.Robot.Param.DefaultTimeoutMS
	}
	ids := req.MotorIDs
	if len(ids) == 0 {
		ids = m.Available().MotorIDs
		if len(ids) == 0 {
			refuse("no motors are known yet: no motor role's middleware has answered")
			return
		}
	}
	var groups []*group
	seen := map[int]bool{}
	for k, id := range ids {
		g, _, ok := m.locate(id)
		switch {
		case !ok:
			refuse("motor_ids[%d]: %d is not a known motor (%v)", k, id, m.Available().MotorIDs)
			return
		case seen[id]:
			refuse("motor_ids[%d]: motor %d given twice", k, id)
			return
		}
		seen[id] = true
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	for _, g := range groups {
		if g.session != nil {
			refuse("motors of %s are held by client %q: it must call release_control first (or let its session time out)", g.Name, g.session.client)
			return
		}
	}
	uuid, err := newUUID(m.o.Rand)
	if err != nil {
		refuse("no session id: %v", err)
		return
	}
	s := &session{uuid: uuid, client: req.Client, behavior: req.Behavior, timeoutMS: req.TimeoutMS, groups: groups}
	m.take(s, req, func(failure string) {
		if failure != "" {
			refuse("%s", failure)
			return
		}
		reply(msg.RequestControlResponse{Success: true, UUID: s.uuid, Message: fmt.Sprintf("control granted of motors %v", s.motors)}, nil)
	})
}

// take asks every group of s for its node session and calls done with ""
// once all granted it (s is then active), or with why one did not (s is
// then dropped). A session dropped meanwhile (released, an emergency stop)
// never calls done; node sessions granted after that are given back.
func (m *Motors) take(s *session, req msg.RequestControlRequest, done func(failure string)) {
	// The session's motors: the groups' whole, since a node session holds
	// all of its node's motors.
	for _, g := range s.groups {
		g.session = s
		for _, id := range g.local {
			s.motors = append(s.motors, g.global(id))
		}
	}
	sort.Ints(s.motors)
	m.pending[s] = true
	pending, failures := len(s.groups), []string{}
	for _, g := range s.groups {
		nr := msg.RequestControlRequest{Client: "saint-server for " + req.Client, TimeoutMS: req.TimeoutMS, Behavior: req.Behavior, RoleCommands: req.RoleCommands}
		bus.CallAsyncJSON(m.h.Bus, g.name(msg.MotorRequestControl), nr, CallTimeout, m.h.Exec, func(r msg.RequestControlResponse, err error) {
			switch {
			case err != nil:
				failures = append(failures, fmt.Sprintf("%s: %v", g.Name, err))
			case !r.Success:
				failures = append(failures, g.Name+": "+r.Message)
			case g.session != s:
				// Dropped while asking: give the node session back.
				m.releaseNode(g, r.UUID)
			default:
				g.nodeUUID, g.nodeTag = r.UUID, msg.SessionTag(r.UUID)
				// The node published the session as it granted it,
				// before answering: the status may be here already.
				g.confirmed = g.last.State == "active" && g.ours(s, g.last)
			}
			if pending--; pending > 0 || s.dropped {
				return
			}
			delete(m.pending, s)
			if len(failures) > 0 {
				m.drop(s)
				sort.Strings(failures)
				done(strings.Join(failures, "; "))
				return
			}
			s.granted = true
			for _, g := range s.groups {
				g.grantedAt = m.h.Exec.Now()
			}
			m.sessions[s.uuid] = s
			m.changed(s, "active", "")
			done("")
		})
	}
}

// releaseNode ends a node session.
func (m *Motors) releaseNode(g *group, uuid string) {
	bus.CallAsyncJSON(m.h.Bus, g.name(msg.MotorReleaseControl), msg.ReleaseControlRequest{UUID: uuid}, CallTimeout, m.h.Exec, func(msg.ReleaseControlResponse, error) {})
}

// drop releases what s holds on the nodes and forgets it.
func (m *Motors) drop(s *session) {
	s.dropped = true
	for _, g := range s.groups {
		if g.session != s {
			continue
		}
		if g.nodeUUID != "" {
			m.releaseNode(g, g.nodeUUID)
		}
		g.session, g.nodeUUID, g.nodeTag, g.confirmed = nil, "", "", false
	}
	delete(m.sessions, s.uuid)
	delete(m.pending, s)
}

// ReleaseControl ends the session req.UUID: every node session it holds
// is released into its behaviour.
func (m *Motors) ReleaseControl(req msg.ReleaseControlRequest, reply func(msg.ReleaseControlResponse, error)) {
	s, err := m.session(req.UUID)
	if err != nil {
		reply(msg.ReleaseControlResponse{Message: err.Error()}, nil)
		return
	}
	m.drop(s)
	m.remember(s, "released by release_control")
	m.changed(s, "released", "")
	reply(msg.ReleaseControlResponse{Success: true, Message: fmt.Sprintf("released motors %v", s.motors)}, nil)
}

func (m *Motors) session(uuid string) (*session, error) {
	switch {
	case uuid == "":
		return nil, errors.New("uuid: missing; commands must carry the uuid request_control returned")
	case m.sessions[uuid] == nil && m.ended[uuid] != "":
		return nil, fmt.Errorf("uuid %q: the session ended (%s): call request_control for a new one", uuid, m.ended[uuid])
	case m.sessions[uuid] == nil || m.sessions[uuid].router != "":
		return nil, fmt.Errorf("uuid %q holds no control session: call request_control first", uuid)
	}
	return m.sessions[uuid], nil
}

// Command splits c among the node sessions of its session and publishes
// the parts. Every per-motor list has one value per motor of c.MotorIDs
// (all of the session's motors when empty).
func (m *Motors) Command(c msg.ControlCommand) error {
	s, err := m.session(c.UUID)
	if err != nil {
		return err
	}
	ids := c.MotorIDs
	if len(ids) == 0 {
		ids = s.motors
	}
	n := len(ids)
	lists := []struct {
		name string
		v    []float64
	}{{"positions", c.Positions}, {"velocities", c.Velocities}, {"torques", c.Torques}, {"kp", c.Kp}, {"kd", c.Kd}}
	for _, l := range lists {
		if len(l.v) != 0 && len(l.v) != n {
			return fmt.Errorf("%s: %d values, expected %d (one per motor of motor_ids)", l.name, len(l.v), n)
		}
		for k, x := range l.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s[%d]: not a finite number", l.name, k)
			}
		}
	}
	parts := map[*group]*msg.ControlCommand{}
	var order []*group
	for k, id := range ids {
		g, local, ok := m.locate(id)
		if !ok || g.session != s {
			return fmt.Errorf("motor_ids[%d]: motor %d is not held by this session (it holds %v)", k, id, s.motors)
		}
		p := parts[g]
		if p == nil {
			p = &msg.ControlCommand{UUID: g.nodeUUID, Mode: c.Mode}
			parts[g] = p
			order = append(order, g)
		}
		if slices.Contains(p.MotorIDs, local) {
			return fmt.Errorf("motor_ids[%d]: motor %d given twice", k, id)
		}
		p.MotorIDs = append(p.MotorIDs, local)
		pick := func(dst *[]float64, v []float64) {
			if len(v) > 0 {
				*dst = append(*dst, v[k])
			}
		}
		pick(&p.Positions, c.Positions)
		pick(&p.Velocities, c.Velocities)
		pick(&p.Torques, c.Torques)
		pick(&p.Kp, c.Kp)
		pick(&p.Kd, c.Kd)
	}
	for _, g := range order {
		if err := m.h.Bus.Publish(g.name(msg.MotorControlCommand), *parts[g]); err != nil {
			return fmt.Errorf("%s: %w", g.Name, err)
		}
	}
	s.commands++
	if s.mode != c.Mode {
		s.mode = c.Mode
		m.changed(s, "active", "")
	}
	return nil
}

// EStop follows the router's emergency stop (msg.EStop on
// /saint/tracks/estop): engaged, every session ends — its motors are first
// told to hold where they are (a POSITION command at their present
// positions, so that KEEP_MODE keeps no torque command going), then
// released into the session's behaviour — and request_control is refused
// until it is released.
func (m *Motors) EStop(e msg.EStop) {
	if !e.Active {
		m.estop = ""
		return
	}
	m.estop = e.Source
	for s := range m.pending {
		m.drop(s)
	}
	for _, s := range m.sessions {
		for _, g := range s.groups {
			if s.router != "" {
				// The router's: its outputs are stopped by the router
				// itself; release applies the behaviour.
				break
			}
			if g.Drives {
				stop := msg.ControlCommand{UUID: g.nodeUUID, Mode: msg.ModeVelocity, MotorIDs: g.local, Velocities: make([]float64, len(g.local))}
				_ = m.h.Bus.Publish(g.name(msg.MotorControlCommand), stop)
				continue
			}
			hold := msg.ControlCommand{UUID: g.nodeUUID, Mode: msg.ModePosition}
			for i, id := range g.local {
				var q float64
				ok := i < len(g.names)
				if ok {
					q, ok = m.positions[g.JointPrefix+g.names[i]]
				}
				if !ok {
					hold.MotorIDs = nil
					break
				}
				hold.MotorIDs = append(hold.MotorIDs, id)
				hold.Positions = append(hold.Positions, q)
			}
			if len(hold.MotorIDs) > 0 {
				_ = m.h.Bus.Publish(g.name(msg.MotorControlCommand), hold)
			}
		}
		m.drop(s)
		m.status.LastError = "emergency stop by " + e.Source + ": session ended"
		m.remember(s, "emergency stop by "+e.Source)
		m.changed(s, "released", s.behavior)
	}
}

// refused records a refused command in session_status.
func (m *Motors) refused(err error) {
	m.status.Rejected++
	m.status.LastError = "control_command refused: " + err.Error()
	m.publish()
}

// nodeStatus follows a node session: a refusal the node made shows at the
// root, a node session that ended on its own ends the root session, and so
// does a node that no longer holds it (it restarted: a fresh middleware
// reports no session; or another client holds the node).
func (m *Motors) nodeStatus(g *group, st msg.SessionStatus) {
	g.last = st
	s := g.session
	if s == nil || !s.granted {
		g.rejected = st.Rejected
		g.confirmed = s != nil && st.State == "active" && g.ours(s, st)
		return
	}
	if st.Rejected > g.rejected && st.LastError != "" {
		g.rejected = st.Rejected
		m.status.Rejected++
		m.status.LastError = g.Name + ": " + st.LastError
		m.publish()
	}
	ours := g.ours(s, st)
	switch {
	case st.State == "active" && ours:
		g.confirmed = true
	case ours:
		// The node ended the session (timeout, max_power): so does the
		// root, releasing its other groups.
		g.nodeUUID = ""
		m.drop(s)
		m.remember(s, st.State+" at the node of "+g.Name)
		m.changed(s, st.State, st.Applied)
	case !g.confirmed && m.h.Exec.Now().Sub(g.grantedAt) < ConfirmWithin:
		// Perhaps published before the node granted the session.
	case st.State == "idle" || st.Client == "":
		g.nodeUUID = "" // nothing left there to release
		m.lose(g, "the node of "+g.Name+" restarted: it holds no session any more")
	default:
		m.lose(g, fmt.Sprintf("the node of %s no longer holds this session: it reports %s, client %q (it restarted, or was taken directly)", g.Name, st.State, st.Client))
	}
}

// lose ends the session holding g because g's node lost it (why names the
// node): like a timeout at the node, its other groups are released and
// its holder's next command is refused saying why. The router takes its
// sessions again as after a timeout; a client must request_control anew.
func (m *Motors) lose(g *group, why string) {
	s := g.session
	m.drop(s)
	m.remember(s, why)
	m.status.LastError = fmt.Sprintf("session of client %q ended: %s", s.client, why)
	m.changed(s, StateNodeLost, "")
}

// remember keeps why s ended for its holder's late commands.
func (m *Motors) remember(s *session, why string) {
	if _, ok := m.ended[s.uuid]; !ok {
		m.endedOrder = append(m.endedOrder, s.uuid)
	}
	m.ended[s.uuid] = why
	if len(m.endedOrder) > rememberEnded {
		delete(m.ended, m.endedOrder[0])
		m.endedOrder = m.endedOrder[1:]
	}
}

// changed publishes session_status after s changed to state.
func (m *Motors) changed(s *session, state, applied string) {
	m.status.State, m.status.Client, m.status.Mode = state, s.client, s.mode
	m.status.Behavior, m.status.Applied, m.status.TimeoutMS = s.behavior, applied, s.timeoutMS
	m.status.Commands = s.commands
	m.publish()
}

// Sessions lists the active sessions. Call it on the executor.
func (m *Motors) Sessions() []msg.MotorSession {
	out := []msg.MotorSession{}
	for _, s := range m.sessions {
		ms := msg.MotorSession{Client: s.client, MotorIDs: s.motors, Behavior: s.behavior, Mode: s.mode, TimeoutMS: s.timeoutMS, Commands: s.commands}
		for _, g := range s.groups {
			ms.Groups = append(ms.Groups, g.Name)
		}
		out = append(out, ms)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].MotorIDs, out[j].MotorIDs
		if len(a) == 0 || len(b) == 0 {
			return len(a) < len(b) || len(a) == len(b) && out[i].Client < out[j].Client
		}
		return a[0] < b[0]
	})
	return out
}

// Status is the WebSocket topic's content. Call it on the executor.
func (m *Motors) Status() msg.MotorsStatus {
	st := msg.MotorsStatus{Groups: []msg.MotorGroupStatus{}, Sessions: m.Sessions()}
	for _, g := range m.groups {
		gs := msg.MotorGroupStatus{Name: g.Name, Prefix: g.Prefix, Online: g.online, MotorIDs: []int{}}
		for _, id := range g.local {
			gs.MotorIDs = append(gs.MotorIDs, g.global(id))
		}
		if g.session != nil && g.session.granted {
			gs.HeldBy = g.session.client
		}
		st.Groups = append(st.Groups, gs)
	}
	return st
}

func (m *Motors) publish() {
	m.status.Sessions = m.Sessions()
	_ = m.h.Bus.Publish(msg.RootMotorName(msg.MotorSessionStatus), m.status)
	m.h.Gateway.Publish(Topic, m.Status())
}

// forwardJointStates republishes a group's joint_states at the root with
// robot-wide joint names.
func (m *Motors) forwardJointStates(g *group, js msg.JointStates) {
	// A limb's update places its joints with the humanoid's kinematics
	// (microseconds, five limbs at 50 Hz): only for a page that shows it.
	if m.h.Gateway.Watched(JointsTopic) {
		m.h.Gateway.PublishStream(JointsTopic, g.Name, jointStatesUpdate(g.Group, js))
	}
	names := make([]string, len(js.Name))
	for i, n := range js.Name {
		names[i] = g.JointPrefix + n
	}
	js.Name = names
	for i, n := range names {
		if i < len(js.Position) {
			m.positions[n] = js.Position[i]
		}
	}
	_ = m.h.Bus.Publish(msg.RootMotorName(msg.MotorJointStates), js)
}

// ResetZero calibrates every group's motors but the drives' (refused
// while a session is active); it answers when every group has.
func (m *Motors) ResetZero(req msg.ResetZeroRequest, reply func(msg.ResetZeroResponse, error)) {
	if len(m.sessions) > 0 {
		var clients []string
		for _, s := range m.Sessions() {
			clients = append(clients, fmt.Sprintf("%q", s.Client))
		}
		reply(msg.ResetZeroResponse{Message: "a control session is active (client " + strings.Join(clients, ", ") + "): release_control first"}, nil)
		return
	}
	var groups []*group
	for _, g := range m.groups {
		// Drives (tracks, wheels) have no zero to calibrate.
		if g.online && !g.Drives {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		reply(msg.ResetZeroResponse{Message: "no motor role's middleware answers"}, nil)
		return
	}
	pending := len(groups)
	results := make([]msg.ResetZeroResponse, len(groups))
	errs := make([]string, len(groups))
	for i, g := range groups {
		bus.CallAsyncJSON(m.h.Bus, g.name(msg.MotorResetZero), req, ResetZeroTimeout, m.h.Exec, func(r msg.ResetZeroResponse, err error) {
			results[i] = r
			switch {
			case err != nil:
				errs[i] = fmt.Sprintf("%s: %v", g.Name, err)
			case !r.Success:
				errs[i] = g.Name + ": " + r.Message
			}
			if pending--; pending > 0 {
				return
			}
			out := msg.ResetZeroResponse{Success: true, Positions: []float64{}}
			var msgs []string
			for k, r := range results {
				out.Positions = append(out.Positions, r.Positions...)
				if errs[k] != "" {
					out.Success = false
					msgs = append(msgs, errs[k])
				} else {
					msgs = append(msgs, groups[k].Name+": "+r.Message)
				}
			}
			out.Message = strings.Join(msgs, "; ")
			reply(out, nil)
		})
	}
}

// newUUID returns an RFC 4122 version 4 uuid from r.
func newUUID(r io.Reader) (string, error) {
	var raw [16]byte
	if _, err := io.ReadFull(r, raw[:]); err != nil {
		return "", err
	}
	raw[6] = raw[6]&0x0f | 0x40
	raw[8] = raw[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", raw[0:4], raw[4:6], raw[6:8], raw[8:10], raw[10:]), nil
}

// handleWS installs the WebSocket actions of target "motors": the same
// services, with the same request and response shapes.
func (m *Motors) handleWS() {
	g := m.h.Gateway
	g.HandleCommand(Target, "status", func(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
		var st msg.MotorsStatus
		err := m.h.Do(ctx, func() { st = m.Status() })
		return st, err
	})
	g.HandleCommand(Target, msg.MotorGetAvailableMotors, func(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
		var r msg.GetAvailableMotorsResponse
		err := m.h.Do(ctx, func() { r = m.Available() })
		return r, err
	})
	g.HandleCommand(Target, msg.MotorRequestControl, func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var req msg.RequestControlRequest
		if err := ws.DecodeParams(raw, &req); err != nil {
			return nil, err
		}
		return feature.Await(ctx, m.h, func(done func(msg.RequestControlResponse, error)) { m.RequestControl(req, done) })
	})
	g.HandleCommand(Target, msg.MotorReleaseControl, func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var req msg.ReleaseControlRequest
		if err := ws.DecodeParams(raw, &req); err != nil {
			return nil, err
		}
		return feature.Await(ctx, m.h, func(done func(msg.ReleaseControlResponse, error)) { m.ReleaseControl(req, done) })
	})
	g.HandleCommand(Target, msg.MotorResetZero, func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var req msg.ResetZeroRequest
		if err := ws.DecodeParams(raw, &req); err != nil {
			return nil, err
		}
		return feature.Await(ctx, m.h, func(done func(msg.ResetZeroResponse, error)) { m.ResetZero(req, done) })
	})
	g.HandleCommand(Target, msg.MotorControlCommand, func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var c msg.ControlCommand
		if err := ws.DecodeParams(raw, &c); err != nil {
			return nil, err
		}
		var err error
		if derr := m.h.Do(ctx, func() {
			if err = m.Command(c); err != nil {
				m.refused(err)
			}
		}); derr != nil {
			return nil, derr
		}
		if err != nil {
			return nil, err
		}
		return map[string]bool{"ok": true}, nil
	})
}
