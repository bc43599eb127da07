// Command saint-node is the generic node firmware: one binary for every
// role. It boots, checks the server for firmware, then resumes its stored
// role or announces itself unadopted until the server adopts it.
//
//	saint-node --server nats://HOST:4222 --hal sim|pi [--id ID] [--state-dir DIR] [--sim-hw PROFILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
	simboard "github.com/saint-os/saint/sim/board"
)

// version is the firmware version, set at build time with
// -ldflags "-X main.version=1.2.0".
var version = "0.1.0"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "saint-node:", err)
		os.Exit(1)
	}
}

func run() error {
	serverURL := flag.String("server", "nats://saint-server.local:4222", "the server's NATS URL (nats://HOST:PORT)")
	hal := flag.String("hal", "pi", "hardware: pi (this Raspberry Pi) or sim (a simulated board)")
	id := flag.String("id", "", "node id (default: from the board, pi-<serial>)")
	stateDir := flag.String("state-dir", "/var/lib/saint", "where the node keeps its role and firmware")
	simHW := flag.String("sim-hw", "bare", "with --hal sim: the simulated board's hardware: head, arms, tracks, console, balance, bare")
	resetPin := flag.Int("reset-pin", node.DefaultResetPin, "BCM pin of the hard-reset button (held low 5 s); -1 for none")
	showVersion := flag.Bool("version", false, "print the firmware version and exit")
	verbose := flag.Bool("v", false, "debug logging")
	update := addSelfUpdateFlags()
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return nil
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	// Before any hardware or network: roll back a failed image, or hand
	// over to the installed one.
	if done, err := update.boot(*stateDir, version, log); done || err != nil {
		return err
	}

	var b board.Board
	switch *hal {
	case "sim":
		sb, err := simboard.New(&simboard.Options{NodeID: *id, Profile: simboard.Profile(*simHW), Clock: clock.Real{}})
		if err != nil {
			return fmt.Errorf("--sim-hw %q: %w", *simHW, err)
		}
		b = sb
	case "pi":
		pb, err := openPiBoard(*id)
		if err != nil {
			return err
		}
		b = pb
	default:
		return fmt.Errorf("--hal %q: want pi or sim", *hal)
	}

	url := *serverURL
	if !strings.Contains(url, "://") {
		url = "nats://" + url
	}
	bc, err := natsbus.Connect(url, &natsbus.Options{Name: "saint-node " + b.Info().NodeID, RetryConnect: true, Bus: bus.Options{Logger: log}})
	if err != nil {
		return err
	}
	defer bc.Close()

	ex := executor.New(nil)
	n, err := node.New(node.Options{
		Exec: ex, Bus: bc, Board: b, StateDir: *stateDir, NodeID: *id,
		FirmwareVersion: version, ResetPin: *resetPin, Log: log, Updater: update.nodeUpdater(),
	})
	if err != nil {
		return err
	}
	log.Info("saint-node starting", "node", n.ID(), "version", version, "hal", *hal, "server", url)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n.Start()
	update.watch(ex, n)
	err = ex.Run(ctx)
	// The loop has returned, so nothing else runs node code: stop it here,
	// bringing actuators to their safe state before the process goes.
	n.Stop()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
