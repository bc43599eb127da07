package roles_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
)

// Every role a configuration may name is in the firmware, each New a fresh
// instance, and an unknown name says which ones are known.
func TestBuiltinRegistry(t *testing.T) {
	reg := roles.Builtin()
	if got := strings.Join(reg.Names(), ","); got != "arms,balance,console,head,tracks" {
		t.Errorf("built-in roles %s", got)
	}
	for _, name := range reg.Names() {
		a, err := roles.New(name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := roles.New(name)
		if a == b {
			t.Errorf("%s: New returned the same instance twice", name)
		}
		if _, err := roleconfig.Parse([]byte("role: " + name + "\ninstance: left\nversion: \"1\"\n")); err != nil {
			t.Errorf("%s: a configuration cannot name it: %v", name, err)
		}
	}
	_, err := roles.New("wings")
	if !errors.Is(err, roles.ErrUnknownRole) || !strings.Contains(err.Error(), `"wings" (known: arms, balance, console, head, tracks)`) {
		t.Errorf("New(wings) error %v", err)
	}
}
