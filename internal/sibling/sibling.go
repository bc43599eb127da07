package sibling

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Path finds the command name (saint-viz, saint-ros2) beside the running
// program, else on $PATH, and returns the path to execute.
func Path(name string) (string, error) {
	self, selfErr := os.Executable()
	if selfErr == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", notFound(name, self)
}

// notFound says where name was looked for and how to build it beside the
// program that wants it.
func notFound(name, self string) error {
	prog := filepath.Base(self)
	where := "beside " + self
	hint := ""
	if self == "" {
		prog, where = "this program", "beside this program"
	} else if strings.Contains(self, string(filepath.Separator)+"go-build") {
		// go run builds into a temporary directory of its own.
		hint = " (" + prog + " runs from go run's build directory, where nothing is beside it)"
	}
	return fmt.Errorf("%s not found %s or on $PATH%s: build the commands together and run %s from there: "+
		"go build -o bin/ ./cmd/... (or make build), then bin/%s", name, where, hint, prog, prog)
}
