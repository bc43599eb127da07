package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/server/busaccess"
)

// startROS2 gives the simulation's in-process bus a NATS broker on
// loopback, relays the ROS 2 bridge's topics and services between them,
// and runs saint-ros2 (the binary bin) on that broker as a child process
// that dies with saint-sim (internal/childproc). A bridge that crashes
// (a fault in its DDS library) is started again after a backoff
// (bridge.Launch); one that stops by itself is not. The simulation keeps
// running either way.
// stop undoes it all.
//
// The broker authenticates as saint-server's does: keys made for this run
// and a TLS CA made for this run in a temporary directory, the relay with
// the server's key, the bridge with its own (--nats-key, --nats-ca).
//
// With a robot configuration (robot, of robotType in configDir) the bridge
// and the relay carry its roles' names and its motor groups' node
// middlewares only: saint-ros2 gets the same --robot-type and --config.
//
// The bridge follows the simulation's clock (--sim-clock): the relay
// publishes it, with the wall-clock time when speed is 1 (paced to the
// wall clock), and the bridge publishes /clock and stamps accordingly.
func startROS2(ctx context.Context, st *stack.Stack, robot *bringup.Robot, configDir, bin string, speed float64, args []string, log *slog.Logger) (stop func(), err error) {
	keyDir, err := os.MkdirTemp("", "saint-sim-bus-")
	if err != nil {
		return nil, fmt.Errorf("--ros2: %w", err)
	}
	access, err := busaccess.New(busaccess.Options{Dir: keyDir, Log: log.With("component", "busaccess")})
	if err != nil {
		_ = os.RemoveAll(keyDir)
		return nil, fmt.Errorf("--ros2: %w", err)
	}
	serverTLS, err := access.ServerTLS()
	if err != nil {
		_ = os.RemoveAll(keyDir)
		return nil, fmt.Errorf("--ros2: %w", err)
	}
	clientTLS, err := natsbus.TrustCA(access.CAPEM())
	if err != nil {
		_ = os.RemoveAll(keyDir)
		return nil, fmt.Errorf("--ros2: %w", err)
	}
	local, err := broker.Start(&broker.Options{Host: "127.0.0.1", Port: -1, Logger: log.With("component", "nats"), Authentication: access, TLS: serverTLS})
	if err != nil {
		_ = os.RemoveAll(keyDir)
		return nil, fmt.Errorf("--ros2: %w", err)
	}
	access.Attach(local.NATS())
	nb, err := natsbus.Connect(local.ClientURL(), &natsbus.Options{Name: "saint-sim relay", ServiceName: natsbus.ServerServicesName, Key: access.ServerKey(), TLS: clientTLS})
	if err != nil {
		local.Shutdown()
		_ = os.RemoveAll(keyDir)
		return nil, fmt.Errorf("--ros2: %w", err)
	}
	// The broker carries the robot's names inside its namespace, as
	// saint-server's does; saint-ros2 joins it there and makes its ROS 2
	// names /robot_<id>/….
	remote, err := bus.WithRobotID(nb, st.RobotID())
	if err != nil {
		nb.Close()
		local.Shutdown()
		return nil, fmt.Errorf("--ros2: %w", err)
	}
	if id := st.RobotID(); id != "" {
		args = append([]string{"--robot-id", id}, args...)
	}
	args = append([]string{"--sim-clock"}, args...)
	var wallClock func() time.Time
	if speed == 1 {
		wallClock = time.Now // paced to the wall clock: stamps are wall-clock time
	}
	if robot != nil {
		args = append([]string{"--robot-type", robot.Type, "--config", configDir}, args...)
	}
	var ids []string
	for _, sn := range st.Specs {
		ids = append(ids, sn.ID)
	}
	var stopRelay func()
	if err := st.Exec.Do(ctx, func() {
		stopRelay, err = bridge.Relay(bridge.RelayOptions{Robot: st.Connect(), Remote: remote, Exec: st.Exec, NodeIDs: ids,
			Roles: bridge.RolesOf(robot), MotorNodes: bridge.MotorNodesOf(robot), WallClock: wallClock, Log: log})
	}); err != nil || stopRelay == nil {
		nb.Close()
		local.Shutdown()
		_ = os.RemoveAll(keyDir)
		return nil, fmt.Errorf("--ros2: relay: %v", err)
	}
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := bridge.Launch(bctx, bridge.LaunchOptions{Bin: bin, Log: log,
			Args: append([]string{"--nats", local.ClientURL(), "--nats-key", access.KeyFile(busaccess.ROS2KeyFile), "--nats-ca", access.KeyFile(busaccess.CAFile)}, args...)}); err != nil {
			log.Error("the ROS 2 bridge stopped; the simulation keeps running", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
		_ = st.Exec.Do(context.Background(), stopRelay)
		nb.Close()
		local.Shutdown()
		_ = os.RemoveAll(keyDir)
	}, nil
}
