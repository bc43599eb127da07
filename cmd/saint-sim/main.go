// Command saint-sim runs the whole robot in one process: the server and
// simulated nodes (head, arms left and right, tracks, console, balance) on
// the in-process bus and a virtual clock, with the web UI.
//
//	saint-sim [--http 127.0.0.1:8000] [--ws 127.0.0.1:9090] [--foxglove 127.0.0.1:8765] [--data DIR | --keep-data] [--speed 1] [--seed 1] [--adopt] [--auth] [--livelink HOST]
//	saint-sim --scenario FILE [--out DIR] [--data DIR] [--record FILE|off]
//	saint-sim --replay FILE [--speed 1] [--http ...] [--ws ...]
//	saint-sim [...] --record FILE | --replay-inputs FILE
//
// With --scenario it runs a scenario (docs/scenarios.md) at full speed on
// the virtual clock instead, writes its JSON report and plots to --out, and
// exits 0 only when every metric holds. It records the run to OUT/run.mcap
// beside the report unless --record says otherwise.
//
// --foxglove ADDR serves the Foxglove WebSocket protocol (docs/foxglove.md).
// --record FILE records every bus topic to an MCAP file (docs/recording.md).
// --replay FILE plays a recording back onto the bus, with the server and
// its web UI but no simulated robot, so the UI, the visualizer and
// Foxglove show the recorded run; --replay-inputs FILE replays only the
// recording's inputs (commands, RC, LiveLink) into the live simulation.
//
// Without --data, the state and the configuration go to a new temporary
// directory, which is logged at start and removed at exit (an interrupt or
// SIGTERM included) unless --keep-data.
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
	"github.com/saint-os/saint/internal/sibling"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/auth"
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
	dataDir := flag.String("data", "", "state directory (default: a new temporary directory, removed at exit unless --keep-data)")
	keepData := flag.Bool("keep-data", false, "keep the temporary data directory made when --data is not given")
	configDir := flag.String("config", "", "configuration tree (default: the built-in fixtures)")
	speed := flag.Float64("speed", 1, "simulation speed: 1 = real time, 2 = twice as fast, 0 = as fast as possible")
	adopt := flag.Bool("adopt", false, "adopt every simulated node into its role at start")
	seed := flag.Uint64("seed", 1, "seed of the physics' and sensors' noise: the same seed gives the same run")
	liveLinkHost := flag.String("livelink", "", "run the LiveLink receiver on this host (0.0.0.0 for a phone on the network, with livelink.external on in the settings; empty: none)")
	addrFile := flag.String("addr-file", "", "write the bound addresses here as JSON once listening")
	verbose := flag.Bool("v", false, "debug logging")
	scenarioFile := flag.String("scenario", "", "run this scenario file at full speed and exit: 0 when every metric holds, 1 otherwise")
	outDir := flag.String("out", "", "with --scenario: write report.json and the plots here")
	showViz := flag.Bool("viz", false, "open the visualizer (saint-viz) on the simulation; closing it stops the simulation")
	recordFile := flag.String("record", "", "record every bus topic to this MCAP file (with --scenario: default OUT/run.mcap; \"off\" for none)")
	replayFile := flag.String("replay", "", "play this MCAP recording back onto the bus at its recorded rate (scaled by --speed) instead of simulating the robot")
	foxgloveAddr := flag.String("foxglove", "", "serve the Foxglove WebSocket protocol here, e.g. 127.0.0.1:8765 (empty: none)")
	replayInputs := flag.String("replay-inputs", "", "replay the inputs (commands, RC, LiveLink) of this MCAP recording into the live simulation")
	runROS2 := flag.Bool("ros2", false, "run the ROS 2 bridge (saint-ros2) beside the simulation, on ROS_DOMAIN_ID (see docs/ros2.md)")
	ros2Args := flag.String("ros2-args", "", "with --ros2: more saint-ros2 flags, space-separated (\"--domain 7 --deny /saint/arms/**\")")
	robotID := flag.String("robot-id", "", "the robot's bus namespace: every topic and service under /robot_<id>/ (default: the robot configuration's robot_id; empty: none)")
	var origins []string
	flag.Func("allow-origin", "a browser origin allowed to use the WebSocket API and the Foxglove server besides the server's own (repeatable), e.g. http://127.0.0.1:8080 for a self-hosted Foxglove app", func(v string) error {
		origins = append(origins, v)
		return nil
	})
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
		return runScenario(*scenarioFile, *outDir, *dataDir, *recordFile, log)
	}
	rt, err := robotType()
	if err != nil {
		return err
	}
	// The children's binaries are found before anything starts: a missing
	// one stops saint-sim at once with how to build it.
	var ros2Bin, vizBin string
	if *runROS2 {
		if ros2Bin, err = sibling.Path("saint-ros2"); err != nil {
			return fmt.Errorf("--ros2: %w", err)
		}
	}
	if *showViz {
		if vizBin, err = sibling.Path("saint-viz"); err != nil {
			return fmt.Errorf("--viz: %w", err)
		}
	}
	if *dataDir == "" {
		d, err := os.MkdirTemp("", "saint-sim-")
		if err != nil {
			return err
		}
		*dataDir = d
		// Removed on every way out of run: a normal exit, an interrupt
		// or SIGTERM (both end run through the context below) and an
		// error. Only a kill leaves it behind.
		defer removeTempData(d, *keepData, log)
		if *keepData {
			log.Info("temporary data directory, kept at exit (--keep-data)", "dir", d)
		} else {
			log.Info("temporary data directory, removed at exit (--keep-data keeps it)", "dir", d)
		}
	}
	if *configDir == "" {
		*configDir = filepath.Join(*dataDir, "config")
		if err := fixtures.WriteConfig(*configDir); err != nil {
			return fmt.Errorf("writing configuration: %w", err)
		}
	}

	if *replayFile != "" {
		return runReplay(replayOptions{file: *replayFile, speed: *speed, dataDir: *dataDir, configDir: *configDir, foxglove: *foxgloveAddr, origins: origins,
			httpAddr: *httpAddr, wsAddr: *wsAddr, requireAuth: *requireAuth, addrFile: *addrFile, log: log})
	}

	var robot *bringup.Robot
	if rt != "" {
		if robot, err = bringup.Resolve(os.DirFS(*configDir), rt); err != nil {
			return err
		}
	}
	st, err := stack.New(stack.Options{
		Robot: robot, RobotID: *robotID,
		Speed: *speed, ConfigDir: *configDir, DataDir: *dataDir, HTTPAddr: *httpAddr, WSAddr: *wsAddr,
		RequireAuth: *requireAuth, Seed: *seed, Version: version, Log: log,
		LiveLink: server.LiveLinkOptions{Host: *liveLinkHost}, FoxgloveAddr: *foxgloveAddr, AllowedOrigins: origins,
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The executor outlives the signal so shutdown can run on it.
	exCtx, stopExec := context.WithCancel(context.Background())
	defer stopExec()

	var runRec *record.Recorder
	if *recordFile != "" && *recordFile != "off" {
		// Before the stack starts, so the recording has the nodes' boot;
		// the executor does not run yet, so this goroutine may.
		runRec, err = record.Start(record.Options{Bus: st.Connect(), Exec: st.Exec, File: *recordFile, Log: log})
		if err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}
	// Started at the clock's first instant and adopted from there, the
	// same seed gives the same robot whatever the wall clock does.
	if err := st.StartHeld(ctx); err != nil {
		return err
	}
	if *replayInputs != "" {
		if _, err := record.Replay(record.ReplayOptions{Bus: st.Connect(), Exec: st.Exec, File: *replayInputs,
			Topics: record.InputTopics, Log: log}); err != nil {
			return fmt.Errorf("--replay-inputs: %w", err)
		}
	}
	if *adopt {
		_ = st.AdoptAll(nil)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- st.Exec.Run(exCtx) }()
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
	if a := addrs["foxglove"]; a != "" {
		log.Info("Foxglove: open a Foxglove WebSocket connection", "url", "ws://"+displayAddr(a))
	}
	if *requireAuth {
		// Where a client (saintctl --token-file, Foxglove's ?token=) finds it.
		log.Info("the API requires the token", "token_file", filepath.Join(*dataDir, "server", auth.FileName))
	}

	if *runROS2 {
		stopROS2, err := startROS2(ctx, st, robot, *configDir, ros2Bin, *speed, strings.Fields(*ros2Args), log)
		if err != nil {
			return err
		}
		defer stopROS2()
	}

	if *showViz {
		go func() {
			tokenFile := ""
			if *requireAuth {
				tokenFile = filepath.Join(*dataDir, "server", auth.FileName)
			}
			if err := vizlaunch.Sim(ctx, vizlaunch.Options{Bin: vizBin, Server: "ws://" + addrs["ws"] + "/saint", TokenFile: tokenFile,
				Exec: st.Exec, Bus: st.Connect(), Boards: st, Log: log}); err != nil {
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
	// Nodes bring their actuators to a safe state; the server stops a
	// recording started with saintctl record.
	st.Shutdown()
	// --record's recording ends after the nodes' safe stop, which it
	// includes.
	if runRec != nil {
		if err := runRec.Stop(); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
		st := runRec.Status()
		log.Info("recorded", "file", *recordFile, "messages", st.Messages, "dropped", st.Dropped)
	}
	return nil
}

// runScenario runs one scenario on its own stack (full speed, virtual
// clock, no web UI) and prints its metrics; a failing metric is an error.
func runScenario(file, outDir, workDir, recordFile string, log *slog.Logger) error {
	sc, err := scenario.ReadFile(file)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := scenario.Run(ctx, sc, scenario.Options{OutDir: outDir, WorkDir: workDir, Record: recordFile, Log: log})
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

// removeTempData removes the data directory saint-sim made for this run,
// unless keep, and says where it was either way.
func removeTempData(dir string, keep bool, log *slog.Logger) {
	if keep {
		log.Info("kept the temporary data directory", "dir", dir)
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		log.Error("could not remove the temporary data directory", "dir", dir, "err", err)
		return
	}
	log.Info("removed the temporary data directory", "dir", dir)
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
