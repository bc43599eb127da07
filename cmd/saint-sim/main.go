// Command saint-sim runs the whole robot in one process: the server and
// simulated nodes (head, arms left and right, tracks, console, balance) on
// the in-process bus and a virtual clock, with the web UI.
//
//	saint-sim [--http 127.0.0.1:8000] [--ws 127.0.0.1:9090] [--data DIR] [--speed 1] [--seed 1] [--adopt] [--auth]
//
// Without --auth the API needs no token, and the simulator then listens on
// loopback only (it refuses other addresses). With --auth it behaves like
// saint-server: the token is in DATA/server/api_token.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/node/persist"
	"github.com/saint-os/saint/server"
	simrobot "github.com/saint-os/saint/sim/robot"
)

var version = "0.1.0"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "saint-sim:", err)
		os.Exit(1)
	}
}

// simNode is one simulated node of the robot and the role it is adopted
// into with --adopt.
type simNode struct {
	id, profile, role, instance, name string
}

// part is the simulated robot's part the node runs on.
func (sn simNode) part() simrobot.Part {
	if sn.instance != "" {
		return simrobot.Part(sn.profile + "_" + sn.instance)
	}
	return simrobot.Part(sn.profile)
}

func robot() []simNode {
	return []simNode{
		{"sim-head", "head", "head", "", "Head Unit"},
		{"sim-arms-left", "arms", "arms", "left", "Left Arm"},
		{"sim-arms-right", "arms", "arms", "right", "Right Arm"},
		{"sim-tracks", "tracks", "tracks", "", "Tracks"},
		{"sim-console", "console", "console", "", "Console"},
		{"sim-balance", "balance", "balance", "", "Balance Base"},
	}
}

func run() error {
	httpAddr := flag.String("http", "127.0.0.1:8000", "web UI and /api/ws address")
	wsAddr := flag.String("ws", "127.0.0.1:9090", "WebSocket API address (ws://HOST/saint)")
	requireAuth := flag.Bool("auth", false, "require the API token (needed to listen beyond loopback)")
	dataDir := flag.String("data", "", "state directory (default: a new temporary directory)")
	configDir := flag.String("config", "", "configuration tree (default: the built-in fixtures)")
	speed := flag.Float64("speed", 1, "simulation speed: 1 = real time, 2 = twice as fast, 0 = as fast as possible")
	adopt := flag.Bool("adopt", false, "adopt every simulated node into its role at start")
	seed := flag.Uint64("seed", 1, "seed of the physics' and sensors' noise: the same seed gives the same run")
	addrFile := flag.String("addr-file", "", "write the bound addresses here as JSON once listening")
	verbose := flag.Bool("v", false, "debug logging")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if *dataDir == "" {
		d, err := os.MkdirTemp("", "saint-sim-")
		if err != nil {
			return err
		}
		*dataDir = d
	}
	if *configDir == "" {
		*configDir = filepath.Join(*dataDir, "config")
		if err := fixtures.WriteConfig(*configDir); err != nil {
			return fmt.Errorf("writing configuration: %w", err)
		}
	}

	clk := clock.NewVirtual(clock.Epoch())
	ex := executor.New(&executor.Options{Clock: clk, Speed: *speed})
	broker := mem.NewBroker()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The executor outlives the signal so shutdown can run on it.
	exCtx, stopExec := context.WithCancel(context.Background())
	defer stopExec()
	runErr := make(chan error, 1)
	go func() { runErr <- ex.Run(exCtx) }()

	srv, err := server.New(server.Options{
		Bus: broker.Connect(nil), Exec: ex, ConfigDir: *configDir,
		DataDir: filepath.Join(*dataDir, "server"), HTTPAddr: *httpAddr, WSAddr: *wsAddr, Log: log,
		NoAuth: !*requireAuth, Power: simPower{log}, Version: version,
	})
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}

	// The physics and the simulated boards the nodes run on.
	ids := map[simrobot.Part]string{}
	for _, sn := range robot() {
		ids[sn.part()] = sn.id
	}
	rb, err := simrobot.New(simrobot.Options{Exec: ex, Bus: broker.Connect(nil), Seed: *seed, NodeIDs: ids})
	if err != nil {
		return err
	}
	if err := rb.Start(); err != nil {
		return err
	}

	var nodes []*node.Node
	for _, sn := range robot() {
		b := rb.Board(sn.part())
		n, err := node.New(node.Options{
			Exec: ex, Bus: broker.Connect(nil), Board: b, FirmwareVersion: version,
			StateDir: filepath.Join(*dataDir, "nodes", sn.id), Log: log,
		})
		if err != nil {
			return err
		}
		n.Start()
		nodes = append(nodes, n)
	}
	if *adopt {
		adoptAll(ex, srv, log)
	}
	addrs := srv.Addrs()
	if *addrFile != "" {
		data, _ := json.Marshal(addrs)
		if err := persist.WriteFile(*addrFile, data, 0o644); err != nil {
			return err
		}
	}
	log.Info("SAINT.OS simulation running", "web", "http://"+displayAddr(addrs["http"]), "websocket", "ws://"+displayAddr(addrs["ws"])+"/saint",
		"data", *dataDir, "speed", *speed)

	select {
	case <-ctx.Done():
	case err := <-runErr:
		return err
	}
	log.Info("shutting down")
	srv.Shutdown()
	// Nodes bring their actuators to a safe state.
	_ = ex.Do(context.Background(), func() {
		for _, n := range nodes {
			n.Stop()
		}
		rb.Stop()
	})
	return nil
}

// adoptAll adopts each simulated node into its role as soon as it has
// announced itself; nodes that resumed a stored role are left alone.
func adoptAll(ex *executor.Executor, srv *server.Server, log *slog.Logger) {
	pending := map[string]simNode{}
	for _, sn := range robot() {
		pending[sn.id] = sn
	}
	var tick *executor.Timer
	tick = ex.Every(node.DefaultAnnounceInterval, func() {
		am := srv.Adoption()
		for id, sn := range pending {
			u, a, _ := am.Lookup(id)
			switch {
			case a != nil:
				delete(pending, id)
			case u != nil:
				delete(pending, id)
				req := msg.AdoptNodeRequest{NodeID: id, Role: sn.role, Instance: sn.instance, DisplayName: sn.name, AssignedBy: "saint-sim --adopt"}
				am.Adopt(req, func(resp msg.AdoptNodeResponse, err error) {
					if err != nil || !resp.Success {
						log.Error("adoption failed", "node", id, "err", err, "message", resp.Message)
					}
				})
			}
		}
		if len(pending) == 0 {
			tick.Stop()
		}
	})
}

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

// displayAddr turns a wildcard listen address into one a browser can open.
func displayAddr(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return a
	}
	if host == "" || host == "::" || host == "0.0.0.0" {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
