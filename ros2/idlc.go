package ros2

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CompileC runs Cyclone DDS's idlc on files (names inside idlDir),
// writing the C type support (.c and .h per file) into outDir. Types
// are final, as rosidl's are. idlc runs in a scratch folder holding
// copies of the .idl files, so that what it writes names no machine's
// paths and is the same wherever it runs.
func CompileC(idlDir, outDir string, files []string) error {
	work, err := os.MkdirTemp("", "saint-idlc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ents, err := os.ReadDir(idlDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".idl") {
			src, err := os.ReadFile(filepath.Join(idlDir, e.Name()))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(work, e.Name()), src, 0o644); err != nil {
				return err
			}
		}
	}
	for _, f := range files {
		cmd := exec.Command("idlc", "-l", "c", "-x", "final", "-t", "-I", ".", "-o", ".", f)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ros2: idlc %s: %v\n%s", f, err, out)
		}
		base := strings.TrimSuffix(f, ".idl")
		for _, ext := range []string{".c", ".h"} {
			src, err := os.ReadFile(filepath.Join(work, base+ext))
			if err != nil {
				return err
			}
			// idlc names the source by its absolute path.
			src = []byte(strings.ReplaceAll(string(src), work+string(filepath.Separator), ""))
			if err := os.WriteFile(filepath.Join(outDir, base+ext), src, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
