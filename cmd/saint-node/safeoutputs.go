package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/node/safeoutputs"
	simboard "github.com/saint-os/saint/sim/board"
)

// safeOutputsCANWait bounds how long safe-outputs waits for a CAN interface
// to open: systemd waits for this step before it restarts the node.
const safeOutputsCANWait = time.Second

// runSafeOutputs is `saint-node safe-outputs`: saint-node.service's
// ExecStopPost=, which systemd runs once the node process is gone (it
// exited, crashed, or was killed, the watchdog's kill of a stalled loop
// included). It reads the adopted role's configuration from the state
// directory and brings its actuators to their safe state
// (node/safeoutputs). Every step runs even when one before it failed; the
// exit status is 1 when any failed.
func runSafeOutputs(args []string, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("saint-node safe-outputs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", "/var/lib/saint", "the node's state directory, where the adopted role's configuration is")
	hal := fs.String("hal", "pi", "hardware: pi (this machine's GPIO, I²C, PWM and CAN) or sim (a fresh simulated board, for tests)")
	simHW := fs.String("sim-hw", "bare", "with --hal sim: the simulated board's hardware")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	// What systemd says ended the service (systemd.exec(5), ExecStopPost=).
	log.Info("safe outputs", "service_result", getenv("SERVICE_RESULT"),
		"exit_code", getenv("EXIT_CODE"), "exit_status", getenv("EXIT_STATUS"), "state_dir", *stateDir)

	plan, ok, err := safeoutputs.Load(*stateDir)
	if err != nil {
		return err
	}
	if !ok || plan.Empty() {
		log.Info("safe outputs: no role with actuators adopted; nothing to do")
		return nil
	}
	var hw board.Hardware
	switch *hal {
	case "pi":
		// Only the buses: the board's identity does not matter here, and
		// a bus that cannot open fails its own steps only.
		h, _, _ := openPiHardware()
		h.canWait = safeOutputsCANWait
		hw = h
	case "sim":
		b, err := simboard.New(&simboard.Options{Profile: simboard.Profile(*simHW), Clock: clock.Real{}})
		if err != nil {
			return fmt.Errorf("--sim-hw %q: %w", *simHW, err)
		}
		hw = b.Hardware()
	default:
		return fmt.Errorf("--hal %q: want pi or sim", *hal)
	}
	steps := plan.Apply(hw)
	for _, s := range steps {
		if s.Err != nil {
			log.Error("safe outputs: step failed", "role", plan.Role, "step", s.What, "err", s.Err)
			continue
		}
		log.Info("safe outputs: done", "role", plan.Role, "step", s.What)
	}
	return safeoutputs.Err(steps)
}

// subcommand runs a subcommand named by the first argument, if there is one.
func subcommand(args []string) (handled bool, err error) {
	if len(args) == 0 || args[0] != "safe-outputs" {
		return false, nil
	}
	return true, runSafeOutputs(args[1:], os.Stderr, os.Getenv)
}
