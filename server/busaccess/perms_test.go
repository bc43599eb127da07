package busaccess

import (
	"slices"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolespec"
)

// The command subjects are every role's, the limb's middleware among
// them (the limb was missing when they were a list of their own), inside
// the robot's namespace.
func TestCommandSubjectsCoverEveryRole(t *testing.T) {
	want := []string{
		"robot_7.saint.arms.left.cmd", "robot_7.saint.arms.left.control_command", "robot_7.saint.arms.left.gripper.cmd",
		"robot_7.saint.arms.right.cmd", "robot_7.saint.arms.right.control_command", "robot_7.saint.arms.right.gripper.cmd",
		"robot_7.saint.balance.arm", "robot_7.saint.balance.cmd_vel", "robot_7.saint.balance.estop",
		"robot_7.saint.console.alerts", "robot_7.saint.console.display",
		"robot_7.saint.head.camera.cmd", "robot_7.saint.head.cmd", "robot_7.saint.head.control_command",
		"robot_7.saint.limb.*.control_command",
		"robot_7.saint.tracks.cmd_vel", "robot_7.saint.tracks.estop",
	}
	got := CommandSubjects("/robot_7")
	if !slices.Equal(got, want) {
		t.Errorf("CommandSubjects:\n got %q\nwant %q", got, want)
	}
	for _, s := range rolespec.Table() {
		if !slices.ContainsFunc(got, func(sub string) bool { return strings.HasPrefix(sub, "robot_7.saint."+s.Name+".") }) {
			t.Errorf("role %s has no command subject", s.Name)
		}
	}
}

// An adopted node may not publish on its role's command topics, nor on
// its motor middleware's control_command.
func TestRoleMayNotPublishItsCommands(t *testing.T) {
	for _, c := range []struct{ role, instance string }{{"head", ""}, {"arms", "left"}, {"balance", ""}, {"limb", "leg_left"}} {
		p := rolePermissions(newSubjects(""), "n1", c.role, c.instance)
		prefix := newSubjects("").topic(msg.TopicPrefix(c.role, c.instance)) + "."
		denied := 0
		for _, sub := range CommandSubjects("") {
			mine := strings.Replace(sub, "*", c.instance, 1)
			if !strings.HasPrefix(mine, prefix) {
				continue
			}
			denied++
			if !slices.Contains(p.Publish.Deny, mine) {
				t.Errorf("%s %s: publishing on %s is not denied (deny %q)", c.role, c.instance, mine, p.Publish.Deny)
			}
		}
		if denied == 0 {
			t.Errorf("%s %s: no command subject under %s", c.role, c.instance, prefix)
		}
	}
}
