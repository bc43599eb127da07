package server

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/admin"
	"github.com/saint-os/saint/server/adoption"
	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/balance"
	"github.com/saint-os/saint/server/camera"
	"github.com/saint-os/saint/server/consolealerts"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/firmware"
	"github.com/saint-os/saint/server/foxglove"
	"github.com/saint-os/saint/server/heartbeat"
	"github.com/saint-os/saint/server/inputs/joystick"
	"github.com/saint-os/saint/server/inputs/livelink"
	"github.com/saint-os/saint/server/inputs/rc"
	"github.com/saint-os/saint/server/motors"
	"github.com/saint-os/saint/server/nodealerts"
	"github.com/saint-os/saint/server/recording"
	"github.com/saint-os/saint/server/router"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/system"
	"github.com/saint-os/saint/server/telemetry"
	"github.com/saint-os/saint/server/ws"
)

//go:embed web
var webFiles embed.FS

// Options configures a Server. Addresses use "host:port"; port 0 picks a
// free port (see Addrs), an empty address disables that listener.
type Options struct {
	// Bus is the robot's bus (required): an embedded NATS connection on a
	// robot, the in-process bus in the simulator.
	Bus bus.Bus
	// Exec is the executor the server's logic runs on. Nil means a
	// wall-clock executor that the server runs itself.
	Exec *executor.Executor
	// ConfigDir is the configuration tree (rc_receiver.yaml, roles/, routes/).
	ConfigDir string
	// DataDir holds what the server writes (adoption registry, logs).
	DataDir string
	// FirmwareDir is the firmware tree (manifest.json, current/, configs/);
	// default DataDir/firmware.
	FirmwareDir string
	// HTTPAddr serves the web UI, /api/ws, /api/firmware.
	HTTPAddr string
	// WSAddr serves the WebSocket API at /saint.
	WSAddr string
	// FirmwareHTTPAddr serves the firmware tree to nodes on the internal
	// network.
	FirmwareHTTPAddr string
	Log              *slog.Logger

	// NoAuth turns authentication off whatever the settings say. Start
	// then refuses to listen anywhere but on loopback: only the simulator
	// on a developer's machine runs like this.
	NoAuth bool
	// AllowedOrigins are browser origins allowed to open the WebSocket
	// API besides the server's own (see ws.Options).
	AllowedOrigins []string
	// Power performs system shutdown and reboot; nil refuses them.
	Power Power
	// Version is the server's software version (system status).
	Version string
	// Host samples the server machine's health for the system status
	// (CPU, memory, temperature, addresses); nil means this machine's.
	Host Host
	// FirmwareUpload configures POST /api/firmware.
	FirmwareUpload firmware.UploadOptions
	// RequireSignedFirmware refuses to offer nodes a firmware image that
	// is not signed by a release key (saint-server sets it unless
	// --allow-unsigned). Off — the in-process simulator's default — an
	// unsigned image is offered and only nodes built without a release
	// key install it.
	RequireSignedFirmware bool
	// Gateway overrides the WebSocket gateway's limits (MaxMessage,
	// RatePerSecond, RateBurst, AbuseLimit, SendQueue); Now, Log, Auth,
	// Guard and AllowedOrigins are the server's.
	Gateway ws.Options
	// Activity overrides the activity log's sizes (RingSize, RingBytes,
	// MaxEventBytes, MaxFileBytes, Files); Dir and Now are the server's.
	Activity activity.Options
	// TokenGuard overrides how wrong API tokens are throttled (Free,
	// FirstWait, MaxWait, Forget); its Log is the server's.
	TokenGuard auth.GuardOptions
	// LiveLink places the LiveLink receiver's listeners.
	LiveLink LiveLinkOptions
	// FoxgloveAddr serves the Foxglove WebSocket protocol (package
	// server/foxglove), behind the API token; empty serves none.
	FoxgloveAddr string
	// RecordDir is where record_start writes MCAP recordings (default
	// DataDir/recordings; without either, the server does not record).
	RecordDir string
	// BusAccess is the authority of the authenticated NATS bus
	// (server/busaccess), when the bus has one: adopting a node grants its
	// key its role's subjects, resetting it revokes them.
	BusAccess adoption.Access
	// BusCAFingerprint is the SHA-256 of the bus's TLS CA, shown in the
	// system status for comparison with what nodes pinned.
	BusCAFingerprint string
	// RobotID puts every topic and service of the server inside the robot
	// namespace "/robot_{id}" (bus.WithRobotID): the nodes, tools and
	// bridges of this robot must use the same id. Empty means the robot
	// configuration's robot_id, and when that is empty too, no namespace.
	RobotID string
	// MotorGroups are the motor roles' middlewares the root middleware
	// drives; nil means the Robot's, else motors.DefaultGroups (the two
	// arms).
	MotorGroups []motors.Group
	// Robot is the robot configuration resolved from its robot_type
	// (bringup.Resolve): motor groups, robot id, custom actions.
	Robot *bringup.Robot
	// RCPorts opens the RC receiver's configured UART: saint-server opens
	// serial devices (hal/serial), the simulator hands over its end of a
	// simulated line with rc.FixedPort. Nil refuses serial receivers.
	RCPorts rc.PortOpener
	// RCPins opens GPIO inputs for PPM and PWM receivers; nil refuses them.
	RCPins rc.PinOpener
	// Joystick is a Linux joystick device (/dev/input/js0) read into the
	// router as source "joystick", reopened whenever it is plugged back
	// in; empty reads none.
	Joystick string
}

// Power is the hook the system shutdown and reboot commands go through, so
// that tests and the simulator power nothing off.
type Power = system.Power

// Host is the server machine as the dashboard shows it: its health and its
// addresses on the internal (nodes) and external (Wi-Fi) networks.
type Host = system.Host

// LiveLinkOptions places the LiveLink receiver's listeners (see
// livelink.Listeners).
type LiveLinkOptions = livelink.Listeners

// Component is a part of the server with its own lifecycle on the
// executor: one added with Add starts after the features' components and
// stops before them.
type Component = feature.Component

// Server is saint-server: adoption manager, firmware repository and the
// WebSocket gateway, over one bus. Lifecycle as nats-server: New validates,
// Start does not block, Shutdown stops.
//
// The server is its features wired together: each feature package
// registers its WebSocket actions, topics, HTTP routes and components on
// the feature.Host, and the server runs their lifecycle.
type Server struct {
	o       Options
	log     *slog.Logger
	ex      *executor.Executor
	ownExec bool
	host    *feature.Host

	firmware *firmware.Repository
	adoption *adoption.Manager
	gateway  *ws.Gateway
	activity *activity.Log
	settings *settings.Store
	tokens   *auth.Tokens
	// tokenGuard throttles wrong tokens per address on every listener that
	// takes the token (HTTP, WebSocket, Foxglove).
	tokenGuard *auth.Guard
	router     *router.Router
	liveLink   *livelink.Feature
	rc         *rc.Feature
	// foxglove is nil without Options.FoxgloveAddr, recording without a
	// directory to record to.
	foxglove  *foxglove.Server
	recording *recording.Service

	mu        sync.Mutex
	listeners map[string]net.Listener
	servers   []*http.Server
	cancel    context.CancelFunc
	done      chan struct{}
}

// New checks o, loads the firmware repository, adoption registry, routes
// and RC configuration, and registers every feature.
func New(o Options) (*Server, error) {
	if o.Bus == nil {
		return nil, errors.New("server: Options.Bus is required")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.RobotID == "" && o.Robot != nil {
		o.RobotID = o.Robot.Param.RobotID
	}
	nb, err := bus.WithRobotID(o.Bus, o.RobotID)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	o.Bus = nb
	if o.DataDir != "" {
		// The data directory holds the API token, the registry and the
		// activity log: the server's user only.
		if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("server: data directory: %w", err)
		}
		if err := os.Chmod(o.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("server: data directory: %w", err)
		}
		if o.FirmwareDir == "" {
			o.FirmwareDir = filepath.Join(o.DataDir, "firmware")
		}
	}
	s := &Server{o: o, log: o.Log, ex: o.Exec, listeners: map[string]net.Listener{}, done: make(chan struct{})}
	if s.ex == nil {
		s.ex = executor.New(nil)
		s.ownExec = true
	}
	ao := o.Activity
	ao.Now = s.ex.Now
	ao.Dir = ""
	if o.DataDir != "" {
		ao.Dir = filepath.Join(o.DataDir, "logs")
	}
	if s.activity, err = activity.Open(ao); err != nil {
		return nil, err
	}
	// Everything logged through the server's logger, by the server and
	// the packages it hands the logger to, lands in the activity log.
	s.log = slog.New(activity.Tee(o.Log.Handler(), s.activity.Handler(slog.LevelInfo)))
	if s.settings, err = settings.OpenAt(o.DataDir, s.ex.Now()); err != nil {
		return nil, err
	}
	if s.settings.Recovered != "" {
		s.log.Error(s.settings.Recovered, "source", "settings")
	}
	s.settings.SetCheck(s.checkSettings)
	s.settings.Watch(func(n settings.Settings) {
		s.log.Info("settings changed", "source", "settings", "server_name", n.System.ServerName)
	})
	if o.DataDir != "" {
		if s.tokens, err = auth.Open(o.DataDir); err != nil {
			return nil, err
		}
	} else if !o.NoAuth {
		return nil, errors.New("server: Options.DataDir is required to keep the API token (or set NoAuth)")
	}
	roles := ""
	if o.ConfigDir != "" {
		roles = filepath.Join(o.ConfigDir, "roles")
	}
	if o.Robot != nil && len(o.Robot.RoleConfigData) > 0 {
		// The robot type chooses some role configurations of its own.
		if roles, err = robotRoles(roles, o.DataDir, o.Robot); err != nil {
			return nil, err
		}
	}
	if s.firmware, err = firmware.Open(o.FirmwareDir, roles); err != nil {
		return nil, err
	}
	if err := s.firmware.RequireSignatures(o.RequireSignedFirmware); err != nil {
		return nil, err
	}
	if ev, ok := o.BusAccess.(busEvents); ok {
		// Refused bus connections belong in the activity log with the
		// failed logins.
		ev.LogEventsTo(s.log)
	}
	if ev, ok := o.Bus.(busEvents); ok {
		// So do the service replies the bus refused to send to a
		// subject that is not an inbox (natsbus).
		ev.LogEventsTo(s.log)
	}
	s.adoption, err = adoption.New(adoption.Options{
		Exec: s.ex, Bus: o.Bus, Firmware: s.firmware, DataDir: o.DataDir, Log: s.log.With("source", "adoption"),
		OnEvent: s.adoptionEvent, Access: o.BusAccess,
		Roles: declaredRoles(o.Robot), RobotType: robotType(o.Robot),
	})
	if err != nil {
		return nil, err
	}
	guard := o.TokenGuard
	guard.Log = s.log
	s.tokenGuard = auth.NewGuard(guard)
	gw := o.Gateway
	gw.Now, gw.Log, gw.Auth, gw.AllowedOrigins, gw.Guard = s.ex.Now, s.log, authenticator{s}, o.AllowedOrigins, s.tokenGuard
	gw.OnConnect = func(ci ws.ClientInfo) {
		s.log.Info("WebSocket client connected", "source", "websocket", "client", ci.ID, "addr", ci.RemoteAddr)
	}
	gw.OnDisconnect = func(ci ws.ClientInfo) {
		s.log.Info("WebSocket client disconnected", "source", "websocket", "client", ci.ID, "addr", ci.RemoteAddr, "client_id", ci.ClientID)
	}
	s.gateway = ws.New(gw)
	s.host = feature.NewHost(feature.Options{Gateway: s.gateway, Exec: s.ex, Bus: o.Bus, Log: s.log, Protect: s.requireAuth})
	if err := s.register(); err != nil {
		_ = s.activity.Close()
		return nil, err
	}
	return s, nil
}

// register wires the features onto the host, in the order their
// components start.
func (s *Server) register() error {
	h, o := s.host, s.o
	var err error
	heartbeat.Register(h)
	adoption.Register(h, s.adoption)
	if kr, ok := o.BusAccess.(keyRejecter); ok {
		s.registerKeyRejection(h.Gateway, kr)
	}
	if ke, ok := o.BusAccess.(keyEnroller); ok {
		s.registerEnrolment(h.Gateway, ke)
	}
	firmware.Register(h, s.firmware, o.FirmwareUpload)
	activity.Register(h, s.activity)
	nodealerts.Register(h)
	consolealerts.Register(h)
	telemetry.Register(h, s.adoption.Shown)
	camera.Register(h)
	balance.Register(h)
	mot, err := motors.Register(h, motors.Options{Groups: o.MotorGroups, Robot: o.Robot})
	if err != nil {
		return err
	}
	// LiveLink sources cannot authenticate: they are admitted by address.
	// Without authentication anything local could drive the robot anyway,
	// so senders on this machine need no listing there.
	s.liveLink = livelink.Register(h, s.settings, o.LiveLink, livelink.SenderOptions{DataDir: o.DataDir, AllowLoopback: o.NoAuth})
	// The router reads its routes here, before the executor runs it.
	if s.router, err = router.Register(h, router.Options{
		DataDir: o.DataDir, LiveLink: s.liveLink.Registry(), Presets: router.ConfigPresets(o.ConfigDir),
		Sessions: mot, Arms: newArmKinematics(s.firmware).Arm, Unreachable: s.adoption.Unreachable,
	}); err != nil {
		return err
	}
	if o.Joystick != "" {
		j, err := joystick.New(joystick.Options{Exec: s.ex, Device: o.Joystick, Router: s.router, Log: s.log})
		if err != nil {
			return err
		}
		h.Add(j)
	}
	if s.rc, err = rc.Register(h, rc.FeatureOptions{ConfigDir: o.ConfigDir, DataDir: o.DataDir, Ports: o.RCPorts, Pins: o.RCPins}); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	system.Register(h, system.Options{
		Version: o.Version, Power: o.Power, Host: o.Host, Settings: s.settings, Adoption: s.adoption,
		EStopActive: s.router.EStopActive, EStop: s.router.EStop, ClearEStop: s.router.ClearEStop,
		Inputs: []func(time.Time) msg.InputStatus{s.rc.InputStatus}, BusCAFingerprint: o.BusCAFingerprint,
	})
	admin.Register(h, admin.Options{
		Settings: s.settings, Tokens: s.tokens, AuthRequired: s.authRequired,
		Sections: []admin.Section{{Name: "rc", View: s.rc.View, ChangeWith: "the rc commands (the Inputs page)"}},
	})
	foxglove.RegisterTransforms(h)
	if dir := o.RecordDir; dir != "" || o.DataDir != "" {
		if dir == "" {
			dir = filepath.Join(o.DataDir, "recordings")
		}
		if s.recording, err = recording.Register(h, recording.Options{Dir: dir, Activity: s.activity}); err != nil {
			return err
		}
	}
	if o.FoxgloveAddr != "" {
		if s.foxglove, err = foxglove.Register(h, foxglove.Options{
			Auth: authenticator{s}, Guard: s.tokenGuard, AllowedOrigins: o.AllowedOrigins, Name: "saint-os " + o.Version,
		}); err != nil {
			return err
		}
	}
	return nil
}

// Foxglove returns the Foxglove WebSocket server, nil without
// Options.FoxgloveAddr.
func (s *Server) Foxglove() *foxglove.Server { return s.foxglove }

// Recording returns the recording feature (nil when the server has no
// directory to record to): saint-server --record starts it at launch.
func (s *Server) Recording() *recording.Service { return s.recording }

// Add registers c to be started and stopped with the server; call it
// before Start.
func (s *Server) Add(c Component) { s.host.Add(c) }

// Log returns the server's logger: what is logged through it with
// "source" and "node" attributes lands in the activity log.
func (s *Server) Log() *slog.Logger { return s.log }

// Exec returns the executor the server runs on.
func (s *Server) Exec() *executor.Executor { return s.ex }

// Bus returns the bus the server was given.
func (s *Server) Bus() bus.Bus { return s.o.Bus }

// Gateway returns the WebSocket gateway (other packages register handlers
// on it).
func (s *Server) Gateway() *ws.Gateway { return s.gateway }

// Router returns the input/output router; use it on the executor.
func (s *Server) Router() *router.Router { return s.router }

// Activity returns the activity log.
func (s *Server) Activity() *activity.Log { return s.activity }

// Settings returns the settings store.
func (s *Server) Settings() *settings.Store { return s.settings }

// Adoption returns the adoption manager; use it on the executor.
func (s *Server) Adoption() *adoption.Manager { return s.adoption }

// Firmware returns the firmware repository.
func (s *Server) Firmware() *firmware.Repository { return s.firmware }

// Token returns the API token ("" when the server keeps none).
func (s *Server) Token() string {
	if s.tokens == nil {
		return ""
	}
	return s.tokens.Token()
}

// RCReceiver returns the RC receiver; use it on the executor.
func (s *Server) RCReceiver() *rc.Receiver { return s.rc.Receiver() }

// LiveLinkAddrs returns the LiveLink receiver's bound addresses (empty
// when it is off).
func (s *Server) LiveLinkAddrs() livelink.Addrs { return s.liveLink.Addrs() }

// adoptionEvent records an adoption event in the activity log.
// busEvents is a bus authority with events for the activity log
// (busaccess.Authority).
type busEvents interface{ LogEventsTo(*slog.Logger) }

func (s *Server) adoptionEvent(level, nodeID, text string) {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	s.log.Log(context.Background(), l, text, "node", nodeID, "source", "adoption")
}

// Start starts the features' components on the executor and opens the
// listeners. It does not block. With authentication off it refuses to
// listen beyond loopback.
func (s *Server) Start() error {
	if !s.authRequired() {
		if pub := s.publicAddrs(); len(pub) > 0 {
			return fmt.Errorf("server: authentication is off, so the API may listen on loopback only; %s is not (turn authentication on, or listen on 127.0.0.1)", strings.Join(pub, ", "))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if s.ownExec {
		go func() {
			_ = s.ex.Run(ctx)
			close(s.done)
		}()
	} else {
		close(s.done)
	}
	errc := make(chan error, 1)
	s.ex.Post(func() { errc <- s.startOnExec() })
	wait, cancelWait := context.WithTimeout(ctx, 10*time.Second)
	defer cancelWait()
	select {
	case err := <-errc:
		if err != nil {
			s.Shutdown()
			return err
		}
	case <-wait.Done():
		// A virtual executor that nobody runs would leave us here.
		s.Shutdown()
		return errors.New("server: executor is not running; run it before Start")
	}
	return s.listen()
}

// startOnExec starts the components in the order they were registered;
// on an error those started are stopped again.
func (s *Server) startOnExec() error {
	for _, c := range s.host.Components() {
		if err := c.Start(); err != nil {
			return err
		}
	}
	s.log.Info("SAINT.OS server started", "source", "system", "version", s.o.Version)
	return nil
}

// redirectToUIPage sends a browser from /nodes/ID to /#/nodes/ID.
func redirectToUIPage(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/#"+r.URL.Path, http.StatusFound)
}

func (s *Server) listen() error {
	web, _ := fs.Sub(webFiles, "web")
	mux := s.host.HTTP()
	mux.Handle("/api/ws", s.gateway)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("/", http.FileServer(http.FS(web)))
	// The UI's page addresses (/nodes, /routes/edit/ID, ...) open the same
	// pages of the single-page UI, whose routes live in the URL's hash.
	for _, page := range []string{"/nodes", "/routes", "/inputs", "/settings", "/logs", "/robot"} {
		mux.HandleFunc("GET "+page, redirectToUIPage)
		mux.HandleFunc("GET "+page+"/", redirectToUIPage)
	}

	wsMux := http.NewServeMux()
	wsMux.Handle("/saint", s.gateway)
	wsMux.Handle("/api/ws", s.gateway)

	fwMux := http.NewServeMux()
	fwMux.Handle("/firmware/", s.firmware.Handler())

	for _, l := range []struct {
		name string
		addr string
		h    http.Handler
	}{
		{"http", s.o.HTTPAddr, s.guard(mux)},
		{"ws", s.o.WSAddr, s.guard(wsMux)},
		{"firmware", s.o.FirmwareHTTPAddr, fwMux},
		{"foxglove", s.o.FoxgloveAddr, s.foxglove},
	} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			s.Shutdown()
			return fmt.Errorf("server: %s listener on %s: %w", l.name, l.addr, err)
		}
		// IdleTimeout closes kept-alive connections nobody uses, which
		// would otherwise count against the clients' sockets for ever.
		srv := &http.Server{Handler: l.h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		s.mu.Lock()
		s.listeners[l.name] = ln
		s.servers = append(s.servers, srv)
		s.mu.Unlock()
		go func() { _ = srv.Serve(ln) }()
		if l.name == "firmware" {
			s.firmware.SetHTTPAddr(ln.Addr().String())
		}
		s.log.Info("listening", "service", l.name, "addr", ln.Addr().String())
	}
	return nil
}

// Addrs returns the bound address of each listener: "http", "ws",
// "firmware", "foxglove".
func (s *Server) Addrs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for n, l := range s.listeners {
		out[n] = l.Addr().String()
	}
	return out
}

// Shutdown closes listeners and clients and stops the components in
// reverse order. It does not close the bus, which the caller owns.
func (s *Server) Shutdown() {
	s.mu.Lock()
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	s.gateway.CloseAll()
	s.host.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(ctx)
	}
	stop := func() {
		cs := s.host.Components()
		for i := len(cs) - 1; i >= 0; i-- {
			cs[i].Stop()
		}
	}
	if err := s.ex.Do(ctx, stop); err != nil {
		s.log.Warn("server logic did not stop cleanly", "err", err)
	}
	if s.cancel != nil {
		s.cancel()
	}
	<-s.done
	if err := s.activity.Close(); err != nil {
		s.o.Log.Warn("activity log", "err", err)
	}
}
