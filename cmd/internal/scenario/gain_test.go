package scenario

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/fixtures"
)

// A deliberately broken gain in the tracks' speed loop (the integral gain
// a hundred times too high) makes the scenario that watches that loop
// fail on the metrics that measure it, while the same scenario passes with
// the shipped gains (TestScenarioLibrary) and a scenario that does not
// involve the loop still passes with the broken gain.
func TestBrokenGainFailsTheRightScenario(t *testing.T) {
	broken := map[string]map[string]any{"tracks": {"speed_control.ki": 400.0}}
	run := func(name string) *Report {
		t.Helper()
		sc, err := ReadFile(filepath.Join(scenarioDir, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), sc, Options{RoleConfig: broken})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run("tracks_speed_step")
	if rep.Pass {
		t.Fatalf("tracks_speed_step passed with the speed loop's integral gain broken: %+v", rep.Metrics)
	}
	failed := map[string]bool{}
	for _, m := range rep.Metrics {
		failed[m.Name] = !m.Pass
		t.Logf("%s = %.4g pass=%v", m.Name, m.Value, m.Pass)
	}
	if !failed["left_overshoot"] && !failed["left_settling"] {
		t.Errorf("neither the overshoot nor the settling time of the left track caught the broken gain")
	}
	if rep := run("head_move_settling"); !rep.Pass {
		t.Errorf("head_move_settling failed with a broken tracks gain: %v", rep.Failures())
	}
}

// The same for the balance base: the balance PID's proportional gain a
// tenth of what it should be cannot hold the base up, so the tilt recovery
// fails, while the tracks' step response does not notice.
func TestBrokenBalanceGainFailsTheBalanceScenario(t *testing.T) {
	broken := map[string]map[string]any{"balance": {"balance.pid.kp": 0.2}}
	run := func(name string) *Report {
		t.Helper()
		sc, err := ReadFile(filepath.Join(scenarioDir, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), sc, Options{RoleConfig: broken})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run("balance_tilt_recovery")
	failed := map[string]bool{}
	for _, m := range rep.Metrics {
		failed[m.Name] = !m.Pass
		t.Logf("%s = %.4g pass=%v", m.Name, m.Value, m.Pass)
	}
	if !failed["max_tilt"] && !failed["settling_time"] && !failed["final_pitch"] {
		t.Errorf("no pitch metric of balance_tilt_recovery caught the broken balance gain")
	}
	if rep := run("tracks_speed_step"); !rep.Pass {
		t.Errorf("tracks_speed_step failed with a broken balance gain: %v", rep.Failures())
	}
}

// A role configuration broken by an override stops the run before it
// starts, with the file, the line and the field.
func TestBadRoleConfigNamesFileLineField(t *testing.T) {
	sc, err := ReadFile(filepath.Join(scenarioDir, "head_move_settling.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), sc, Options{RoleConfig: map[string]map[string]any{"head": {"gpio_mapping.pan_servo.pin": 40}}})
	if err == nil {
		t.Fatal("ran with GPIO40 in the head configuration")
	}
	for _, want := range []string{"head.yaml:", "gpio_mapping.pan_servo.pin", "not a BCM GPIO"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
}

// Every role configuration beside the robot's own is checked too, a
// limb's among them (the limb was missing when the keys were a list of
// their own); a file whose name is no role key is not a role
// configuration and is left alone.
func TestEveryRoleConfigIsChecked(t *testing.T) {
	dir := t.TempDir()
	if err := fixtures.WriteConfig(dir); err != nil {
		t.Fatal(err)
	}
	roles := filepath.Join(dir, "roles")
	neck, err := os.ReadFile(filepath.Join(dir, "humanoid", "limb_neck.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"limb_neck.yaml": neck, "notes.yaml": []byte("not: [a role")} {
		if err := os.WriteFile(filepath.Join(roles, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := validateRoleConfigs(roles); err != nil {
		t.Fatalf("the fixtures and a limb's: %v", err)
	}
	if err := overrideRoleConfigs(roles, map[string]map[string]any{"limb_neck": {"instance": "Neck"}}); err != nil {
		t.Fatal(err)
	}
	err = validateRoleConfigs(roles)
	for _, want := range []string{"limb_neck.yaml:", "instance", "an instance naming the limb"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a broken limb configuration: %v, want it to say %q", err, want)
		}
	}
}
