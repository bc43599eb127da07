package roles

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/saint-os/saint/roles/arms"
	"github.com/saint-os/saint/roles/balance"
	"github.com/saint-os/saint/roles/console"
	"github.com/saint-os/saint/roles/head"
	"github.com/saint-os/saint/roles/limb"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/tracks"
)

// Factory returns a fresh, unstarted instance of a role module.
type Factory func() rolekit.Role

// Registry maps role names (a configuration's role: field) to their
// modules.
type Registry map[string]Factory

// ErrUnknownRole is returned by New for a role name the firmware does not
// contain.
var ErrUnknownRole = errors.New("roles: unknown role")

// Builtin returns the registry of the role modules compiled into the
// generic node firmware.
func Builtin() Registry {
	return Registry{
		"head":    func() rolekit.Role { return &head.Head{} },
		"arms":    func() rolekit.Role { return &arms.Arms{} },
		"tracks":  func() rolekit.Role { return &tracks.Tracks{} },
		"console": func() rolekit.Role { return &console.Console{} },
		"balance": func() rolekit.Role { return &balance.Balance{} },
		"limb":    func() rolekit.Role { return &limb.Limb{} },
	}
}

// Names returns the registered role names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns a fresh instance of the named role module.
func (r Registry) New(name string) (rolekit.Role, error) {
	f, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownRole, name, strings.Join(r.Names(), ", "))
	}
	return f(), nil
}

// New returns a fresh instance of the named built-in role module.
func New(name string) (rolekit.Role, error) { return Builtin().New(name) }
