package server_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
	simboard "github.com/saint-os/saint/sim/board"
)

// roleList is list_roles' answer.
type roleList struct {
	RobotType string `json:"robot_type"`
	AnyRole   bool   `json:"any_role"`
	Roles     []struct {
		Key      string `json:"key"`
		Role     string `json:"role"`
		Instance string `json:"instance"`
	} `json:"roles"`
}

// TestAdoptionOnlyIntoDeclaredRoles runs the server as the humanoid
// (--robot-type pi_plus-S-12L8A0G2H0W, five limb nodes): list_roles
// offers the five limbs, adopt_node refuses a role or limb the robot
// configuration does not declare, on field role, listing what it does,
// and adopts a node into a declared limb. Without a robot type every
// role is offered.
func TestAdoptionOnlyIntoDeclaredRoles(t *testing.T) {
	const humanoid = "pi_plus-S-12L8A0G2H0W"
	robot, err := bringup.Resolve(os.DirFS(configDir), humanoid)
	if err != nil {
		t.Fatal(err)
	}
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, map[string]simboard.Profile{
		"n-head": simboard.Head, "n-limb": simboard.LimbCAN,
	}, func(o *server.Options) { o.Robot = robot })
	c := dialWS(t, "ws://"+r.srv.Addrs()["ws"]+"/saint", r.srv.Token())
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if got := c.ids("list_unadopted"); !got["n-head"] || !got["n-limb"] {
			return fmt.Errorf("unadopted: %v", got)
		}
		return nil
	})

	var roles roleList
	c.ok("list_roles", nil, &roles)
	var keys []string
	for _, ro := range roles.Roles {
		keys = append(keys, ro.Key)
		if ro.Role != "limb" || ro.Key != "limb_"+ro.Instance {
			t.Errorf("list_roles: %+v, want a limb with its key", ro)
		}
	}
	if roles.RobotType != humanoid || roles.AnyRole || strings.Join(keys, " ") != "limb_leg_left limb_leg_right limb_arm_left limb_arm_right limb_neck" {
		t.Errorf("list_roles: %+v, want the humanoid's five limbs", roles)
	}

	const declared = "limb (instance leg_left, leg_right, arm_left, arm_right, neck)"
	for _, p := range []map[string]any{
		{"node_id": "n-head", "role": "head"},
		{"node_id": "n-head", "role": "tracks"},
		{"node_id": "n-head", "role": "arms_left"},
		{"node_id": "n-limb", "role": "limb", "instance": "tail"},
	} {
		resp := c.call("adopt_node", p)
		if resp.Status != "error" || resp.Error.Field != "role" || !strings.Contains(resp.Message, humanoid) || !strings.Contains(resp.Message, declared) {
			t.Errorf("adopt_node %v: %s on field %q: %q; want refused on role, listing %s", p, resp.Status, resp.Error.Field, resp.Message, declared)
		}
	}
	// Without a role, the error lists the robot type's roles, not the
	// reference robot's.
	if resp := c.call("adopt_node", map[string]any{"node_id": "n-limb"}); resp.Error.Field != "role" || !strings.Contains(resp.Message, declared) || strings.Contains(resp.Message, "tracks") {
		t.Errorf("adopt_node without a role: on field %q: %q; want required on role, listing %s", resp.Error.Field, resp.Message, declared)
	}
	if got := c.ids("list_adopted"); len(got) != 0 {
		t.Fatalf("adopted after refusals: %v", got)
	}

	c.ok("adopt_node", map[string]any{"node_id": "n-limb", "role": "limb", "instance": "neck", "display_name": "Neck"}, nil)
	var adopted nodeList
	c.ok("list_adopted", nil, &adopted)
	if len(adopted.Nodes) != 1 || adopted.Nodes[0].NodeID != "n-limb" || adopted.Nodes[0].Instance != "neck" {
		t.Errorf("list_adopted: %+v, want n-limb as the neck", adopted)
	}

	// Without a robot type: any role, as before.
	plain := newRobot(t, func(string) bus.Bus { return mem.NewBroker().Connect(nil) }, nil)
	pc := dialWS(t, "ws://"+plain.srv.Addrs()["ws"]+"/saint", plain.srv.Token())
	roles = roleList{}
	pc.ok("list_roles", nil, &roles)
	if roles.RobotType != "" || !roles.AnyRole || len(roles.Roles) != 0 {
		t.Errorf("list_roles without a robot type: %+v, want any role", roles)
	}
}
