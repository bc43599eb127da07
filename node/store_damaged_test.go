package node_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/persist"
)

// A role.yaml or identity.yaml that reads as null, empty, truncated or
// garbled is no role and no identity: the store says so with
// persist.ErrDamaged and keeps the file aside (name.corrupt-<time>) for
// inspection, so the node starts unadopted and writes a new identity.
func TestStoreMovesDamagedFilesAside(t *testing.T) {
	for _, name := range []string{"role.yaml", "identity.yaml"} {
		for _, content := range []string{"null", "", "~\n", "assigned_role: \"hea", "node_id: [n-1"} {
			dir := t.TempDir()
			s, err := node.NewStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			var ok bool
			if name == "role.yaml" {
				_, _, ok, err = s.LoadRole()
			} else {
				_, ok, err = s.LoadIdentity()
			}
			if ok || !errors.Is(err, persist.ErrDamaged) {
				t.Errorf("%s = %q: ok %v, err %v; want not ok and ErrDamaged", name, content, ok, err)
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
				t.Errorf("%s = %q is still in place", name, content)
			}
			kept, _ := filepath.Glob(filepath.Join(dir, name+".corrupt-*"))
			if len(kept) != 1 {
				t.Errorf("%s = %q: copies kept %v, want one", name, content, kept)
				continue
			}
			if b, _ := os.ReadFile(kept[0]); string(b) != content {
				t.Errorf("the copy holds %q, want %q", b, content)
			}
			if !strings.Contains(err.Error(), filepath.Base(kept[0])) {
				t.Errorf("the error does not name the copy: %v", err)
			}
		}
	}
}
