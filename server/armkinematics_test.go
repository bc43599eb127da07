package server

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/roleconfig"
)

// fakeConfigs serves role configurations from a map by role key.
type fakeConfigs map[string][]byte

func (f fakeConfigs) RoleConfig(role, instance string) ([]byte, string, string, error) {
	d, ok := f[role+"_"+instance]
	if !ok {
		return nil, "", "", errors.New("no configuration for role " + role + "_" + instance)
	}
	return d, "1", roleconfig.Checksum(d), nil
}

// TestArmKinematicsFromRoleConfig: the shipped arm configurations give
// kinematics with their joint tables' limits; a table that says
// supports_kinematics: false, a missing configuration and a table of
// another arm are refused with the reason; a changed configuration is
// read again.
func TestArmKinematicsFromRoleConfig(t *testing.T) {
	for _, dir := range []string{"roles", "arms_can"} {
		left, err := fs.ReadFile(fixtures.Config(), dir+"/arms_left.yaml")
		if err != nil {
			t.Fatal(err)
		}
		cfgs := fakeConfigs{"arms_left": left}
		k := newArmKinematics(cfgs)
		arm, err := k.Arm("left")
		if err != nil {
			t.Fatalf("%s/arms_left.yaml: %v", dir, err)
		}
		want := kinematics.DefaultArm("left")
		want.Lower = [5]float64{-2.5, -1.7, -2.5, -2.5, -2.5}
		want.Upper = [5]float64{2.5, 1.7, 2.5, 2.5, 2.5}
		if arm != want {
			t.Errorf("%s/arms_left.yaml: arm %+v, want %+v", dir, arm, want)
		}
		if _, err := k.Arm("right"); err == nil || !strings.Contains(err.Error(), "no configuration for role arms_right") {
			t.Errorf("no right arm configuration: %v", err)
		}

		cfgs["arms_left"] = bytes.Replace(left, []byte("supports_kinematics: true"), []byte("supports_kinematics: false"), 1)
		if _, err := k.Arm("left"); err == nil || !strings.Contains(err.Error(), "arms_left says motor.supports_kinematics: false") {
			t.Errorf("supports_kinematics false: %v", err)
		}
	}
	six := []byte(`role: arms
instance: left
motor:
  supports_kinematics: true
  joint_names: [a, b, c, d, e, f]
  map_index: [1, 2, 3, 4, 5, 6]
  direction: [1, 1, 1, 1, 1, 1]
  lower: [-1, -1, -1, -1, -1, -1]
  upper: [1, 1, 1, 1, 1, 1]
  kp: [1, 1, 1, 1, 1, 1]
  kd: [0, 0, 0, 0, 0, 0]
`)
	if _, err := newArmKinematics(fakeConfigs{"arms_left": six}).Arm("left"); err == nil || !strings.Contains(err.Error(), "6 joints") {
		t.Errorf("a six-joint table: %v", err)
	}
}
