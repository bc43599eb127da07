package roles_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolespec"
	simboard "github.com/saint-os/saint/sim/board"
)

// The firmware's constructors are the role table's roles, no more and no
// fewer: a role added to one and not the other fails here.
func TestBuiltinIsTheRoleTable(t *testing.T) {
	want := rolespec.Names()
	slices.Sort(want)
	if got := roles.Builtin().Names(); !slices.Equal(got, want) {
		t.Errorf("roles.Builtin() has %v, the role table %v", got, want)
	}
}

// Every role a configuration may name is in the firmware, each New a fresh
// instance, and an unknown name says which ones are known.
func TestBuiltinRegistry(t *testing.T) {
	reg := roles.Builtin()
	if got := strings.Join(reg.Names(), ","); got != "arms,balance,console,head,limb,tracks" {
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
	if !errors.Is(err, roles.ErrUnknownRole) || !strings.Contains(err.Error(), `"wings" (known: arms, balance, console, head, limb, tracks)`) {
		t.Errorf("New(wings) error %v", err)
	}
}

// Every role reports a field its configuration does not know the same way:
// file, line and the dotted field, before it touches any device.
func TestEveryRoleRefusesAnUnknownField(t *testing.T) {
	for _, key := range []string{"head", "arms_left", "tracks", "console", "balance"} {
		data, err := fs.ReadFile(fixtures.Config(), "roles/"+key+".yaml")
		if err != nil {
			t.Fatal(err)
		}
		text := strings.TrimRight(string(data), "\n") + "\nnot_a_setting: 1\n"
		line := strings.Count(text, "\n")
		cfg, err := roleconfig.ParseFile(key+".yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		role, err := roles.New(cfg.Role)
		if err != nil {
			t.Fatal(err)
		}
		ex := executor.NewVirtual()
		// The board the role runs on, so that its pins and PWM outputs
		// open and it is the configuration that stops it.
		brd, err := simboard.New(&simboard.Options{Profile: simboard.Profile(strings.TrimSuffix(key, "_left"))})
		if err != nil {
			t.Fatal(err)
		}
		ex.Post(func() {
			err = role.Start(rolekit.Env{NodeID: "n", Exec: ex, Bus: mem.New(), Board: brd, Config: cfg, Prefix: "/saint/x"})
		})
		if rerr := ex.RunFor(context.Background(), time.Millisecond); rerr != nil {
			t.Fatal(rerr)
		}
		want := fmt.Sprintf("%s.yaml:%d: not_a_setting: unknown field (known: ", key, line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Start error %v, want one containing %q", key, err, want)
		}
		for _, p := range brd.Pins() {
			if p.InUse && !slices.Contains([]string{"i2c1", "uart0", "spi0"}, p.UsedBy) {
				t.Errorf("%s: GPIO%d left claimed by %s", key, p.BCM, p.UsedBy)
			}
		}
	}
}

// Every duration of every role's configuration is bounded, and a value
// outside its bounds is refused the same way: file, line, dotted field
// and the range.
func TestEveryRoleBoundsItsDurations(t *testing.T) {
	for _, tc := range []struct {
		key, field  string
		least, most float64
		unit        string
	}{
		{"head", "command_timeout_ms", 20, 60000, "ms"},
		{"head", "link_timeout_ms", 100, 5000, "ms"},
		{"tracks", "cmd_timeout_ms", 20, 5000, "ms"},
		{"tracks", "link_timeout_ms", 100, 5000, "ms"},
		{"tracks", "speed_control.stall_timeout_ms", 50, 60000, "ms"},
		{"tracks", "power.trip_ms", 0, 60000, "ms"},
		{"tracks", "power.release_ms", 0, 600000, "ms"},
		{"arms_left", "default_timeout_ms", 50, 60000, "ms"},
		{"arms_left", "link_timeout_ms", 100, 5000, "ms"},
		{"balance", "link_timeout_ms", 100, 5000, "ms"},
		{"balance", "balance.watchdog_ms", 1, 1000, "ms"},
		{"balance", "balance.can_timeout_ms", 10, 5000, "ms"},
		{"balance", "balance.arm_hold_ms", 100, 10000, "ms"},
		{"balance", "balance.filter_tau_s", 0.001, 10, "s"},
		{"console", "debounce_ms", 1, 1000, "ms"},
		{"console", "node_timeout_ms", 100, 600000, "ms"},
		{"console", "override.hold_ms", 50, 10000, "ms"},
		{"console", "alert_display_ms.info", 0, 600000, "ms"},
	} {
		for _, bad := range []float64{tc.least - 1, tc.most * 10} {
			if tc.least == 0.001 && bad < 0 {
				bad = 0
			}
			t.Run(fmt.Sprintf("%s/%s=%g", tc.key, tc.field, bad), func(t *testing.T) {
				data, err := fs.ReadFile(fixtures.Config(), "roles/"+tc.key+".yaml")
				if err != nil {
					t.Fatal(err)
				}
				// The field's line, its leaf key indented under its
				// section (or at the top level).
				parts := strings.Split(tc.field, ".")
				leaf := parts[len(parts)-1]
				indent := strings.Repeat("  ", len(parts)-1)
				lines := strings.Split(string(data), "\n")
				line := 0
				for i, l := range lines {
					if strings.HasPrefix(l, indent+leaf+":") {
						if line != 0 {
							t.Fatalf("%s appears twice in %s.yaml", leaf, tc.key)
						}
						line = i + 1
						lines[i] = fmt.Sprintf("%s%s: %g", indent, leaf, bad)
					}
				}
				if line == 0 {
					t.Fatalf("no %s in %s.yaml", tc.field, tc.key)
				}
				cfg, err := roleconfig.ParseFile(tc.key+".yaml", []byte(strings.Join(lines, "\n")))
				if err != nil {
					t.Fatal(err)
				}
				role, err := roles.New(cfg.Role)
				if err != nil {
					t.Fatal(err)
				}
				ex := executor.NewVirtual()
				brd, err := simboard.New(&simboard.Options{Profile: simboard.Profile(strings.TrimSuffix(tc.key, "_left"))})
				if err != nil {
					t.Fatal(err)
				}
				ex.Post(func() {
					err = role.Start(rolekit.Env{NodeID: "n", Exec: ex, Bus: mem.New(), Board: brd, Config: cfg, Prefix: "/saint/x"})
				})
				if rerr := ex.RunFor(context.Background(), time.Millisecond); rerr != nil {
					t.Fatal(rerr)
				}
				want := fmt.Sprintf("%s.yaml:%d: %s: expected between %g and %g %s, got %g", tc.key, line, tc.field, tc.least, tc.most, tc.unit, bad)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Start error %v, want one containing %q", err, want)
				}
				role.Stop()
			})
		}
	}
}
