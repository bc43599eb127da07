package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"

	"github.com/saint-os/saint/internal/childproc"
)

// Launch runs the saint-ros2 binary bin with args as a child process
// until ctx ends (internal/childproc: it dies with this process however
// this process ends). It returns when the child exits; an exit not caused
// by ctx is an error.
func Launch(ctx context.Context, bin string, args []string, log *slog.Logger) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// An interrupt, not a kill, so the bridge leaves the DDS domain
	// cleanly.
	err := childproc.Run(ctx, cmd, childproc.RunOptions{Signal: syscall.SIGINT, Started: func(p *childproc.Process) {
		if log != nil {
			log.Info("started the ROS 2 bridge", "cmd", bin, "args", args, "pid", p.Pid())
		}
	}})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("bridge: saint-ros2: %w", err)
	}
	return nil
}
