package rolekit

import (
	"log/slog"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
)

// Env is what a role gets when it starts: everything it may touch.
type Env struct {
	NodeID string
	Exec   *executor.Executor
	Bus    bus.Bus
	Board  board.Board
	Config *roleconfig.Config
	// Prefix is the role instance's topic prefix, "/saint/head",
	// "/saint/arms/left".
	Prefix string
	// Log is where the role logs; the node hands it over already tagged
	// with the role's key ("role": "arms_left"), so the role adds no tag.
	Log *slog.Logger
	// State keeps what the role must not lose (calibrations) on the node;
	// nil when the node has no storage for it.
	State State
}

// Role is one of the generic node's role modules. Start and Stop run on
// the node's executor.
type Role interface {
	// Start claims the role's hardware and begins operating. On error the
	// role has released what it claimed.
	Start(env Env) error
	// Stop brings actuators to a safe state and releases the hardware.
	Stop()
}

// Section returns the configuration's part at path (see
// roleconfig.Config.Decode) decoded over def, the role's defaults.
func Section[T any](cfg *roleconfig.Config, path string, def T) (T, error) {
	v := def
	err := cfg.Decode(path, &v)
	return v, err
}

// CheckNoRobotID refuses a role configuration's robot_id. The robot
// namespace (/robot_{id}/) is not a role setting: the node's bus is inside
// it (saint-node --robot-id, bus.WithRobotID), which puts every name of
// every role there, so a role prefixing its own names would nest it twice.
func CheckNoRobotID(cfg *roleconfig.Config, robotID string) error {
	if robotID == "" {
		return nil
	}
	return cfg.Errorf("robot_id", "%q: the robot namespace is not a role setting: give the node --robot-id %s (or robot_param.yaml's robot_id), which puts every name of the robot inside /robot_%s/", robotID, robotID, robotID)
}
