package ros2

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreFresh fails when idl/ or cyclone/ no longer match
// the interface definitions: run go generate ./ros2.
func TestGeneratedFilesAreFresh(t *testing.T) {
	reg, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pkg := range reg.Packages() {
		want, err := reg.IDL(pkg)
		if err != nil {
			t.Fatal(err)
		}
		name := pkg + ".idl"
		files = append(files, name)
		got, err := os.ReadFile(filepath.Join("idl", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("idl/%s is stale (err %v): run go generate ./ros2", name, err)
		}
	}
	if _, err := exec.LookPath("idlc"); err != nil {
		t.Skip("idlc (Debian cyclonedds-tools) not installed: cannot check cyclone/; make test installs it")
	}
	out := t.TempDir()
	if err := CompileC("idl", out, files); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "descriptors.c"), reg.DescriptorTable(), 0o644); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		want, _ := os.ReadFile(filepath.Join(out, e.Name()))
		got, err := os.ReadFile(filepath.Join("cyclone", e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("cyclone/%s is stale (err %v): run go generate ./ros2", e.Name(), err)
		}
	}
}
