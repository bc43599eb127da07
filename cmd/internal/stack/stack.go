package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/server"
	simboard "github.com/saint-os/saint/sim/board"
	simrobot "github.com/saint-os/saint/sim/robot"
	"github.com/saint-os/saint/sim/twin/ioboard"
)

// NodeSpec is one simulated node of the robot and the role it is adopted
// into.
type NodeSpec struct {
	ID, Profile, Role, Instance, Name string
}

// Part is the simulated robot's part the node runs on.
func (n NodeSpec) Part() simrobot.Part {
	if n.Instance != "" {
		return simrobot.Part(n.Profile + "_" + n.Instance)
	}
	return simrobot.Part(n.Profile)
}

// Key is the node's role key ("arms_left"), the name scenarios use.
func (n NodeSpec) Key() string { return msg.RoleKey(n.Role, n.Instance) }

// Robot lists the simulated robot's nodes: one per board of sim/robot.
func Robot() []NodeSpec {
	return []NodeSpec{
		{"sim-head", "head", "head", "", "Head Unit"},
		{"sim-arms-left", "arms", "arms", "left", "Left Arm"},
		{"sim-arms-right", "arms", "arms", "right", "Right Arm"},
		{"sim-tracks", "tracks", "tracks", "", "Tracks"},
		{"sim-console", "console", "console", "", "Console"},
		{"sim-balance", "balance", "balance", "", "Balance Base"},
	}
}

// robotSpecs returns the nodes of a robot configuration and the humanoid
// limbs its physics needs: the reference robot's nodes that its
// robot_param.yaml lists (all of them without a configuration, or when it
// lists none), then a limb node per node of sim_profile limb_can.
func robotSpecs(r *bringup.Robot) (specs []NodeSpec, limbs []string) {
	if r == nil || len(r.Param.Nodes) == 0 {
		return Robot(), nil
	}
	for _, sn := range Robot() {
		if r.SimProfile(sn.Key()) != "" {
			specs = append(specs, sn)
		}
	}
	for _, n := range r.Param.Nodes {
		if n.Profile != string(simboard.LimbCAN) {
			continue
		}
		part := simrobot.LimbPart(n.Instance)
		specs = append(specs, NodeSpec{ID: simrobot.DefaultNodeID(part), Profile: "limb", Role: msg.RoleLimb, Instance: n.Instance,
			Name: "Limb " + strings.ReplaceAll(n.Instance, "_", " ")})
		limbs = append(limbs, n.Instance)
	}
	return specs, limbs
}

// Options configures a Stack.
type Options struct {
	// Exec is the executor everything runs on; nil means a new one on a
	// virtual clock at Speed.
	Exec  *executor.Executor
	Speed float64
	// ConfigDir is the configuration tree, DataDir where the server and
	// the nodes keep their state (both required).
	ConfigDir, DataDir string
	// HTTPAddr and WSAddr are the server's listeners.
	HTTPAddr, WSAddr string
	// FoxgloveAddr serves the Foxglove WebSocket protocol; empty: none.
	FoxgloveAddr string
	// AllowedOrigins are browser origins allowed to use the WebSocket API
	// and the Foxglove server besides the server's own.
	AllowedOrigins []string
	// RequireAuth turns the API token on.
	RequireAuth bool
	// LiveLink places the server's LiveLink receiver; the zero value runs
	// none.
	LiveLink server.LiveLinkOptions
	Seed     uint64
	Version  string
	Log      *slog.Logger
	// Robot is the robot configuration (bringup) the server runs with;
	// nil: none (the root motor middleware over the default groups).
	Robot *bringup.Robot
	// RobotID puts the whole robot — server, nodes, physics — inside the
	// bus namespace /robot_{id} (bus.WithRobotID); empty: the Robot's
	// robot_id, else none.
	RobotID string
	// Broker is the bus the robot runs on; nil: a new one. Robots with
	// different RobotIDs can share one.
	Broker *mem.Broker
	// Dial, when set, replaces Broker: it returns a new connection to the
	// bus the robot runs on (outside every namespace), a NATS client say.
	Dial func() bus.Bus
}

// Stack is the whole simulated robot: server, physics, nodes, RC.
type Stack struct {
	Exec   *executor.Executor
	Broker *mem.Broker
	Server *server.Server
	Robot  *simrobot.Robot
	// Nodes are in the order of Robot().
	Nodes []*node.Node
	Specs []NodeSpec

	log       *slog.Logger
	robotID   string
	dial      func() bus.Bus
	serverBus *cutBus
	nodeBus   []*cutBus
	rc        *rcLink
	io        *ioboard.Board
	stopped   []bool
	// nodeOpts are each node's options, for RestartNode.
	nodeOpts []node.Options
	// adoptErr holds why a node's adoption failed, by node id (executor).
	adoptErr map[string]string
}

// New builds the stack; nothing runs until Start.
func New(o Options) (*Stack, error) {
	if o.ConfigDir == "" || o.DataDir == "" {
		return nil, errors.New("stack: ConfigDir and DataDir are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	ex := o.Exec
	if ex == nil {
		ex = executor.New(&executor.Options{Clock: clock.NewVirtual(clock.Epoch()), Speed: o.Speed})
	}
	if o.RobotID == "" && o.Robot != nil {
		o.RobotID = o.Robot.Param.RobotID
	}
	if o.Broker == nil {
		o.Broker = mem.NewBroker()
	}
	specs, limbs := robotSpecs(o.Robot)
	s := &Stack{Exec: ex, Broker: o.Broker, Specs: specs, log: o.Log, robotID: o.RobotID, dial: o.Dial}
	if s.dial == nil {
		s.dial = func() bus.Bus { return s.Broker.Connect(nil) }
	}
	// connect is a connection inside the robot's namespace. The server
	// puts itself there (server.Options.RobotID).
	connect := func() (bus.Bus, error) { return bus.WithRobotID(s.dial(), o.RobotID) }
	s.serverBus = &cutBus{Bus: s.dial()}
	rcLink, rcPorts := newRCLink(ex)
	s.rc = rcLink
	srv, err := server.New(server.Options{
		Bus: s.serverBus, Exec: ex, ConfigDir: o.ConfigDir,
		DataDir: filepath.Join(o.DataDir, "server"), HTTPAddr: o.HTTPAddr, WSAddr: o.WSAddr, FoxgloveAddr: o.FoxgloveAddr, AllowedOrigins: o.AllowedOrigins, Log: o.Log,
		NoAuth: !o.RequireAuth, Power: simPower{o.Log}, Version: o.Version, Robot: o.Robot, RobotID: o.RobotID,
		Host: newWallHost(hostSampleEvery), LiveLink: o.LiveLink, RCPorts: rcPorts,
	})
	if err != nil {
		return nil, err
	}
	s.Server = srv

	ids := map[simrobot.Part]string{}
	for _, sn := range s.Specs {
		ids[sn.Part()] = sn.ID
	}
	// A robot type whose arms are on CAN actuators (sim_profile arms_can)
	// gets the simulated robot with them.
	canArms := o.Robot != nil && o.Robot.SimProfile("arms_left") == string(simboard.ArmsCAN)
	rbus, err := connect()
	if err != nil {
		return nil, err
	}
	rb, err := simrobot.New(simrobot.Options{Exec: ex, Bus: rbus, Seed: o.Seed, NodeIDs: ids, CANArms: canArms, Limbs: limbs})
	if err != nil {
		return nil, err
	}
	s.Robot = rb
	for _, sn := range s.Specs {
		inner, err := connect()
		if err != nil {
			return nil, err
		}
		nb := &cutBus{Bus: inner}
		no := node.Options{
			Exec: ex, Bus: nb, Board: rb.NodeBoard(sn.Part()), FirmwareVersion: o.Version,
			StateDir: filepath.Join(o.DataDir, "nodes", sn.ID), Log: o.Log,
		}
		n, err := node.New(no)
		if err != nil {
			return nil, err
		}
		s.Nodes = append(s.Nodes, n)
		s.nodeBus = append(s.nodeBus, nb)
		s.nodeOpts = append(s.nodeOpts, no)
	}
	s.stopped = make([]bool, len(s.Nodes))
	s.adoptErr = map[string]string{}
	return s, nil
}

// Connect returns a new connection to the robot's bus, inside its
// namespace (Options.RobotID): what a tool beside the robot — a recorder,
// a bridge, a replay — uses. Broker.Connect is outside every namespace.
func (s *Stack) Connect() bus.Bus {
	b, err := bus.WithRobotID(s.dial(), s.robotID)
	if err != nil {
		panic(err) // New checked the id
	}
	return b
}

// RobotID is the robot's namespace id (Options.RobotID, or the robot
// configuration's); "" for none.
func (s *Stack) RobotID() string { return s.robotID }

// Start starts the server (it needs the executor running, see
// server.Server.Start: call it from another goroutine than the one running
// the executor), then the physics, the RC receiver and the nodes.
func (s *Stack) Start() error {
	if err := s.Server.Start(); err != nil {
		return err
	}
	return s.Exec.Do(context.Background(), func() { s.startOnExec() })
}

// StartHeld is Start for an executor that nobody runs yet: it runs the
// executor itself, at the clock's present instant (RunFor 0), until the
// server, the physics and the nodes are started, and returns with the
// executor stopped and the clock where it was. Start with the executor
// running lets virtual time run on between the server's start and the
// nodes' by however long the wall clock takes; StartHeld starts every run
// at the same virtual instant, so the same seed gives the same robot.
func (s *Stack) StartHeld(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.Start() }()
	for {
		if err := s.Exec.RunFor(ctx, 0); err != nil {
			return err
		}
		select {
		case err := <-done:
			// Serve what Start posted last.
			return errors.Join(err, s.Exec.RunFor(ctx, 0))
		case <-time.After(100 * time.Microsecond):
		}
	}
}

func (s *Stack) startOnExec() {
	if err := s.Robot.Start(); err != nil {
		s.log.Error("simulated robot", "err", err)
		return
	}
	if err := s.rc.start(s.Exec); err != nil {
		s.log.Error("simulated RC transmitter", "err", err)
	}
	// The balance base's IO board, on the far end of the balance board's
	// inter-board UART, with its two RC receivers.
	if peer, err := s.Robot.Board(simrobot.BalancePart).UARTPeer("ttyAMA0"); err != nil {
		s.log.Error("balance IO board link", "err", err)
	} else if s.io, err = ioboard.New(s.Exec, peer, nil); err != nil {
		s.log.Error("balance IO board", "err", err)
	}
	for _, n := range s.Nodes {
		n.Start()
	}
}

// RC returns the simulated transmitter (executor). It is switched off
// until SetPower(true).
func (s *Stack) RC() (RC, error) {
	if s.rc.tx == nil {
		return RC{}, errors.New("stack: no RC transmitter (not started)")
	}
	return RC{s.rc}, nil
}

// Shutdown stops the server (from a goroutine other than the executor's,
// which must keep running), then brings the nodes' actuators to a safe
// state and stops the physics.
func (s *Stack) Shutdown() {
	s.Server.Shutdown()
	_ = s.Exec.Do(context.Background(), func() {
		for i, n := range s.Nodes {
			if !s.stopped[i] {
				n.Stop()
			}
		}
		s.rc.close()
		if s.io != nil {
			s.io.Close()
		}
		s.Robot.Stop()
	})
}

// index finds a node by its id or role key.
func (s *Stack) index(name string) (int, error) {
	for i, sn := range s.Specs {
		if sn.ID == name || sn.Key() == name {
			return i, nil
		}
	}
	var ids, keys []string
	for _, sn := range s.Specs {
		ids, keys = append(ids, sn.ID), append(keys, sn.Key())
	}
	return 0, fmt.Errorf("stack: no node %q (nodes: %s, or role keys %s)", name, strings.Join(ids, ", "), strings.Join(keys, ", "))
}

// StopNode stops a node as its process ending would after bringing its
// actuators to a safe state (executor).
func (s *Stack) StopNode(name string) error {
	i, err := s.index(name)
	if err != nil {
		return err
	}
	if !s.stopped[i] {
		s.Nodes[i].Stop()
		s.stopped[i] = true
	}
	return nil
}

// RestartNode restarts a node's process (executor): the running one stops
// as StopNode does, a fresh one starts on the same board with the same
// state directory, so it comes back in its stored role with nothing of the
// old process's memory — no motor session, say. A stopped node is started.
func (s *Stack) RestartNode(name string) error {
	if err := s.StopNode(name); err != nil {
		return err
	}
	i, _ := s.index(name)
	n, err := node.New(s.nodeOpts[i])
	if err != nil {
		return fmt.Errorf("stack: restarting %s: %w", name, err)
	}
	s.Nodes[i], s.stopped[i] = n, false
	n.Start()
	return nil
}

// CutNode disconnects a node from the bus (cut true) or reconnects it; the
// node keeps running on its own, as with its network cable pulled.
func (s *Stack) CutNode(name string, cut bool) error {
	i, err := s.index(name)
	if err != nil {
		return err
	}
	s.nodeBus[i].setCut(cut)
	return nil
}

// CutServer disconnects the server from the bus (cut true) or reconnects
// it: the router's commands stop reaching the nodes, the nodes' states stop
// reaching the server.
func (s *Stack) CutServer(cut bool) { s.serverBus.setCut(cut) }

// AdoptAll adopts each listed node (by id or role key; nil means every
// node) into its role as soon as it has announced itself; nodes that
// resumed a stored role are left alone. Call it on the executor.
func (s *Stack) AdoptAll(only []string) error {
	// pending is in the order of Specs: the adoption requests go out in
	// the same order in every run.
	chosen := make([]bool, len(s.Specs))
	for i := range chosen {
		chosen[i] = only == nil
	}
	for _, name := range only {
		i, err := s.index(name)
		if err != nil {
			return err
		}
		chosen[i] = true
	}
	var pending []NodeSpec
	for i, sn := range s.Specs {
		if chosen[i] {
			pending = append(pending, sn)
		}
	}
	var tick *executor.Timer
	tick = s.Exec.Every(node.DefaultAnnounceInterval, func() {
		am := s.Server.Adoption()
		pending = slices.DeleteFunc(pending, func(sn NodeSpec) bool {
			id := sn.ID
			u, a, _ := am.Lookup(id)
			switch {
			case a != nil:
				return true
			case u != nil:
				req := msg.AdoptNodeRequest{NodeID: id, Role: sn.Role, Instance: sn.Instance, DisplayName: sn.Name, AssignedBy: "saint-sim"}
				am.Adopt(req, func(resp msg.AdoptNodeResponse, err error) {
					if err != nil || !resp.Success {
						s.log.Error("adoption failed", "node", id, "err", err, "message", resp.Message)
						s.adoptErr[id] = fmt.Sprint(resp.Message, " ", err)
					}
				})
				return true
			}
			return false
		})
		if len(pending) == 0 {
			tick.Stop()
		}
	})
	return nil
}

// IOBoard returns the balance base's simulated IO board (arming button,
// kill switch, CRSF and ELRS transmitters), nil if it did not start. Use
// it on the executor.
func (s *Stack) IOBoard() *ioboard.Board { return s.io }

// Board returns the simulated board a node (id or role key) runs on.
func (s *Stack) Board(name string) (*simboard.Board, error) {
	i, err := s.index(name)
	if err != nil {
		return nil, err
	}
	return s.Robot.Board(s.Specs[i].Part()), nil
}

// AdoptionError says why a node's adoption failed, "" if it did not
// (executor).
func (s *Stack) AdoptionError(name string) string {
	i, err := s.index(name)
	if err != nil {
		return err.Error()
	}
	return s.adoptErr[s.Specs[i].ID]
}

// hostSampleEvery is how often, in wall time, the simulation samples the
// machine it runs on for the server's system status.
const hostSampleEvery = 2 * time.Second

// simPower answers system shutdown and reboot without powering anything
// off: the simulated robot has no power to cut.
type simPower struct{ log *slog.Logger }

func (p simPower) Shutdown(reason string) error {
	p.log.Warn("simulated system shutdown: nothing is powered off", "source", "system", "reason", reason)
	return nil
}

func (p simPower) Reboot(reason string) error {
	p.log.Warn("simulated system reboot: nothing is restarted", "source", "system", "reason", reason)
	return nil
}
