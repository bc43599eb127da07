package sibling

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Command finds the command name (saint-viz, saint-ros2): beside the
// running program first, as `go build -o bin/ ./cmd/...` leaves them, then
// on $PATH, else built from source with go run (make run's case, where no
// binary exists). path is what to execute and args go before the
// command's own.
func Command(name string) (path string, args []string, err error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil, nil
	}
	if goCmd, err := exec.LookPath("go"); err == nil {
		return goCmd, []string{"run", "github.com/saint-os/saint/cmd/" + name}, nil
	}
	return "", nil, fmt.Errorf("%s not found beside this program, on $PATH, or buildable with go: go build -o bin/ ./cmd/%s", name, name)
}
