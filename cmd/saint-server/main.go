// Command saint-server is the robot's server: adoption manager, firmware
// repository, WebSocket API and web UI, with the NATS broker nodes connect
// to embedded in it.
//
//	saint-server [--config DIR] [--data DIR] [--http ADDR] [--ws ADDR]
//	             [--nats ADDR] [--firmware-http ADDR] [--firmware DIR] [--record DIR]
//	             [--foxglove ADDR]
//
// Port 0 in an address picks a free port; --addr-file writes the bound
// addresses as JSON once the server is up (for scripts and tests).
//
// The NATS broker authenticates every client with an nkey (package
// server/busaccess): nodes with the key they make at first boot, the ROS 2
// bridge and tools with DATA/bus/ros2.nk and DATA/bus/tools.nk, made at
// the first start, and always over TLS with a certificate from the CA the
// server makes at its first start (DATA/bus/ca.pem: nodes pin it on first
// contact, the bridge and tools are given it). docs/security.md.
//
// The API requires the token generated at first start in DATA/api_token
// (send it in the auth message or as "Authorization: Bearer TOKEN").
// --no-auth turns that off for development, and then the server listens on
// loopback only. System shutdown and reboot run "systemctl poweroff" and
// "systemctl reboot" (--power=false refuses them).
//
// The RC receiver reads the serial device or GPIO pins its configuration
// names: DATA/rc_receiver.yaml, seeded at the first start from
// CONFIG/rc_receiver.yaml (docs/rc.md). --joystick names the Linux
// joystick device whose axes and buttons are the router's source
// "joystick".
//
// --record DIR records every bus topic to MCAP files in DIR (rolling by
// --record-max-mb and --record-max-minutes); saintctl record start|stop
// does the same on a running server (docs/recording.md). --foxglove ADDR
// serves the Foxglove WebSocket protocol behind the same token
// (docs/foxglove.md).
package main

import (
	"context"
	"debug/elf"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/internal/sdnotify"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/busaccess"
	"github.com/saint-os/saint/server/inputs/joystick"
	"github.com/saint-os/saint/server/recording"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "saint-server:", err)
		os.Exit(1)
	}
}

func run() error {
	configDir := flag.String("config", "", "configuration tree with roles/ (default: the built-in fixtures, written to DATA/config)")
	dataDir := flag.String("data", "/var/lib/saint-server", "state directory (adoption registry, firmware)")
	httpAddr := flag.String("http", ":80", "web UI, /api/ws and /api/firmware address")
	wsAddr := flag.String("ws", ":9090", "WebSocket API address (ws://HOST/saint)")
	natsAddr := flag.String("nats", "127.0.0.1:4222", "embedded NATS broker address for nodes (the internal network)")
	fwAddr := flag.String("firmware-http", ":8080", "firmware HTTP address for nodes (empty disables)")
	fwDir := flag.String("firmware", "", "firmware tree (default DATA/firmware)")
	addrFile := flag.String("addr-file", "", "write the bound addresses here as JSON once listening")
	verbose := flag.Bool("v", false, "debug logging")
	noAuth := flag.Bool("no-auth", false, "no API token (development only; the API then listens on loopback only)")
	joystickDev := flag.String("joystick", joystick.DefaultDevice, "Linux joystick device read into the router as source joystick, reopened when plugged in (empty: none)")
	power := flag.Bool("power", true, "let the system shutdown and reboot commands power the machine off or reboot it")
	var origins stringList
	flag.Var(&origins, "allow-origin", "a browser origin allowed to use the API besides the server's own (repeatable), e.g. http://saint.local")
	fwArch := flag.String("firmware-arch", "arm64", "architecture uploaded node images must be built for: arm64 (Raspberry Pi) or amd64 (nodes on PCs)")
	liveLinkHost := flag.String("livelink", "", "address the LiveLink receiver listens on when the settings' livelink.external is on (Live Link Face 11111/udp, data and discovery ports from the settings); default 0.0.0.0, or 127.0.0.1 with --no-auth; with livelink.external off (the default) it listens on 127.0.0.1; \"off\" disables")
	mdnsIface := flag.String("mdns", "", "advertise the server by multicast DNS as HOSTNAME.local (the system.hostname setting) and _saint._tcp: \"auto\" on every interface that is up, or comma-separated interface names (e.g. wlan0); empty disables (saint-server.service sets auto)")
	foxgloveAddr := flag.String("foxglove", "", "serve the Foxglove WebSocket protocol here, e.g. :8765, behind the API token (empty: none)")
	recordDir := flag.String("record", "", "record every bus topic to MCAP files in this directory from the start (saintctl record start|stop works without it, into DATA/recordings)")
	requireEnrolment := flag.Bool("require-enrolment", false, "refuse nodes on the bus that were neither enrolled before their first boot (flash_node.sh) nor adopted")
	allowUnsigned := flag.Bool("allow-unsigned", false, "offer nodes firmware images that no release key signed (development only: nodes built with a release key refuse them anyway)")
	recordMaxMB := flag.Float64("record-max-mb", 512, "with --record: start a new file after this many megabytes (0: no limit)")
	recordMaxMin := flag.Float64("record-max-minutes", 30, "with --record: start a new file after this many minutes (0: no limit)")
	robotType := bringup.RegisterFlags(flag.CommandLine)
	robotID := flag.String("robot-id", "", "the robot's bus namespace: every topic and service under /robot_<id>/, the nodes' and the bridge's --robot-id too (default: the robot configuration's robot_id; empty: none)")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if *configDir == "" {
		*configDir = filepath.Join(*dataDir, "config")
		if err := fixtures.WriteConfig(*configDir); err != nil {
			return fmt.Errorf("writing configuration: %w", err)
		}
	}
	robot, err := resolveRobot(*configDir, robotType)
	if err != nil {
		return err
	}
	host, portStr, err := net.SplitHostPort(*natsAddr)
	if err != nil {
		return fmt.Errorf("--nats %q: %w", *natsAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("--nats %q: port: %w", *natsAddr, err)
	}
	ns := *robotID
	if ns == "" && robot != nil {
		ns = robot.Param.RobotID
	}
	if ns, err = bus.RobotNamespace(ns); err != nil {
		return err
	}
	access, err := busaccess.New(busaccess.Options{Dir: filepath.Join(*dataDir, "bus"), Namespace: ns, Log: log.With("component", "busaccess"),
		RequireEnrolment: *requireEnrolment})
	if err != nil {
		return err
	}
	var tlsHosts []string
	if host != "" && host != "0.0.0.0" && host != "::" {
		tlsHosts = append(tlsHosts, host)
	}
	natsTLS, err := access.ServerTLS(tlsHosts...)
	if err != nil {
		return err
	}
	natsd, err := broker.Start(&broker.Options{Host: host, Port: port, Logger: log.With("component", "nats"), Authentication: access, TLS: natsTLS})
	if err != nil {
		return err
	}
	defer natsd.Shutdown()
	access.Attach(natsd.NATS())
	ownTLS, err := natsbus.TrustCA(access.CAPEM())
	if err != nil {
		return err
	}
	b, err := natsbus.Connect(natsd.ClientURL(), &natsbus.Options{Name: "saint-server", ServiceName: natsbus.ServerServicesName, Key: access.ServerKey(), TLS: ownTLS})
	if err != nil {
		return err
	}
	defer b.Close()

	opts := server.Options{
		Bus: b, ConfigDir: *configDir, DataDir: *dataDir, FirmwareDir: *fwDir,
		HTTPAddr: *httpAddr, WSAddr: *wsAddr, FirmwareHTTPAddr: *fwAddr, Log: log,
		NoAuth: *noAuth, AllowedOrigins: origins, Version: version, FoxgloveAddr: *foxgloveAddr, RecordDir: *recordDir,
		Robot: robot, RobotID: *robotID, BusAccess: access, BusCAFingerprint: access.CAFingerprint(),
		RequireSignedFirmware: !*allowUnsigned,
	}
	if *allowUnsigned {
		log.Warn("--allow-unsigned: firmware images without a release key's signature are offered to nodes (development only)")
	}
	if *power {
		opts.Power = systemctl{}
	}
	switch host := *liveLinkHost; {
	case host == "off":
	case host != "":
		opts.LiveLink.Host = host
	case *noAuth:
		// LiveLink sources cannot authenticate; without an API token the
		// whole server stays on loopback, and so does this.
		opts.LiveLink.Host = "127.0.0.1"
	default:
		opts.LiveLink.Host = "0.0.0.0"
	}
	switch *fwArch {
	case "arm64":
		opts.FirmwareUpload.Machine = elf.EM_AARCH64
	case "amd64":
		opts.FirmwareUpload.Machine = elf.EM_X86_64
	default:
		return fmt.Errorf("--firmware-arch %q: want arm64 or amd64", *fwArch)
	}
	opts.RCPorts, opts.RCPins, opts.Joystick = openSerial, gpioPins(), *joystickDev
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	// The server stops a running recording when it shuts down: the file
	// gets its summary and footer.
	defer srv.Shutdown()
	if *recordDir != "" {
		limits := recording.Limits{MaxBytes: int64(*recordMaxMB * 1e6), MaxDuration: time.Duration(*recordMaxMin * float64(time.Minute))}
		if _, err := srv.Recording().Start(context.Background(), limits); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}

	addrs := srv.Addrs()
	addrs["nats"] = natsd.ClientURL()
	log.Info("saint-server running", "addrs", addrs)
	if !*noAuth {
		log.Info("clients authenticate with the API token", "file", filepath.Join(*dataDir, auth.FileName))
	}
	log.Info("NATS clients authenticate with nkeys over TLS", "ros2", access.KeyFile(busaccess.ROS2KeyFile), "tools", access.KeyFile(busaccess.ToolsKeyFile),
		"ca", access.KeyFile(busaccess.CAFile), "ca_sha256", access.CAFingerprint())
	if *addrFile != "" {
		data, _ := json.Marshal(addrs)
		if err := persist.WriteFile(*addrFile, data, 0o644); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := startMDNS(ctx, *mdnsIface, srv.Addrs()["ws"], srv.Settings(), log); err != nil {
		return err
	}
	// Under systemd (Type=notify, WatchdogSec=): ready once the listeners
	// are open; the watchdog's pings come from the server's executor, which
	// runs adoption, the motors' routing and the safety features, so a
	// stalled executor is restarted, not just a dead process.
	sdStop, err := sdnotify.Service(srv.Exec(), os.Getenv, os.Getpid(), log)
	if err != nil {
		return err
	}
	defer sdStop()
	<-ctx.Done()
	log.Info("shutting down")
	return nil
}

var version = "0.1.0"

// systemctl powers the machine off or reboots it through systemd.
type systemctl struct{}

func (systemctl) Shutdown(string) error { return runSystemctl("poweroff") }
func (systemctl) Reboot(string) error   { return runSystemctl("reboot") }

func runSystemctl(verb string) error {
	out, err := exec.Command("systemctl", verb).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl %s: %v: %s", verb, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// resolveRobot resolves the robot configuration the launch flags name in
// the configuration tree; nil when they name none.
func resolveRobot(configDir string, robotType func() (string, error)) (*bringup.Robot, error) {
	t, err := robotType()
	if err != nil || t == "" {
		return nil, err
	}
	return bringup.Resolve(os.DirFS(configDir), t)
}
