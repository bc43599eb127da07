package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"

	"github.com/saint-os/saint/internal/sibling"
)

// Launch runs saint-ros2 with args until ctx ends, as a child process:
// the binary beside this program, else on $PATH, else built with go run.
// It returns when the child exits; an exit not caused by ctx is an error.
func Launch(ctx context.Context, args []string, log *slog.Logger) error {
	name, pre, err := sibling.Command("saint-ros2")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, name, append(pre, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// An interrupt, not a kill, so the bridge leaves the DDS domain cleanly.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	if log != nil {
		log.Info("starting the ROS 2 bridge", "cmd", name, "args", args)
	}
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("bridge: saint-ros2: %w", err)
	}
	return nil
}
