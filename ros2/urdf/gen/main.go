// Command gen writes the robots' URDF models (ros2/urdf/*.urdf) from the
// kinematics package. Run it with go generate ./ros2/urdf.
package main

import (
	"fmt"
	"os"

	"github.com/saint-os/saint/ros2/urdf"
)

func main() {
	for _, r := range urdf.Robots() {
		if err := os.WriteFile(r.File(), r.Marshal(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
