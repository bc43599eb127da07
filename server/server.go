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

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/adoption"
	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/firmware"
	"github.com/saint-os/saint/server/router"
	"github.com/saint-os/saint/server/settings"
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
	// ConfigDir is the configuration tree (server.yaml, roles/, routes/).
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
	// Gateway overrides the WebSocket gateway's limits (MaxMessage,
	// RatePerSecond, RateBurst, AbuseLimit, SendQueue); Now, Log, Auth
	// and AllowedOrigins are the server's.
	Gateway ws.Options
	// Activity overrides the activity log's sizes (RingSize,
	// MaxFileBytes, Files); Dir and Now are the server's.
	Activity activity.Options
	// LiveLink places the LiveLink receiver's listeners (server/livelink.go).
	LiveLink LiveLinkOptions
}

// Power is the hook the system shutdown and reboot commands go through, so
// that tests and the simulator power nothing off.
type Power interface {
	Shutdown(reason string) error
	Reboot(reason string) error
}

// Server is saint-server: adoption manager, firmware repository and the
// WebSocket gateway, over one bus. Lifecycle as nats-server: New validates,
// Start does not block, Shutdown stops.
type Server struct {
	o        Options
	log      *slog.Logger
	ex       *executor.Executor
	ownExec  bool
	firmware *firmware.Repository
	adoption *adoption.Manager
	gateway  *ws.Gateway
	activity *activity.Log
	router   *router.Router
	liveLink *liveLink
	settings *settings.Store
	tokens   *auth.Tokens
	started  time.Time

	// Last RC receiver state and when it arrived (executor only).
	// host is the latest sample of the machine's health (executor only).
	host    hostSample
	rcState *msg.RCReceiverState
	rcAt    time.Time
	extras  []Component

	stopLogFeed func()
	statusTimer *executor.Timer
	// streams are the open /api/logs follow connections, closed on
	// shutdown.
	streamMu sync.Mutex
	streams  map[chan struct{}]struct{}

	mu        sync.Mutex
	listeners map[string]net.Listener
	servers   []*http.Server
	subs      []bus.Subscription
	cancel    context.CancelFunc
	done      chan struct{}
}

// New checks o and loads the firmware repository and adoption registry.
func New(o Options) (*Server, error) {
	if o.Bus == nil {
		return nil, errors.New("server: Options.Bus is required")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.DataDir != "" {
		if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
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
	var err error
	if o.DataDir != "" {
		ao.Dir = filepath.Join(o.DataDir, "logs")
	}
	if s.activity, err = activity.Open(ao); err != nil {
		return nil, err
	}
	// Everything logged through the server's logger, by the server and
	// the packages it hands the logger to, lands in the activity log.
	s.log = slog.New(activity.Tee(o.Log.Handler(), s.activity.Handler(slog.LevelInfo)))
	if s.settings, err = settings.Open(o.DataDir); err != nil {
		return nil, err
	}
	s.settings.SetCheck(s.checkSettings)
	s.settings.Watch(s.settingsChanged)
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
	repo, err := firmware.Open(o.FirmwareDir, roles)
	if err != nil {
		return nil, err
	}
	s.firmware = repo
	s.adoption, err = adoption.New(adoption.Options{
		Exec: s.ex, Bus: o.Bus, Firmware: repo, DataDir: o.DataDir, Log: s.log.With("source", "adoption"),
		OnEvent: s.event,
	})
	if err != nil {
		return nil, err
	}
	gw := o.Gateway
	gw.Now, gw.Log, gw.Auth, gw.AllowedOrigins = s.ex.Now, s.log, authenticator{s}, o.AllowedOrigins
	gw.OnConnect = func(ci ws.ClientInfo) {
		s.log.Info("WebSocket client connected", "source", "websocket", "client", ci.ID, "addr", ci.RemoteAddr)
	}
	gw.OnDisconnect = func(ci ws.ClientInfo) {
		s.log.Info("WebSocket client disconnected", "source", "websocket", "client", ci.ID, "addr", ci.RemoteAddr, "client_id", ci.ClientID)
	}
	s.gateway = ws.New(gw)
	s.gateway.SetTopics(Topics()...)
	s.gateway.SetEventTopics(TopicLogs)
	// The router reads its routes here, before the executor runs it.
	s.liveLink = s.newLiveLink()
	s.router, err = router.New(router.Options{
		Exec: s.ex, Bus: o.Bus, DataDir: o.DataDir, Log: s.log, LiveLink: s.liveLink.registry,
		Presets: router.ConfigPresets(o.ConfigDir),
	})
	if err != nil {
		return nil, err
	}
	s.router.RegisterCommands(s.gateway)
	s.Add(s.router)
	s.Add(s.liveLink)
	s.registerManagement()
	s.registerAdmin()
	s.registerSystem()
	s.Add(newHostMonitor(s))
	s.registerRC()
	s.registerBalanceConsole()
	if err := s.setupRC(); err != nil {
		return nil, err
	}
	return s, nil
}

// Component is a part of the server with its own lifecycle on the
// executor (the router): started after the server's own services, stopped
// before them.
type Component interface {
	Start() error
	Stop()
}

// Add registers c to be started and stopped with the server; call it
// before Start.
func (s *Server) Add(c Component) { s.extras = append(s.extras, c) }

// Log returns the server's logger: what is logged through it with
// "source" and "node" attributes lands in the activity log.
func (s *Server) Log() *slog.Logger { return s.log }

// Router returns the input/output router; use it on the executor.
func (s *Server) Router() *router.Router { return s.router }

// Activity returns the activity log.
func (s *Server) Activity() *activity.Log { return s.activity }

// Settings returns the settings store.
func (s *Server) Settings() *settings.Store { return s.settings }

// Token returns the API token ("" when the server keeps none).
func (s *Server) Token() string {
	if s.tokens == nil {
		return ""
	}
	return s.tokens.Token()
}

// Bus returns the bus the server was given.
func (s *Server) Bus() bus.Bus { return s.o.Bus }

// authRequired reports whether clients must present the API token.
func (s *Server) authRequired() bool {
	return !s.o.NoAuth && s.tokens != nil && s.settings.Get().Auth.Required
}

// authenticator adapts the server to ws.Authenticator.
type authenticator struct{ s *Server }

func (a authenticator) Required() bool { return a.s.authRequired() }
func (a authenticator) Valid(tok string) bool {
	return a.s.tokens != nil && a.s.tokens.Valid(tok)
}

// Authenticator checks API tokens as the WebSocket API does, for other
// listeners that must sit behind the same token (the Foxglove server).
func (s *Server) Authenticator() ws.Authenticator { return authenticator{s} }

// requireAuth guards an HTTP handler with the bearer token.
func (s *Server) requireAuth(h http.Handler) http.Handler {
	if s.tokens == nil {
		return h
	}
	return s.tokens.Middleware(s.authRequired, h)
}

// publicAddrs lists the client-facing listen addresses that are not
// loopback-only. The internal firmware port is for nodes and serves
// nothing secret.
func (s *Server) publicAddrs() []string {
	var out []string
	for _, a := range []string{s.o.HTTPAddr, s.o.WSAddr} {
		if a != "" && !isLoopback(a) {
			out = append(out, a)
		}
	}
	return out
}

// isLoopback reports whether a listen address binds only loopback.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkSettings vetoes settings the server cannot honour.
func (s *Server) checkSettings(old, next settings.Settings) error {
	if !next.Auth.Required && !s.o.NoAuth {
		if pub := s.publicAddrs(); len(pub) > 0 {
			return &settings.FieldError{Field: "auth.required", Message: fmt.Sprintf(
				"cannot turn authentication off while the API listens beyond loopback (%s)", strings.Join(pub, ", "))}
		}
	}
	return nil
}

// settingsChanged reacts to a stored change.
func (s *Server) settingsChanged(n settings.Settings) {
	s.log.Info("settings changed", "source", "settings", "server_name", n.System.ServerName)
}

// event records an activity event.
func (s *Server) event(level, nodeID, text string) {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	s.log.Log(context.Background(), l, text, "node", nodeID, "source", "adoption")
}

// Exec returns the executor the server runs on.
func (s *Server) Exec() *executor.Executor { return s.ex }

// Gateway returns the WebSocket gateway (other packages register handlers
// on it).
func (s *Server) Gateway() *ws.Gateway { return s.gateway }

// Adoption returns the adoption manager; use it on the executor.
func (s *Server) Adoption() *adoption.Manager { return s.adoption }

// Firmware returns the firmware repository.
func (s *Server) Firmware() *firmware.Repository { return s.firmware }

// Start serves the bus services and opens the listeners. It does not block.
// With authentication off it refuses to listen beyond loopback.
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
	s.ex.Post(func() {
		s.started = s.ex.Now()
		errc <- s.startOnExec()
	})
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

func (s *Server) startOnExec() error {
	if err := s.adoption.Start(); err != nil {
		return err
	}
	if err := s.startFeeds(); err != nil {
		return err
	}
	serve := func(name string, h bus.ServiceHandler) error {
		sub, err := s.o.Bus.Serve(name, s.ex, h)
		if err == nil {
			s.subs = append(s.subs, sub)
		}
		return err
	}
	if err := serve(msg.ServiceFirmwareCheck, func(m bus.Msg, reply bus.Reply) {
		var req msg.FirmwareCheckRequest
		if err := m.Decode(&req); err != nil {
			reply(nil, err)
			return
		}
		reply(s.firmware.Check(req), nil)
	}); err != nil {
		return err
	}
	if err := serve(msg.ServiceFirmwareDownload, func(m bus.Msg, reply bus.Reply) {
		var req msg.FirmwareDownloadRequest
		if err := m.Decode(&req); err != nil {
			reply(nil, err)
			return
		}
		// Disk reads stay off the executor.
		go func() { reply(s.firmware.Download(req), nil) }()
	}); err != nil {
		return err
	}
	if err := serve(msg.ServiceSystemStatus, func(_ bus.Msg, reply bus.Reply) {
		reply(s.systemStatus(), nil)
	}); err != nil {
		return err
	}
	for _, c := range s.extras {
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
	mux := http.NewServeMux()
	mux.Handle("/api/ws", s.gateway)
	mux.Handle("/api/firmware/", s.requireAuth(http.StripPrefix("/api", s.firmware.Handler())))
	mux.Handle("GET /api/firmware", s.requireAuth(http.HandlerFunc(s.serveFirmwareStatus)))
	mux.Handle("POST /api/firmware", s.requireAuth(s.firmware.UploadHandler(s.o.FirmwareUpload)))
	mux.Handle("GET /api/logs", s.requireAuth(http.HandlerFunc(s.serveLogs)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("/", http.FileServer(http.FS(web)))
	// The spec's page addresses (/nodes, /routes/edit/ID, ...) open the same
	// pages of the single-page UI, whose routes live in the URL's hash.
	for _, page := range []string{"/nodes", "/routes", "/inputs", "/settings", "/logs"} {
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
		{"http", s.o.HTTPAddr, mux},
		{"ws", s.o.WSAddr, wsMux},
		{"firmware", s.o.FirmwareHTTPAddr, fwMux},
	} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			s.Shutdown()
			return fmt.Errorf("server: %s listener on %s: %w", l.name, l.addr, err)
		}
		srv := &http.Server{Handler: l.h, ReadHeaderTimeout: 10 * time.Second}
		s.mu.Lock()
		s.listeners[l.name] = ln
		s.servers = append(s.servers, srv)
		s.mu.Unlock()
		go func() { _ = srv.Serve(ln) }()
		s.log.Info("listening", "service", l.name, "addr", ln.Addr().String())
	}
	return nil
}

// Addrs returns the bound address of each listener: "http", "ws",
// "firmware".
func (s *Server) Addrs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for n, l := range s.listeners {
		out[n] = l.Addr().String()
	}
	return out
}

// Shutdown closes listeners and clients and stops the server's logic. It
// does not close the bus, which the caller owns.
func (s *Server) Shutdown() {
	s.mu.Lock()
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	s.gateway.CloseAll()
	s.closeStreams()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(ctx)
	}
	stop := func() {
		for i := len(s.extras) - 1; i >= 0; i-- {
			s.extras[i].Stop()
		}
		s.stopFeeds()
		s.adoption.Stop()
		for _, sub := range s.subs {
			_ = sub.Unsubscribe()
		}
		s.subs = nil
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
