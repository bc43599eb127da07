// Command saint-node is the generic node firmware: one binary for every
// role. It boots, checks the server for firmware, then resumes its stored
// role or announces itself unadopted until the server adopts it.
//
// It connects to the bus with the nkey it was enrolled with
// (STATE-DIR/bus.nk, 0600, written by flash_node.sh; made at first boot
// when there is none) and logs its public key and its fingerprint at every
// boot: the server's adopt page shows the key each unadopted node connects
// with and asks the operator for the fingerprint, and adoption grants that
// key the role's subjects. It never stops reconnecting, refused or not
// (another device may hold its id for a while), and its status says what
// kept it off the bus. The bus is TLS: an enrolled node connects
// only to a server whose CA has the fingerprint in STATE-DIR/bus-ca.sha256,
// and logs every other server it refused. A node that was not enrolled
// trusts the CA it pinned before (STATE-DIR/bus-ca.pem), or, with
// --trust-first-server (a lab), pins the CA of the first server that
// answers; without either it connects to no server.
//
//	saint-node --server nats://HOST:4222 --hal sim|pi [--id ID] [--state-dir DIR] [--sim-hw PROFILE] [--rt[=true|false|auto]] [--trust-first-server]
//	saint-node safe-outputs [--state-dir DIR] [--hal pi|sim]
//
// safe-outputs is saint-node.service's ExecStopPost=: once the node process
// is gone (stopped, crashed, or killed by the systemd watchdog when its
// control loop stalled) it reads the adopted role's configuration and turns
// the role's actuators off: PCA9685 outputs, H-bridge enables, hardware
// PWM, VESC and MIT-mode actuators on CAN (node/safeoutputs).
//
// Under systemd (Type=notify) the node sends READY=1 and, with
// WatchdogSec=, its watchdog pings from a timer on the executor that runs
// the roles' control loops (internal/sdnotify).
//
// Real-time mode (--rt) runs the node's executor on a locked OS thread with
// SCHED_FIFO priority, pinned to the last CPU, with memory locked and the
// loop sleeping in the kernel on its own thread between deadlines, the last
// stretch before each deadline polled rather than slept (see hal/rt).
// The default, auto, turns it on when a role that runs a fast control loop
// (balance) starts on a Pi, and never in simulation.
package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	neturl "net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/rt"
	"github.com/saint-os/saint/internal/sdnotify"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/node/fetch"
	"github.com/saint-os/saint/node/selfupdate"
	"github.com/saint-os/saint/roles/rolespec"
	simboard "github.com/saint-os/saint/sim/board"
)

// version is the firmware version, set at build time with
// -ldflags "-X main.version=1.2.0".
var version = "0.1.0"

// firmwareKey is the release key this firmware trusts, in fwsign's compact
// form, built in by `make firmware SIGN_KEY=...` with
// -ldflags "-X main.firmwareKey=ed25519:...". With a key (built in or
// --firmware-key) the node installs only images that key signed.
var firmwareKey = ""

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "saint-node:", err)
		os.Exit(1)
	}
}

func run() error {
	if handled, err := subcommand(os.Args[1:]); handled {
		return err
	}
	serverURL := flag.String("server", "nats://saint-server.local:4222", "the server's NATS URL (nats://HOST:PORT)")
	hal := flag.String("hal", "pi", "hardware: pi (this Raspberry Pi) or sim (a simulated board)")
	id := flag.String("id", "", "node id (default: from the board, pi-<serial>)")
	stateDir := flag.String("state-dir", "/var/lib/saint", "where the node keeps its role and firmware")
	simHW := flag.String("sim-hw", "bare", "with --hal sim: the simulated board's hardware: head, arms, arms_can, tracks, console, balance, bare")
	resetPin := flag.Int("reset-pin", node.DefaultResetPin, "BCM pin of the hard-reset button (held low 5 s); -1 for none")
	robotID := flag.String("robot-id", "", "the robot's bus namespace: every topic and service under /robot_<id>/ (the server's --robot-id; empty: none)")
	showVersion := flag.Bool("version", false, "print the firmware version and exit")
	verbose := flag.Bool("v", false, "debug logging")
	keyFile := flag.String("firmware-key", "", "a release public key file (saintctl firmware keygen's .pub) to trust besides the built-in one")
	allowUnsigned := flag.Bool("allow-unsigned-firmware", false, "without any trusted release key, install firmware on its sha256 alone (development only)")
	trustFirst := flag.Bool("trust-first-server", false, "a node not enrolled with its server's CA (flash_node.sh) pins the CA of the first server that answers (lab use only)")
	rtMode := rtFlag("auto")
	flag.Var(&rtMode, "rt", "real-time control loop: true, false or auto (on for the balance role on a Pi)")
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
	// systemd's notification socket, when it runs the node (Type=notify).
	sd, err := sdnotify.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	// Before any hardware or network: roll back a failed image, or hand
	// over to the installed one.
	if done, err := update.boot(*stateDir, version, log, execWithWatchdogTime(sd, log)); done || err != nil {
		return err
	}

	keys, err := trustedFirmwareKeys(firmwareKey, *keyFile)
	if err != nil {
		return err
	}
	switch {
	case len(keys) > 0:
		log.Info("firmware: installing only images signed by a trusted release key", "keys", len(keys))
	case *allowUnsigned:
		log.Warn("firmware: no release key; --allow-unsigned-firmware installs any image whose sha256 matches its offer (development only)")
	default:
		log.Warn("firmware: no release key built in or given (--firmware-key): firmware updates are refused")
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
	// The node's bus identity: made at first boot, kept in the state
	// directory; the server grants it its role's subjects at adoption.
	key, err := natsbus.LoadOrCreateKey(filepath.Join(*stateDir, natsbus.NodeKeyFile))
	if err != nil {
		return err
	}
	pub, _ := key.PublicKey()
	nodeID := *id
	if nodeID == "" {
		nodeID = b.Info().NodeID
	}
	// On the console (and the serial log, the journal) at every boot: the
	// operator compares it with the key the adopt page shows, which is the
	// one the bus authenticated under this node's id. A device that took
	// the id shows another.
	log.Info("bus key: check the adopt page shows this key (fingerprint) before adopting this node",
		"node", nodeID, "fingerprint", natsbus.KeyFingerprint(pub), "key", pub)
	pin, err := serverCA(*stateDir, *trustFirst, log)
	if err != nil {
		return err
	}
	ex := executor.New(nil)
	// The link's state reaches the node once it exists: its status says
	// what kept it off the bus. Connect retries for ever (a server not up
	// yet, a device holding this node's id for a while).
	var linked atomic.Pointer[node.Node]
	onLink := func(l natsbus.Link) {
		n := linked.Load()
		if n == nil {
			return
		}
		up, detail := l.Up, describeLink(l)
		ex.Post(func() { n.BusLink(up, detail) })
	}
	bc, err := natsbus.Connect(url, &natsbus.Options{Name: natsbus.NodeClientName(nodeID), Key: key, InboxPrefix: natsbus.NodeInboxPrefix(nodeID),
		TLS: pin.TLS(), RetryConnect: true, OnLink: onLink, Bus: bus.Options{Logger: log}})
	if err != nil {
		return err
	}
	defer bc.Close()
	nb, err := bus.WithRobotID(bc, *robotID)
	if err != nil {
		return err
	}

	realTime := &realTime{ex: ex, log: log}
	if rtMode == "true" {
		// Run below is on this goroutine, so this is the executor's thread.
		realTime.enter("--rt")
	}
	n, err := node.New(node.Options{
		Exec: ex, Bus: nb, Board: b, StateDir: *stateDir, NodeID: *id,
		FirmwareVersion: version, ResetPin: *resetPin, Log: log, Updater: update.nodeUpdater(),
		FirmwareKeys: keys, RequireSignedFirmware: !*allowUnsigned, BusCA: pin.Fingerprint,
		// Firmware comes over HTTP from the server's firmware server; an
		// offered URL without a host means the host of the bus URL.
		Fetcher: &fetch.Client{Host: busHost(url)},
		RoleStarted: func(role string) {
			// On the executor, so on the thread that runs Run.
			if spec, _ := rolespec.Lookup(role); rtMode == "auto" && *hal == "pi" && spec.RealTime {
				realTime.enter("role " + role)
			}
		},
	})
	if err != nil {
		return err
	}
	linked.Store(n)
	log.Info("saint-node starting", "node", n.ID(), "version", version, "hal", *hal, "server", url)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n.Start()
	update.watch(ex, n)
	// Under systemd (Type=notify, WatchdogSec=): READY=1 and the watchdog's
	// pings come from a timer on the executor that runs the roles' control
	// loops, so a loop stalled in a callback stops them and systemd kills
	// and restarts the node (ExecStopPost= makes its outputs safe first).
	sdStop, err := sd.Start(ex, os.Getenv, os.Getpid(), log)
	if err != nil {
		return err
	}
	err = ex.Run(ctx)
	sdStop()
	// The loop has returned, so nothing else runs node code: stop it here,
	// bringing actuators to their safe state before the process goes.
	n.Stop()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// execWatchdogTime is the watchdog time a firmware image gets to boot in
// when the running node execs it: from the exec until the new image's
// executor pings (and sets the unit's own time again), it opens the board,
// reads its keys and connects to the bus, which on a slow SD card or a busy
// board takes more than the unit's 2 s. An image that hangs while booting
// is still killed, and its trial fails.
const execWatchdogTime = 30 * time.Second

// execWithWatchdogTime is syscall.Exec for firmware images under systemd's
// watchdog: the watchdog time is execWatchdogTime first, and the unit's
// again if the exec fails. Without systemd (sd nil) it is syscall.Exec.
func execWithWatchdogTime(sd *sdnotify.Notifier, log *slog.Logger) selfupdate.ExecFunc {
	return func(path string, argv, env []string) error {
		if sd == nil {
			return syscall.Exec(path, argv, env)
		}
		if err := sd.SetWatchdogTime(execWatchdogTime); err != nil {
			log.Warn("systemd watchdog time not extended for the exec", "err", err)
		}
		err := syscall.Exec(path, argv, env)
		if d, on, werr := sdnotify.WatchdogTime(os.Getenv, os.Getpid()); werr == nil && on {
			_ = sd.SetWatchdogTime(d)
		}
		return err
	}
}

// trustedFirmwareKeys is the built-in release key and the one in file,
// those that are given.
func trustedFirmwareKeys(builtIn, file string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	if builtIn != "" {
		k, err := fwsign.ParsePublic(builtIn)
		if err != nil {
			return nil, fmt.Errorf("built-in firmware key: %w", err)
		}
		keys = append(keys, k)
	}
	if file != "" {
		k, err := fwsign.ReadPublicFile(file)
		if err != nil {
			return nil, fmt.Errorf("--firmware-key: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// serverCA is the node's trust in its server's CA: the fingerprint it was
// enrolled with, the CA it pinned, or with trustFirst the first server's.
// How it trusts is logged at every boot, loudly when it is not enrolled.
func serverCA(stateDir string, trustFirst bool, log *slog.Logger) (*natsbus.CAPin, error) {
	enrolled, err := natsbus.ReadCAFingerprintFile(filepath.Join(stateDir, natsbus.NodeEnrolledCAFile))
	if err != nil {
		return nil, fmt.Errorf("enrolment: %w (flash the node again to enrol it)", err)
	}
	pin, err := natsbus.OpenCAPin(natsbus.CAPinOptions{
		File: filepath.Join(stateDir, natsbus.NodeCAFile), Enrolled: enrolled, TrustFirst: trustFirst, Log: log,
	})
	if err != nil {
		return nil, err
	}
	switch pin.Mode() {
	case "enrolled":
		log.Info("bus: enrolled: connecting only to the server whose CA has this fingerprint", "ca_sha256", enrolled)
		if trustFirst {
			log.Warn("bus: --trust-first-server is ignored: this node is enrolled")
		}
	case "pinned":
		log.Warn("bus: not enrolled: trusting the CA this node pinned on first contact; enrol it (flash_node.sh) so that first contact is authenticated", "ca_sha256", pin.Fingerprint())
	case "trust-first-server":
		log.Warn("bus: NOT ENROLLED, --trust-first-server: this node will pin the CA of the first server that answers, whoever runs it (lab use only; enrol robot nodes with flash_node.sh)")
	default:
		log.Error("bus: not enrolled and no --trust-first-server: no server will be trusted; enrol this node (flash_node.sh, saintctl nodes enrol) or, in a lab, start it with --trust-first-server")
	}
	return pin, nil
}

// busHost is the host of the bus URL (nats://HOST:PORT): the server, as
// this node reaches it.
func busHost(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// rtFlag is --rt: a boolean flag (plain --rt means true) that also takes
// "auto".
type rtFlag string

func (f *rtFlag) String() string   { return string(*f) }
func (f *rtFlag) IsBoolFlag() bool { return true }
func (f *rtFlag) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "1", "on":
		*f = "true"
	case "false", "0", "off":
		*f = "false"
	case "auto":
		*f = "auto"
	default:
		return fmt.Errorf("want true, false or auto, not %q", s)
	}
	return nil
}

// realTime puts the executor's goroutine in real-time mode once.
type realTime struct {
	ex      *executor.Executor
	log     *slog.Logger
	entered bool
}

// enter must run on the goroutine that runs the executor.
func (r *realTime) enter(why string) {
	if r.entered {
		return
	}
	r.entered = true
	rep := rt.Enter(rt.Options{CPU: rt.DefaultCPU()})
	r.ex.SetSpin(rt.Spin)
	if w, err := rt.NewWaiter(); err != nil {
		r.log.Warn("real-time mode: waiting on Go timers", "err", err)
	} else {
		// Kept for the life of the process, like the thread.
		r.ex.SetWaiter(w)
	}
	r.log.Info("real-time mode", "because", why, "got", rep.String())
	if w := rep.Warning(); w != "" {
		r.log.Warn(w, "systemd", rt.UnitSettings)
	}
}

// describeLink says how the bus link is for the node's status: what
// keeps it down, or what kept it down before it came back ("" when it
// came back at the first attempt).
func describeLink(l natsbus.Link) string {
	why := "no error"
	if l.Err != nil {
		why = l.Err.Error()
	}
	switch {
	case !l.Up && l.Attempts == 0:
		return why + "; reconnecting"
	case !l.Up:
		return fmt.Sprintf("%s; %d attempts in %s, still trying", why, l.Attempts, l.Down.Round(time.Second))
	case l.Attempts == 0:
		// Back at the first attempt (the server applying new permissions
		// at adoption closes the connection): nothing to tell.
		return ""
	default:
		return fmt.Sprintf("after %d failed attempts in %s (the last: %s)", l.Attempts, l.Down.Round(100*time.Millisecond), why)
	}
}
