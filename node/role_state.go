package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/roles/rolekit"
)

// roleStateDir is where the running role's State lives in the state
// directory.
const roleStateDir = "role_state"

// roleState is the role's rolekit.State in the node's store: one file per
// name under role_state/, written atomically (persist.WriteFile), so a
// calibration survives restarts and power cuts.
type roleState struct{ s *Store }

// Load implements rolekit.State.
func (r roleState) Load(name string) ([]byte, bool, error) {
	if err := rolekit.CheckStateName(name); err != nil {
		return nil, false, err
	}
	data, err := os.ReadFile(r.s.path(filepath.Join(roleStateDir, name)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("node: role state %s: %w", name, err)
	}
	return data, true, nil
}

// Save implements rolekit.State.
func (r roleState) Save(name string, data []byte) error {
	if err := rolekit.CheckStateName(name); err != nil {
		return err
	}
	if err := os.MkdirAll(r.s.path(roleStateDir), 0o755); err != nil {
		return fmt.Errorf("node: role state: %w", err)
	}
	return persist.WriteFile(r.s.path(filepath.Join(roleStateDir, name)), data, 0o644)
}
