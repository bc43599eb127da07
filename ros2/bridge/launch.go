package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
)

// Launch runs saint-ros2 with args until ctx ends, as a child process:
// the binary beside this program, else on $PATH, else built with go run.
// It returns when the child exits; an exit not caused by ctx is an error.
func Launch(ctx context.Context, args []string, log *slog.Logger) error {
	name, pre, err := command()
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

func command() (string, []string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "saint-ros2")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil, nil
		}
	}
	if p, err := exec.LookPath("saint-ros2"); err == nil {
		return p, nil, nil
	}
	if goCmd, err := exec.LookPath("go"); err == nil {
		return goCmd, []string{"run", "github.com/saint-os/saint/cmd/saint-ros2"}, nil
	}
	return "", nil, errors.New("bridge: saint-ros2 not found beside this program, on $PATH, or buildable with go: go build -o bin/ ./cmd/saint-ros2")
}
