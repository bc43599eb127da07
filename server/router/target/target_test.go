package target_test

import (
	"testing"

	"github.com/saint-os/saint/server/router/target"
)

// Each target is listed once; the arms' names are what Arm and ArmPose
// make; an unknown target has no motor group.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range target.Table() {
		if seen[s.Name] {
			t.Errorf("%s listed twice", s.Name)
		}
		seen[s.Name] = true
		if len(s.Commands) > 0 && s.Command == "" {
			t.Errorf("%s has commands but no command target", s.Name)
		}
	}
	for _, c := range []struct{ got, want string }{
		{target.Arm("left"), target.ArmsLeft}, {target.Arm("right"), target.ArmsRight},
		{target.ArmPose("left"), target.ArmsLeftPose}, {target.ArmPose("right"), target.ArmsRightPose},
	} {
		if c.got != c.want || !seen[c.got] {
			t.Errorf("%s, want %s in the table", c.got, c.want)
		}
	}
	if g := target.MotorGroup(target.ArmsLeftPose); g != target.MotorGroup(target.ArmsLeft) || g == "" {
		t.Errorf("an arm's pose target is behind group %q, its joint target behind %q", g, target.MotorGroup(target.ArmsLeft))
	}
	if g := target.MotorGroup("wings"); g != "" {
		t.Errorf("unknown target behind group %q", g)
	}
	var drives []string
	for _, s := range target.Drives() {
		drives = append(drives, s.Name)
	}
	if len(drives) != 2 || drives[0] != target.Tracks || drives[1] != target.Balance {
		t.Errorf("drive targets %v, want tracks and balance", drives)
	}
}
