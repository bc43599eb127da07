package roles

import (
	"errors"
	"fmt"
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
	Log    *slog.Logger
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

// ErrUnknownRole is returned by New for a role name the firmware does not
// contain.
var ErrUnknownRole = errors.New("roles: unknown role")

// New returns a fresh instance of the named role module.
func New(name string) (Role, error) {
	switch name {
	case "head":
		return &Head{}, nil
	case "arms":
		return &Arms{}, nil
	case "tracks":
		return &Tracks{}, nil
	case "console":
		return &Console{}, nil
	case "balance":
		return &Balance{}, nil
	}
	return nil, fmt.Errorf("%w %q (known: head, arms, tracks, console, balance)", ErrUnknownRole, name)
}
