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
	simboard "github.com/saint-os/saint/sim/board"
)

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
