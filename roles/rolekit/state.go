package rolekit

import (
	"fmt"
	"strings"
	"sync"
)

// State is where a role keeps what it must not lose across restarts and
// power cycles — a calibration, say — on the node that runs it. Names are
// plain file names ("balance_level.json"); each Save replaces the whole
// value atomically.
type State interface {
	// Load returns the value saved under name; ok is false when there is
	// none.
	Load(name string) (data []byte, ok bool, err error)
	// Save stores data under name, durably before it returns.
	Save(name string, data []byte) error
}

// CheckStateName refuses a name that is not a plain file name.
func CheckStateName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("rolekit: state name %q: want a plain file name", name)
	}
	return nil
}

// MemState is a State in memory, for tests and for nodes without storage.
type MemState struct {
	mu   sync.Mutex
	vals map[string][]byte
}

// Load implements State.
func (m *MemState) Load(name string) ([]byte, bool, error) {
	if err := CheckStateName(name); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vals[name]
	return append([]byte(nil), v...), ok, nil
}

// Save implements State.
func (m *MemState) Save(name string, data []byte) error {
	if err := CheckStateName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vals == nil {
		m.vals = map[string][]byte{}
	}
	m.vals[name] = append([]byte(nil), data...)
	return nil
}
