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
	"sync"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/adoption"
	"github.com/saint-os/saint/server/firmware"
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
	started  time.Time

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
		Exec: s.ex, Bus: o.Bus, Firmware: repo, DataDir: o.DataDir, Log: o.Log,
		OnEvent: s.event,
	})
	if err != nil {
		return nil, err
	}
	s.gateway = ws.New(ws.Options{Now: s.ex.Now, Log: o.Log})
	s.registerManagement()
	return s, nil
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
func (s *Server) Start() error {
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
	return nil
}

func (s *Server) listen() error {
	web, _ := fs.Sub(webFiles, "web")
	mux := http.NewServeMux()
	mux.Handle("/api/ws", s.gateway)
	mux.Handle("/api/firmware/", http.StripPrefix("/api", s.firmware.Handler()))
	mux.HandleFunc("/api/firmware", s.serveFirmwareStatus)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("/", http.FileServer(http.FS(web)))

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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(ctx)
	}
	stop := func() {
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
}
