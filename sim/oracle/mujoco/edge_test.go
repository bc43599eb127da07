package mujoco

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNothingLinksMuJoCo keeps cgo at the edge: no package imports the
// oracle (its own tests do, being in it), so the simulator, the roles, the
// server and the node firmware never link MuJoCo.
func TestNothingLinksMuJoCo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/saint-os/saint/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const oracle = "github.com/saint-os/saint/sim/oracle/mujoco"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		for _, d := range strings.Fields(deps) {
			if d == oracle {
				t.Errorf("%s imports %s: only tests may use the MuJoCo oracle", pkg, oracle)
			}
		}
	}
}
