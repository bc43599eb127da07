package rolespec_test

import (
	"strings"
	"testing"

	"github.com/saint-os/saint/roles/rolespec"
)

// Each role is in the table once, with a display name, and a role's
// instance rule accepts what its role key may carry and nothing else.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range rolespec.Table() {
		if seen[s.Name] {
			t.Errorf("%s listed twice", s.Name)
		}
		seen[s.Name] = true
		if s.DisplayName == "" {
			t.Errorf("%s has no display name", s.Name)
		}
		if strings.Contains(s.Name, "_") {
			t.Errorf("%s: a role name with '_' makes its keys ambiguous", s.Name)
		}
	}
	head, _ := rolespec.Lookup(rolespec.Head)
	arms, _ := rolespec.Lookup(rolespec.Arms)
	limb, _ := rolespec.Lookup(rolespec.Limb)
	for _, c := range []struct {
		s        rolespec.RoleSpec
		instance string
		ok       bool
	}{
		{head, "", true}, {head, "left", false},
		{arms, "left", true}, {arms, "right", true}, {arms, "", false}, {arms, "middle", false},
		{limb, "leg_left", true}, {limb, "neck", true}, {limb, "", false}, {limb, "Leg", false}, {limb, "leg-left", false},
	} {
		if got := c.s.ValidInstance(c.instance); got != c.ok {
			t.Errorf("%s instance %q valid = %v, want %v", c.s.Name, c.instance, got, c.ok)
		}
	}
}

// A role instance adopted without a name gets one from the table, every
// role and instance kind alike.
func TestDefaultDisplayName(t *testing.T) {
	for _, c := range []struct{ role, instance, want string }{
		{rolespec.Head, "", "Head"},
		{rolespec.Arms, "left", "Arms L"},
		{rolespec.Arms, "right", "Arms R"},
		{rolespec.Balance, "", "Balance"},
		{rolespec.Limb, "leg_left", "Limb leg left"},
	} {
		s, _ := rolespec.Lookup(c.role)
		if got := s.DefaultDisplayName(c.instance); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.role, c.instance, got, c.want)
		}
	}
}

// ParseKey takes a configuration key apart into a role of the table and
// an instance that fits it.
func TestParseKey(t *testing.T) {
	for _, c := range []struct{ key, role, instance, err string }{
		{"head", "head", "", ""},
		{"arms_left", "arms", "left", ""},
		{"limb_leg_left", "limb", "leg_left", ""},
		{"arms", "", "", "instance left or right"},
		{"limb", "", "", "an instance naming the limb"},
		{"head_left", "", "", "takes no instance"},
		{"wheel", "", "", "does not start with a role"},
	} {
		role, instance, err := rolespec.ParseKey(c.key)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", c.key, err, c.err)
			}
			continue
		}
		if err != nil || role != c.role || instance != c.instance {
			t.Errorf("%s: (%q, %q, %v), want (%q, %q)", c.key, role, instance, err, c.role, c.instance)
		}
	}
}
