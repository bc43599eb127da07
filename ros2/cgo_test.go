package ros2

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyTheBridgeLinksCycloneDDS keeps cgo at the edge: no package but
// the saint-ros2 command imports ros2/cyclone, so the server, the roles and
// the node firmware never link C.
func TestOnlyTheBridgeLinksCycloneDDS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/saint-os/saint/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const cyclone = "github.com/saint-os/saint/ros2/cyclone"
	allowed := map[string]bool{cyclone: true, "github.com/saint-os/saint/cmd/saint-ros2": true}
	seen := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		for _, d := range strings.Fields(deps) {
			if d == cyclone {
				seen = true
				if !allowed[pkg] {
					t.Errorf("%s links Cyclone DDS (imports %s): only cmd/saint-ros2 may", pkg, cyclone)
				}
			}
		}
	}
	if !seen {
		t.Error("nothing imports ros2/cyclone: is the bridge command gone?")
	}
}
