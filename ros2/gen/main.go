// Command gen writes the OMG IDL of the ROS 2 interfaces (ros2/idl/) and
// compiles it with Cyclone DDS's idlc into the bridge's type support
// (ros2/cyclone/). Run it with go generate ./ros2 from the repository
// root; it needs idlc (Debian cyclonedds-tools).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/saint-os/saint/ros2"
)

func main() {
	idlDir := flag.String("idl", "idl", "where the .idl files go")
	cDir := flag.String("c", "cyclone", "where idlc's C type support goes; empty to skip idlc")
	flag.Parse()
	if err := run(*idlDir, *cDir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(idlDir, cDir string) error {
	reg, err := ros2.Load()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(idlDir, 0o755); err != nil {
		return err
	}
	var files []string
	for _, pkg := range reg.Packages() {
		src, err := reg.IDL(pkg)
		if err != nil {
			return err
		}
		name := pkg + ".idl"
		if err := os.WriteFile(filepath.Join(idlDir, name), src, 0o644); err != nil {
			return err
		}
		files = append(files, name)
	}
	if cDir == "" {
		return nil
	}
	abs, err := filepath.Abs(cDir)
	if err != nil {
		return err
	}
	if err := ros2.CompileC(idlDir, abs, files); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(abs, "descriptors.c"), reg.DescriptorTable(), 0o644)
}
