package node

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
)

// Defaults for Options fields left zero.
const (
	DefaultAnnounceInterval = 500 * time.Millisecond
	DefaultStatusInterval   = time.Second
	DefaultCallTimeout      = 3 * time.Second
	DefaultRetryInterval    = time.Second
	DefaultResetHold        = 5 * time.Second
	DefaultResetPin         = 21
)

// Updater installs a verified firmware image. The node has already written
// the image to its store and checked its sha256.
type Updater interface {
	// Apply makes version, stored at path, the running firmware. An updater
	// for a real node swaps the binary and re-executes (it returns only on
	// failure); the simulated one returns nil and the node reboots
	// in-process running version.
	Apply(path, version string) error
}

// Options configures a Node.
type Options struct {
	Exec     *executor.Executor // required
	Bus      bus.Bus            // required
	Board    board.Board        // required
	StateDir string             // required
	// NodeID overrides the board's id.
	NodeID string
	// BusCA is the fingerprint of the server CA the bus connection pinned
	// (natsbus.CAPin.Fingerprint), announced for the adopt page; nil
	// announces none.
	BusCA           func() string
	FirmwareVersion string // default "0.0.0"
	// Updater applies firmware; nil simulates an update in-process.
	Updater Updater
	// ResetPin is the BCM pin of the hard-reset button (active low); 0
	// means DefaultResetPin, -1 none.
	ResetPin  int
	ResetHold time.Duration
	// AnnounceInterval is how often an unadopted node publishes its
	// NodeGPIOStatus (at least once a second).
	AnnounceInterval time.Duration
	StatusInterval   time.Duration
	CallTimeout      time.Duration
	RetryInterval    time.Duration
	// Fetcher downloads firmware over HTTP from the URL the server offers
	// (node/fetch.Client). Nil, or an offer without a URL, downloads it in
	// chunks over the bus instead, which keeps a simulation in one process
	// on virtual time deterministic.
	Fetcher Fetcher
	// FirmwareKeys are the release keys this node trusts: an offered image
	// is downloaded and installed only when its offer carries a valid
	// signature by one of them (package fwsign). RequireSignedFirmware
	// refuses unsigned offers even without keys (so: every offer); with
	// neither, the node installs images on their sha256 alone, as a
	// development build and the in-process simulator do.
	FirmwareKeys          []ed25519.PublicKey
	RequireSignedFirmware bool
	// RoleStarted, when set, is called on Exec each time a role has
	// started, with the role's name: saint-node enters real-time mode there
	// for the roles that need it.
	RoleStarted func(role string)
	// NewRole builds role modules; nil means roles.New.
	NewRole func(name string) (rolekit.Role, error)
	Log     *slog.Logger
}

// Fetcher downloads a firmware image over HTTP into the file at path until
// it holds size bytes with the given sha256 (hex), continuing what the file
// already holds (node/fetch.Client is the implementation). It blocks; the
// node calls it on a goroutine of its own and cancels ctx when it stops. An
// image whose sha256 differs is reported with an error wrapping
// fetch.ErrChecksum.
type Fetcher interface {
	Fetch(ctx context.Context, url, path string, size int64, sha256 string) error
}

// Node is the generic node: one firmware for every role. It boots, checks
// for firmware, then either resumes its stored role or announces itself as
// unadopted until the server adopts it.
// All of its logic runs on Options.Exec.
type Node struct {
	o     Options
	store *Store
	log   *slog.Logger
	id    string

	state   State
	message string
	// busLink is what the node last knew of its bus link when it was not
	// plainly up (BusLink): shown in its status while there is no other
	// message.
	busLink string
	version string
	// floor is the anti-rollback floor: the newest version this node has
	// run or installed (Store.FirmwareFloor). Older offers need the
	// release key's downgrade permission.
	floor   string
	started time.Time
	gen     uint64 // bumped on every reboot; async results of an older boot are dropped

	// peripherals is the last bus scan: announcements reuse it because a
	// full I²C scan every half second would load a real bus.
	peripherals []board.Peripheral

	role    rolekit.Role
	roleRec RoleRecord
	roleCfg *roleconfig.Config

	services []bus.Subscription
	// stopFetch cancels the HTTP firmware download in progress, if any
	// (fetching). refetch asks for a new check once it has ended: two
	// downloads never write the same file at once.
	stopFetch context.CancelFunc
	fetching  bool
	refetch   bool
	announce  *executor.Timer
	status    *executor.Timer
	retry     *executor.Timer
	hold      *executor.Timer
	stopEdge  func()

	// Transitions counts state changes, for tests and diagnostics.
	transitions []string
}

// New checks opts and returns a node that has not started.
func New(opts Options) (*Node, error) {
	if opts.Exec == nil || opts.Bus == nil || opts.Board == nil {
		return nil, errors.New("node: Exec, Bus and Board are required")
	}
	store, err := NewStore(opts.StateDir)
	if err != nil {
		return nil, err
	}
	store.now = opts.Exec.Now
	if opts.FirmwareVersion == "" {
		opts.FirmwareVersion = "0.0.0"
	}
	if opts.ResetPin == 0 {
		opts.ResetPin = DefaultResetPin
	}
	setDefault(&opts.ResetHold, DefaultResetHold)
	setDefault(&opts.AnnounceInterval, DefaultAnnounceInterval)
	setDefault(&opts.StatusInterval, DefaultStatusInterval)
	setDefault(&opts.CallTimeout, DefaultCallTimeout)
	setDefault(&opts.RetryInterval, DefaultRetryInterval)
	if opts.NewRole == nil {
		opts.NewRole = roles.New
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	id := opts.NodeID
	if id == "" {
		id = opts.Board.Info().NodeID
	}
	if !msg.ValidNodeID(id) {
		return nil, fmt.Errorf("node: id %q: want 1-64 letters, digits, '-' or '_'", id)
	}
	n := &Node{
		o:       opts,
		store:   store,
		id:      id,
		state:   msg.StateBoot,
		version: opts.FirmwareVersion,
	}
	// Warnings and errors of the node and its role also go to the server.
	alerts := newAlertHandler(opts.Log.Handler(), id, opts.Exec.Clock(), func(a msg.NodeLog) {
		_ = opts.Bus.Publish(msg.NodeLogTopic(id), a)
	})
	n.log = slog.New(alerts).With("node", id)
	return n, nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

// ID returns the node id.
func (n *Node) ID() string { return n.id }

// Start begins the boot sequence on the executor. It returns at once.
func (n *Node) Start() {
	n.o.Exec.Post(n.start)
}

func (n *Node) start() {
	n.started = n.o.Exec.Now()
	if err := n.ensureIdentity(); err != nil {
		n.log.Warn("identity not saved", "err", err)
	}
	n.loadFloor()
	for _, s := range []struct {
		name string
		h    bus.ServiceHandler
	}{
		{msg.NodeAdoptService(n.id), n.handleAdopt},
		{msg.NodeResetService(n.id), n.handleReset},
		{msg.NodeGPIOProbeService(n.id), n.handleProbe},
		{msg.NodeUpdateService(n.id), n.handleUpdate},
	} {
		sub, err := n.o.Bus.Serve(s.name, n.o.Exec, s.h)
		if err != nil {
			n.log.Error("cannot serve", "service", s.name, "err", err)
			continue
		}
		n.services = append(n.services, sub)
	}
	n.watchResetButton()
	n.status = n.o.Exec.Every(n.o.StatusInterval, n.publishStatus)
	n.announce = n.o.Exec.Every(n.o.AnnounceInterval, func() {
		if n.state == msg.StateUnadopted {
			n.publishGPIOStatus()
		}
	})
	n.boot()
}

// Stop ends the node's activity: the role stops (actuators safe), timers
// and services end. The stored role is kept, as at a power cut.
func (n *Node) Stop() {
	n.gen++
	if n.stopFetch != nil {
		n.stopFetch()
	}
	n.refetch = false
	n.stopRole()
	for _, t := range []*executor.Timer{n.announce, n.status, n.retry, n.hold} {
		if t != nil {
			t.Stop()
		}
	}
	if n.stopEdge != nil {
		n.stopEdge()
	}
	for _, s := range n.services {
		_ = s.Unsubscribe()
	}
	n.services = nil
}

func (n *Node) ensureIdentity() error {
	id, ok, err := n.store.LoadIdentity()
	if errors.Is(err, persist.ErrDamaged) {
		// Moved aside: written again from the board below.
		n.log.Error("identity file damaged; writing a new one", "err", err)
		err = nil
	}
	if err != nil || (ok && id.NodeID == n.id) {
		return err
	}
	info := n.o.Board.Info()
	return n.store.SaveIdentity(Identity{
		NodeID:     n.id,
		MACAddress: info.MACAddress,
		FirstSeen:  n.o.Exec.Now().UTC().Format(time.RFC3339),
	})
}

// fire applies event e; it reports whether the state machine accepted it.
func (n *Node) fire(e Event) bool {
	next, ok := Next(n.state, e)
	if !ok {
		return false
	}
	if next != n.state {
		n.log.Info("state", "from", n.state, "to", next, "event", string(e))
		n.transitions = append(n.transitions, n.state+"->"+next)
		n.state = next
		n.publishStatus()
		if next == msg.StateUnadopted {
			n.publishGPIOStatus()
		}
	}
	return true
}

func (n *Node) setMessage(format string, args ...any) {
	n.message = fmt.Sprintf(format, args...)
}

// boot runs the node's startup sequence: firmware check first, then the
// stored role.
func (n *Node) boot() {
	n.gen++
	n.state = msg.StateBoot
	n.peripherals = n.o.Board.Scan()
	n.publishStatus()
	n.checkFirmware(n.gen)
}

// later runs f after the retry interval unless the node rebooted meanwhile.
func (n *Node) later(gen uint64, f func(uint64)) {
	if n.retry != nil {
		n.retry.Stop()
	}
	n.retry = n.o.Exec.After(n.o.RetryInterval, func() {
		if gen == n.gen {
			f(gen)
		}
	})
}

// checkRole resumes a stored role after validating it with the server, or
// enters UNADOPTED.
func (n *Node) checkRole(gen uint64) {
	rec, cfgData, ok, err := n.store.LoadRole()
	if err != nil {
		// A damaged role.yaml is already moved aside (kept); the node is
		// unadopted until the server adopts it again.
		n.log.Error("stored role unusable; clearing it", "err", err)
		n.setMessage("stored role unusable: %v", err)
		_ = n.store.ClearRole()
	}
	if !ok {
		n.fire(EvNoRole)
		return
	}
	req := msg.ValidateRoleRequest{
		NodeID: n.id, Role: rec.AssignedRole, Instance: rec.Instance,
		ConfigVersion: rec.ConfigVersion, ConfigSum: rec.ConfigChecksum,
	}
	n.o.Bus.CallAsync(msg.NodeValidateRoleService(n.id), req, n.o.CallTimeout, n.o.Exec, func(m bus.Msg, err error) {
		if gen != n.gen {
			return
		}
		var resp msg.ValidateRoleResponse
		if err == nil {
			err = m.Decode(&resp)
		}
		if err != nil {
			n.setMessage("waiting for server: role validation: %v", err)
			n.publishStatus()
			n.later(gen, n.checkRole)
			return
		}
		if !resp.Valid {
			n.log.Warn("server rejected stored role; returning to unadopted", "role", rec.AssignedRole, "reason", resp.Message)
			n.setMessage("stored role %s rejected by server: %s", rec.AssignedRole, resp.Message)
			_ = n.store.ClearRole()
			n.fire(EvNoRole)
			return
		}
		if resp.Config != "" {
			cfgData = []byte(resp.Config)
			rec.ConfigVersion = resp.ConfigVersion
			if err := n.store.SaveRole(rec, cfgData); err != nil {
				n.log.Error("updated role configuration not saved", "err", err)
			}
		}
		if err := n.activate(rec, cfgData); err != nil {
			n.setMessage("stored role %s failed to start: %v", rec.AssignedRole, err)
			n.log.Error("stored role failed to start", "role", rec.AssignedRole, "err", err)
			n.fire(EvNoRole)
			return
		}
		n.setMessage("")
		n.fire(EvRoleValid)
	})
}

// activate parses cfg, checks the board has every required peripheral,
// and starts the role.
func (n *Node) activate(rec RoleRecord, cfgData []byte) error {
	cfg, err := roleconfig.Parse(cfgData)
	if err != nil {
		return err
	}
	if cfg.Role != rec.AssignedRole {
		return fmt.Errorf("configuration is for role %q, not %q", cfg.Role, rec.AssignedRole)
	}
	if missing := n.missingPeripherals(cfg); len(missing) > 0 {
		return fmt.Errorf("this board lacks what the %s role requires: %s", msg.RoleKey(rec.AssignedRole, rec.Instance), strings.Join(missing, "; "))
	}
	role, err := n.o.NewRole(rec.AssignedRole)
	if err != nil {
		return err
	}
	env := rolekit.Env{
		NodeID: n.id, Exec: n.o.Exec, Bus: n.o.Bus, Board: n.o.Board, Config: cfg,
		Prefix: msg.TopicPrefix(rec.AssignedRole, rec.Instance),
		Log:    n.log.With("role", msg.RoleKey(rec.AssignedRole, rec.Instance)),
		State:  roleState{n.store},
	}
	if err := role.Start(env); err != nil {
		n.o.Board.ReleaseAll()
		return fmt.Errorf("starting %s: %w", rec.AssignedRole, err)
	}
	n.role, n.roleRec, n.roleCfg = role, rec, cfg
	if n.o.RoleStarted != nil {
		n.o.RoleStarted(rec.AssignedRole)
	}
	return nil
}

func (n *Node) missingPeripherals(cfg *roleconfig.Config) []string {
	found := map[string]bool{}
	n.peripherals = n.o.Board.Scan()
	for _, p := range n.peripherals {
		if p.Responsive {
			found[p.Type+" "+strings.ToLower(p.Address)] = true
			found[p.Type] = true // a camera is required by type, not address
		}
	}
	var missing []string
	for _, r := range cfg.Requirements() {
		key := r.Type + " " + strings.ToLower(r.Address)
		if r.Type == "camera" {
			key = "camera"
		}
		if !found[key] {
			missing = append(missing, fmt.Sprintf("%s %s (%s) not found", r.Type, r.Address, r.What))
		}
	}
	return missing
}

func (n *Node) stopRole() {
	if n.role != nil {
		n.role.Stop()
		n.role = nil
		n.roleCfg = nil
		n.roleRec = RoleRecord{}
	}
	n.o.Board.ReleaseAll()
	if n.stopEdge != nil {
		// The reset button outlives every role.
		_ = n.o.Board.Claim(n.o.ResetPin, board.DirInput, "reset_button")
	}
}

func (n *Node) handleAdopt(m bus.Msg, reply bus.Reply) {
	var req msg.AdoptNodeRequest
	if err := m.Decode(&req); err != nil {
		reply(msg.AdoptNodeResponse{Message: "bad request: " + err.Error()}, nil)
		return
	}
	fail := func(format string, args ...any) {
		reply(msg.AdoptNodeResponse{Message: fmt.Sprintf(format, args...)}, nil)
	}
	if req.NodeID != "" && req.NodeID != n.id {
		fail("node_id: this is %s, not %s", n.id, req.NodeID)
		return
	}
	if _, err := n.o.NewRole(req.Role); err != nil {
		fail("role: %v", err)
		return
	}
	if n.state != msg.StateUnadopted {
		if n.state == msg.StateActive {
			fail("node %s is already ACTIVE as %s; reset it first", n.id, msg.RoleKey(n.roleRec.AssignedRole, n.roleRec.Instance))
		} else {
			fail("node %s is %s and cannot be adopted now", n.id, n.state)
		}
		return
	}
	n.fire(EvAdopt)
	n.setMessage("adopting as %s", msg.RoleKey(req.Role, req.Instance))
	gen := n.gen
	cfgReq := msg.RoleConfigRequest{NodeID: n.id, Role: req.Role, Instance: req.Instance}
	n.o.Bus.CallAsync(msg.NodeRoleConfigService(n.id), cfgReq, n.o.CallTimeout, n.o.Exec, func(m bus.Msg, err error) {
		if gen != n.gen {
			fail("node rebooted during adoption")
			return
		}
		var cfg msg.RoleConfigResponse
		if err == nil {
			err = m.Decode(&cfg)
		}
		if err == nil && !cfg.Success {
			err = errors.New(cfg.Message)
		}
		if err != nil {
			n.adoptFailed(reply, "downloading the role configuration: %v", err)
			return
		}
		rec := RoleRecord{
			AssignedRole:  req.Role,
			Instance:      req.Instance,
			AssignedAt:    n.o.Exec.Now().UTC().Format(time.RFC3339),
			AssignedBy:    orDefault(req.AssignedBy, "admin"),
			ConfigVersion: cfg.Version,
			ServerAddress: req.ServerAddress,
		}
		if err := n.activate(rec, []byte(cfg.Config)); err != nil {
			n.adoptFailed(reply, "%v", err)
			return
		}
		// Persist before acknowledging: an adoption the server was told
		// about survives a crash the next instant.
		if err := n.store.SaveRole(rec, []byte(cfg.Config)); err != nil {
			n.stopRole()
			n.adoptFailed(reply, "saving the role: %v", err)
			return
		}
		n.setMessage("")
		n.fire(EvAdopted)
		reply(msg.AdoptNodeResponse{
			Success:             true,
			Message:             fmt.Sprintf("%s is ACTIVE as %s", n.id, msg.RoleKey(req.Role, req.Instance)),
			AssignedTopicPrefix: msg.TopicPrefix(req.Role, req.Instance),
		}, nil)
	})
}

func (n *Node) adoptFailed(reply bus.Reply, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	n.log.Warn("adoption refused", "reason", text)
	n.setMessage("adoption refused: %s", text)
	n.fire(EvAdoptFailed)
	reply(msg.AdoptNodeResponse{Message: text}, nil)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (n *Node) handleReset(m bus.Msg, reply bus.Reply) {
	var req msg.ResetNodeRequest
	if err := m.Decode(&req); err != nil {
		reply(msg.ResetNodeResponse{Message: "bad request: " + err.Error()}, nil)
		return
	}
	if n.state == msg.StateUpdating {
		reply(msg.ResetNodeResponse{Message: "node is installing firmware; reset it when the update is done"}, nil)
		return
	}
	kind := "soft reset"
	if req.FactoryReset {
		kind = "factory reset"
	}
	reply(msg.ResetNodeResponse{Success: true, Message: fmt.Sprintf("%s: %s", n.id, kind)}, nil)
	// Reset after the reply is on its way so the caller hears back.
	n.o.Exec.Post(func() { n.reset(kind, req.FactoryReset) })
}

// reset clears the role (and with factory, the installed firmware) and
// boots again.
func (n *Node) reset(kind string, factory bool) {
	n.log.Info("reset", "kind", kind)
	n.stopRole()
	if err := n.store.ClearRole(); err != nil {
		n.log.Error("clearing role", "err", err)
	}
	if factory {
		if err := n.store.ClearFirmware(); err != nil {
			n.log.Error("clearing firmware", "err", err)
		}
		if err := n.store.SetForceFirmware(true); err != nil {
			n.log.Error("setting firmware re-download", "err", err)
		}
	}
	n.setMessage("%s", kind)
	if n.fire(EvReset) {
		n.boot()
	}
}

func (n *Node) handleProbe(m bus.Msg, reply bus.Reply) {
	var req msg.GPIOProbeRequest
	_ = m.Decode(&req)
	n.peripherals = n.o.Board.Scan()
	st := n.gpioStatus()
	if len(req.Pins) > 0 {
		want := map[int]bool{}
		for _, p := range req.Pins {
			want[p] = true
		}
		var pins []msg.GPIOPin
		for _, p := range st.Pins {
			if want[int(p.PinNumber)] {
				pins = append(pins, p)
			}
		}
		st.Pins = pins
	}
	reply(msg.GPIOProbeResponse{Success: true, Message: "state " + n.state, Status: st}, nil)
}

// watchResetButton arms the hard reset: the button held low for ResetHold.
func (n *Node) watchResetButton() {
	if n.o.ResetPin < 0 {
		return
	}
	pin, err := n.o.Board.Hardware().GPIO(n.o.ResetPin)
	if err != nil {
		n.log.Warn("no reset button", "pin", n.o.ResetPin, "err", err)
		return
	}
	w, ok := pin.(gpio.EdgeWatcher)
	if !ok {
		n.log.Warn("reset button pin cannot report edges", "pin", n.o.ResetPin)
		return
	}
	if err := pin.In(gpio.PullUp, gpio.BothEdges); err != nil {
		n.log.Warn("reset button", "err", err)
		return
	}
	_ = n.o.Board.Claim(n.o.ResetPin, board.DirInput, "reset_button")
	n.stopEdge = w.WatchEdges(func(ev gpio.EdgeEvent) {
		n.o.Exec.Post(func() { n.resetEdge(ev) })
	})
}

func (n *Node) resetEdge(ev gpio.EdgeEvent) {
	if n.hold != nil {
		n.hold.Stop()
		n.hold = nil
	}
	if ev.Level == gpio.Low {
		n.hold = n.o.Exec.After(n.o.ResetHold, func() {
			n.hold = nil
			n.reset("hard reset (button held)", false)
		})
	}
}

// BusLink tells the node how its bus link is: down (with why), or up
// again (with how long it took). The bus client reports it (natsbus
// Options.OnLink); call it on Options.Exec. When the link is back the node
// says so at once: its status (carrying what kept it out) and, unadopted,
// its announcement, so the server sees it again without waiting for the
// next period.
func (n *Node) BusLink(up bool, detail string) {
	if !up {
		n.busLink = "bus link down: " + detail
		return
	}
	if n.busLink == "" && detail == "" {
		return
	}
	n.busLink = ""
	if detail != "" {
		n.busLink = "bus link back: " + detail
		n.log.Info("bus link back", "detail", detail)
	}
	if n.status == nil {
		return // not started: the first status comes with the start
	}
	n.publishStatus()
	if n.state == msg.StateUnadopted {
		n.publishGPIOStatus()
	}
}

// Status returns the node's current NodeStatus.
func (n *Node) Status() msg.NodeStatus {
	info := n.o.Board.Info()
	met := n.o.Board.Metrics()
	st := msg.NodeStatus{
		NodeID:          n.id,
		State:           n.state,
		FirmwareVersion: n.version,
		HardwareRev:     info.HardwareRev,
		Model:           info.Model,
		MACAddress:      info.MACAddress,
		Address:         info.Address,
		CPUTemp:         float32(met.CPUTempC),
		CPUUsage:        float32(met.CPUUsagePct),
		MemoryUsage:     float32(met.MemoryUsagePct),
		UptimeSeconds:   n.uptime(),
		Message:         cmp.Or(n.message, n.busLink),
		Timestamp:       float64(n.o.Exec.Now().UnixNano()) / 1e9,
	}
	if n.role != nil {
		st.Role = n.roleRec.AssignedRole
		st.Instance = n.roleRec.Instance
		st.TopicPrefix = msg.TopicPrefix(st.Role, st.Instance)
		st.ConfigVersion = n.roleRec.ConfigVersion
	}
	return st
}

func (n *Node) uptime() uint32 {
	if n.started.IsZero() {
		return 0
	}
	return uint32(n.o.Exec.Now().Sub(n.started) / time.Second)
}

func (n *Node) publishStatus() {
	if err := n.o.Bus.Publish(msg.NodeStatusTopic(n.id), n.Status()); err != nil && !errors.Is(err, bus.ErrClosed) {
		n.log.Debug("status not published", "err", err)
	}
}

func (n *Node) gpioStatus() msg.NodeGPIOStatus {
	info := n.o.Board.Info()
	met := n.o.Board.Metrics()
	st := msg.NodeGPIOStatus{
		NodeID:          n.id,
		HardwareRev:     info.HardwareRev,
		FirmwareVersion: n.version,
		CPUTemp:         float32(met.CPUTempC),
		CPUUsage:        float32(met.CPUUsagePct),
		MemoryUsage:     float32(met.MemoryUsagePct),
		UptimeSeconds:   n.uptime(),
		Pins:            []msg.GPIOPin{},
		Peripherals:     []msg.PeripheralInfo{},
	}
	if n.o.BusCA != nil {
		st.BusCA = n.o.BusCA()
	}
	for _, p := range n.o.Board.Pins() {
		st.Pins = append(st.Pins, msg.GPIOPin{
			PinNumber: uint8(p.Number), PinName: p.Name, Direction: string(p.Direction),
			CurrentState: p.State, InUse: p.InUse, UsedBy: p.UsedBy,
		})
	}
	for _, p := range n.peripherals {
		st.Peripherals = append(st.Peripherals, msg.PeripheralInfo{
			Type: p.Type, Address: p.Address, Description: p.Description, Responsive: p.Responsive,
		})
	}
	return st
}

func (n *Node) publishGPIOStatus() {
	// The node's own subject: on an authenticated bus the only one it may
	// announce on, which binds the announcement to its key. The server
	// relays it on TopicUnadopted.
	if err := n.o.Bus.Publish(msg.NodeAnnounceTopic(n.id), n.gpioStatus()); err != nil && !errors.Is(err, bus.ErrClosed) {
		n.log.Debug("announcement not published", "err", err)
	}
}

// State returns the node's state. Call it on the executor.
func (n *Node) State() State { return n.state }

// Transitions returns the state changes so far ("BOOT->UNADOPTED" ...).
// Call it on the executor.
func (n *Node) Transitions() []string { return append([]string(nil), n.transitions...) }

// Store returns the node's state directory.
func (n *Node) Store() *Store { return n.store }
