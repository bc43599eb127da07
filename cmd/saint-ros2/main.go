// Command saint-ros2 is the ROS 2 bridge: it joins the robot's bus
// (NATS, as a node does) and a DDS domain through Eclipse Cyclone DDS,
// and maps topics and services between them with ROS 2's conventions, so
// that ROS 2 Humble nodes (rmw_cyclonedds_cpp or rmw_fastrtps_cpp) on the
// robot's network see /saint/... topics of standard and saint_os types.
// See docs/ros2.md.
//
//	saint-ros2 --nats nats://192.168.10.1:4222 --nats-key /var/lib/saint-server/bus/ros2.nk --nats-ca /var/lib/saint-server/bus/ca.pem [--domain N] [--deny '/saint/arms/**'] [--robot-type pi_plus-S-12L8A0G2H0W --config /var/lib/saint-server/config]
//
// --robot-type (or its parts, as saint-server takes them) names the robot
// configuration whose roles and motor groups are bridged: only the roles
// it declares (a humanoid's five limbs: no head, arms, tracks, console or
// balance topics) and its motor groups' node middlewares beside the
// root's, /saint/limb/leg_left/joint_states …; without it, the reference
// robot's (the arms, the head, the tracks, the console, the balancing
// base). The robot configuration is read once at start, as saint-server
// reads it: a role is bridged whether or not a node is adopted into it
// yet, and a changed configuration needs the bridge restarted.
//
// The DDS domain defaults to ROS_DOMAIN_ID (else 0); Cyclone DDS reads its
// network configuration from CYCLONEDDS_URI, as under ROS 2. With
// --ros2-security KEYSTORE the participant uses DDS Security with the
// keystore's /saint_bridge enclave (saintctl ros2 keystore): only peers
// with an enclave of that keystore, whose permissions allow it, talk to
// it, encrypted.
//
// Started by saint-sim --ros2 ($SAINT_PARENT_PID set), it stops when
// saint-sim is gone, or when saint-sim's bus has been unreachable for
// longer than ten seconds (internal/childproc's LinkGrace), and exits 1
// saying which; run by hand or by systemd it retries the bus for as long
// as it runs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/internal/childproc"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/cyclone"
)

var version = "dev"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "saint-ros2:", err)
		os.Exit(1)
	}
}

// defaultDomain is ROS_DOMAIN_ID, as every ROS 2 process reads it.
func defaultDomain() (uint, error) {
	s := os.Getenv("ROS_DOMAIN_ID")
	if s == "" {
		return 0, nil
	}
	d, err := strconv.ParseUint(s, 10, 32)
	if err != nil || d > 232 {
		return 0, fmt.Errorf("ROS_DOMAIN_ID %q: want 0 to 232", s)
	}
	return uint(d), nil
}

func patterns(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func run() error {
	domain, err := defaultDomain()
	if err != nil {
		return err
	}
	natsURL := flag.String("nats", "nats://127.0.0.1:4222", "the robot's bus (saint-server's NATS)")
	natsCA := flag.String("nats-ca", credential("nats-ca"), "the CA certificate of the bus's TLS: saint-server's DATA/bus/ca.pem (default: the systemd credential nats-ca, if any; empty: no TLS)")
	natsKey := flag.String("nats-key", credential("nats-key"), "the nkey seed file the bridge authenticates with: saint-server's DATA/bus/ros2.nk (default: the systemd credential nats-key, if any; empty: none, for a broker without authentication)")
	flag.UintVar(&domain, "domain", domain, "DDS domain (default ROS_DOMAIN_ID, else 0)")
	allow := flag.String("allow", "", "comma-separated ROS names to bridge (path patterns; '/saint/arms/**' is everything below); empty: all")
	deny := flag.String("deny", "", "comma-separated ROS names not to bridge, applied after --allow")
	robotID := flag.String("robot-id", "", "the robot's namespace (the server's --robot-id): bridge the topics under /robot_<id>/ on the bus as the ROS 2 names /robot_<id>/… (default: the robot configuration's robot_id; empty: none)")
	robotType := bringup.RegisterFlags(flag.CommandLine)
	configDir := flag.String("config", "", "with --robot-type: the configuration tree holding robot_config/ (saint-server's DATA/config; default: the built-in fixtures)")
	security := securityFlags(flag.CommandLine)
	simClock := flag.Bool("sim-clock", false, "the bus carries a simulation's clock (saint-sim --ros2 sets this): follow it from "+bridge.SimClockTopic+", publish it on /clock and stamp on it (on the wall clock when the simulation runs at real-time speed)")
	addrFile := flag.String("addr-file", "", "write {\"nats\", \"domain\"} here as JSON once bridging")
	verbose := flag.Bool("v", false, "debug logging")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("saint-ros2", version)
		return nil
	}
	if domain > 232 {
		return fmt.Errorf("--domain %d: want 0 to 232", domain)
	}
	robot, err := resolveRobot(*configDir, robotType)
	if err != nil {
		return err
	}
	sec, err := security()
	if err != nil {
		return err
	}
	if *robotID == "" && robot != nil {
		*robotID = robot.Param.RobotID
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	nopts := &natsbus.Options{Name: "saint-ros2", RetryConnect: true, Bus: bus.Options{Logger: log}}
	if *natsKey != "" {
		if nopts.Key, err = natsbus.ReadKey(*natsKey); err != nil {
			return fmt.Errorf("--nats-key: %w", err)
		}
	}
	if *natsCA != "" {
		pem, err := os.ReadFile(*natsCA)
		if err != nil {
			return fmt.Errorf("--nats-ca: %w", err)
		}
		if nopts.TLS, err = natsbus.TrustCA(pem); err != nil {
			return fmt.Errorf("--nats-ca %s: %w", *natsCA, err)
		}
	}
	nb, err := natsbus.Connect(*natsURL, nopts)
	if err != nil {
		return err
	}
	defer nb.Close()
	// Started by saint-sim --ros2: stop, before joining DDS if need be,
	// when saint-sim is gone or its bus has been unreachable for longer
	// than childproc.LinkGrace, rather than advertise a robot that is not
	// there. Under systemd the unit's BindsTo= does this.
	ctx, unbind, err := childproc.Bind(ctx, childproc.BindOptions{Link: nb.IsConnected, Log: log})
	if err != nil {
		return err
	}
	defer unbind()
	rb, err := bus.WithRobotID(nb, *robotID)
	if err != nil {
		return err
	}
	pp, err := newParticipant(uint32(domain), sec, log)
	if err != nil {
		return err
	}
	defer pp.Close()

	ex := executor.New(nil)
	exCtx, stopExec := context.WithCancel(context.Background())
	defer stopExec()
	go func() { _ = ex.Run(exCtx) }()

	clock := bridge.WallClock
	if *simClock {
		clock = bridge.SimClock
	}
	br, err := bridge.New(bridge.Options{Bus: rb, Exec: ex, DDS: participant{pp}, RobotID: *robotID, Log: log, Clock: clock,
		Roles: bridge.RolesOf(robot), MotorNodes: bridge.MotorNodesOf(robot), Model: bridge.ModelOf(robot),
		Filter: bridge.Filter{Allow: patterns(*allow), Deny: patterns(*deny)}})
	if err != nil {
		return err
	}
	if err := br.Start(); err != nil {
		return err
	}
	defer br.Stop()
	// ROS 2's graph: one node, /saint_bridge (in the robot's namespace),
	// holding every reader and writer of the participant.
	nodeNamespace := "/"
	if *robotID != "" {
		if nodeNamespace, err = bus.RobotNamespace(*robotID); err != nil {
			return err
		}
	}
	if err := pp.AnnounceNode(nodeNamespace, NodeName); err != nil {
		return err
	}
	if *addrFile != "" {
		data, _ := json.Marshal(map[string]string{"nats": *natsURL, "domain": strconv.FormatUint(uint64(domain), 10)})
		if err := os.WriteFile(*addrFile, data, 0o644); err != nil {
			return err
		}
	}
	log.Info("ROS 2 bridge running", "nats", *natsURL, "domain", domain, "cyclonedds_uri_set", os.Getenv("CYCLONEDDS_URI") != "",
		"sim_clock", *simClock, "roles", strings.Join(bridge.RolesOf(robot), ","), "motor_nodes", strings.Join(bridge.MotorNodesOf(robot), ","))

	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s := br.Stats()
			log.Info("ROS 2 bridge stopping", "out", s.Out, "in", s.In, "calls", s.Calls, "rejected", s.Rejected)
			if cause := context.Cause(ctx); errors.Is(cause, childproc.ErrParentGone) || errors.Is(cause, childproc.ErrLinkLost) {
				return cause
			}
			return nil
		case <-t.C:
			s := br.Stats()
			log.Debug("ROS 2 bridge", "out", s.Out, "in", s.In, "calls", s.Calls, "rejected", s.Rejected)
		}
	}
}

// NodeName is the bridge's ROS 2 node name: `ros2 node list` shows
// /saint_bridge (/robot_7/saint_bridge with --robot-id 7).
const NodeName = "saint_bridge"

// participant adapts the Cyclone DDS participant to the bridge.
type participant struct{ p *cyclone.Participant }

func (p participant) NewWriter(topic, typeName string, q bridge.QoS) (bridge.Writer, error) {
	w, err := p.p.NewWriter(topic, typeName, cyclone.QoS(q))
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (p participant) NewReader(topic, typeName string, q bridge.QoS, fn func([]byte)) error {
	_, err := p.p.NewReader(topic, typeName, cyclone.QoS(q), fn)
	return err
}

// resolveRobot resolves the robot configuration the launch flags name,
// in configDir or else the built-in fixtures; nil when they name none.
func resolveRobot(configDir string, robotType func() (string, error)) (*bringup.Robot, error) {
	t, err := robotType()
	if err != nil || t == "" {
		return nil, err
	}
	fsys := fixtures.Config()
	if configDir != "" {
		fsys = os.DirFS(configDir)
	}
	return bringup.Resolve(fsys, t)
}

// credential is the path of the systemd credential name
// (LoadCredential=name:...), or "" when the service has none.
func credential(name string) string {
	dir := os.Getenv("CREDENTIALS_DIRECTORY")
	if dir == "" {
		return ""
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}
