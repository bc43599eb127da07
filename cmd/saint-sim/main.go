// Command saint-sim runs the whole robot in one process: the server and
// simulated nodes (head, arms left and right, tracks, console, balance) on
// the in-process bus and a virtual clock, with the web UI.
//
//	saint-sim [--http 127.0.0.1:8000] [--ws 127.0.0.1:9090] [--data DIR] [--speed 1] [--seed 1] [--adopt] [--auth] [--livelink HOST]
//	saint-sim --scenario FILE [--out DIR] [--data DIR]
//
// With --scenario it runs a scenario (docs/scenarios.md) at full speed on
// the virtual clock instead, writes its JSON report and plots to --out, and
// exits 0 only when every metric holds.
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
	"strings"
	"syscall"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/cmd/internal/scenario"
	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/cmd/internal/vizlaunch"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/server"
)

var version = "0.1.0"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "saint-sim:", err)
		os.Exit(1)
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
	liveLinkHost := flag.String("livelink", "", "run the LiveLink receiver on this host (0.0.0.0 for a phone on the network; empty: none)")
	addrFile := flag.String("addr-file", "", "write the bound addresses here as JSON once listening")
	verbose := flag.Bool("v", false, "debug logging")
	scenarioFile := flag.String("scenario", "", "run this scenario file at full speed and exit: 0 when every metric holds, 1 otherwise")
	outDir := flag.String("out", "", "with --scenario: write report.json and the plots here")
	showViz := flag.Bool("viz", false, "open the visualizer (saint-viz) on the simulation; closing it stops the simulation")
	robotType := bringup.RegisterFlags(flag.CommandLine)
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if *scenarioFile != "" {
		if !*verbose {
			// A scenario's output is its metrics; the stack's warnings
			// and errors still show.
			log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		return runScenario(*scenarioFile, *outDir, *dataDir, log)
	}
	rt, err := robotType()
	if err != nil {
		return err
	}
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

	var robot *bringup.Robot
	if rt != "" {
		if robot, err = bringup.Resolve(os.DirFS(*configDir), rt); err != nil {
			return err
		}
	}
	st, err := stack.New(stack.Options{
		Robot: robot,
		Speed: *speed, ConfigDir: *configDir, DataDir: *dataDir, HTTPAddr: *httpAddr, WSAddr: *wsAddr,
		RequireAuth: *requireAuth, Seed: *seed, Version: version, Log: log,
		LiveLink: server.LiveLinkOptions{Host: *liveLinkHost},
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The executor outlives the signal so shutdown can run on it.
	exCtx, stopExec := context.WithCancel(context.Background())
	defer stopExec()
	runErr := make(chan error, 1)
	go func() { runErr <- st.Exec.Run(exCtx) }()

	if err := st.Start(); err != nil {
		return err
	}
	if *adopt {
		if err := st.Exec.Do(ctx, func() { _ = st.AdoptAll(nil) }); err != nil {
			return err
		}
	}
	srv := st.Server
	addrs := srv.Addrs()
	if *addrFile != "" {
		data, _ := json.Marshal(addrs)
		if err := persist.WriteFile(*addrFile, data, 0o644); err != nil {
			return err
		}
	}
	log.Info("SAINT.OS simulation running", "web", "http://"+displayAddr(addrs["http"]), "websocket", "ws://"+displayAddr(addrs["ws"])+"/saint",
		"data", *dataDir, "speed", *speed)

	if *showViz {
		go func() {
			tokenFile := ""
			if *requireAuth {
				tokenFile = filepath.Join(*dataDir, "server", "api_token")
			}
			if err := vizlaunch.Sim(ctx, vizlaunch.Options{Server: "ws://" + addrs["ws"] + "/saint", TokenFile: tokenFile,
				Exec: st.Exec, Bus: st.Broker.Connect(nil), Boards: st, Log: log}); err != nil {
				log.Error("visualizer failed; the simulation keeps running", "err", err)
				return
			}
			stop()
		}()
	}

	select {
	case <-ctx.Done():
	case err := <-runErr:
		return err
	}
	log.Info("shutting down")
	// Nodes bring their actuators to a safe state.
	st.Shutdown()
	return nil
}

// runScenario runs one scenario on its own stack (full speed, virtual
// clock, no web UI) and prints its metrics; a failing metric is an error.
func runScenario(file, outDir, workDir string, log *slog.Logger) error {
	sc, err := scenario.ReadFile(file)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := scenario.Run(ctx, sc, scenario.Options{OutDir: outDir, WorkDir: workDir, Log: log})
	if err != nil {
		return err
	}
	for _, m := range rep.Metrics {
		verdict := "pass"
		if !m.Pass {
			verdict = "FAIL"
		}
		fmt.Printf("%-4s %-28s %-15s %10.4g  tolerance %s %s\n", verdict, m.Name, m.Kind, m.Value, m.Tolerance, m.Detail)
	}
	if !rep.Pass {
		return fmt.Errorf("scenario %s failed:\n  %s", sc.Name, strings.Join(rep.Failures(), "\n  "))
	}
	fmt.Printf("scenario %s passed (%.3g s simulated in %.2g s)\n", sc.Name, rep.DurationS, rep.WallS)
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
