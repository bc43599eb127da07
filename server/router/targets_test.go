package router_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router"
	"github.com/saint-os/saint/server/router/target"
)

// TestTargetTableIsConsistent: every routable target takes its every
// property in routes, refuses values outside its limits, and encodes
// values into exactly the messages (topic and type) it declares.
func TestTargetTableIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, tg := range router.Targets() {
		if seen[tg.Name] {
			t.Errorf("target %s listed twice", tg.Name)
		}
		seen[tg.Name] = true
		declared := map[string]string{}
		for _, m := range tg.Messages {
			declared[m.Topic] = "msg." + m.Type
		}
		if !tg.Routable {
			if pubs := tg.Encode(router.Values{}); len(pubs) != 0 {
				t.Errorf("%s is not routable but encodes %v", tg.Name, pubs)
			}
			continue
		}
		all := router.Values{}
		for _, p := range tg.Properties {
			if p.Min > p.Max || p.Default < p.Min || p.Default > p.Max || p.Unit == "" || p.Description == "" {
				t.Errorf("%s.%s: limits %g..%g, default %g, unit %q, description %q", tg.Name, p.Name, p.Min, p.Max, p.Default, p.Unit, p.Description)
			}
			for _, n := range p.Names() {
				if !router.ValidProperty(tg.Name, n) {
					t.Errorf("%s: a route may not drive %s", tg.Name, n)
				}
				if err := p.Check(n, p.Max); err != nil {
					t.Errorf("%s.%s: the maximum is refused: %v", tg.Name, n, err)
				}
				if err := p.Check(n, p.Max+1); err == nil || !strings.HasPrefix(err.Error(), n+": ") {
					t.Errorf("%s.%s: %g accepted (%v)", tg.Name, n, p.Max+1, err)
				}
				all[n] = p.Max
			}
		}
		if router.ValidProperty(tg.Name, "no_such_property") {
			t.Errorf("%s takes an unknown property", tg.Name)
		}
		pubs := tg.Encode(all)
		if len(pubs) == 0 {
			t.Errorf("%s encodes nothing from %v", tg.Name, all)
		}
		for _, p := range pubs {
			if want, ok := declared[p.Topic]; !ok || fmt.Sprintf("%T", p.Message) != want {
				t.Errorf("%s publishes %T on %s; declared %v", tg.Name, p.Message, p.Topic, tg.Messages)
			}
		}
		if tg.Stop != nil {
			for k, v := range tg.Stop {
				if p, ok := tg.Property(k); !ok || p.Check(k, v) != nil {
					t.Errorf("%s stops with %s=%g, not one of its values", tg.Name, k, v)
				}
			}
		}
	}
	for _, n := range []string{target.Head, target.ArmsLeft, target.ArmsRight, target.Tracks, target.Balance, target.Console} {
		if !seen[n] {
			t.Errorf("target %s missing from the table", n)
		}
	}
}

// TestTargetEncoding: the values a route or command gives become the
// target's messages, with the table's defaults for what is not driven.
func TestTargetEncoding(t *testing.T) {
	table := map[string]router.Target{}
	for _, tg := range router.Targets() {
		table[tg.Name] = tg
	}
	head := table[target.Head]
	pubs := head.Encode(router.Values{"pan": 30, "jaw": 0.5})
	if len(pubs) != 1 || pubs[0].Topic != msg.TopicHeadCmd || pubs[0].Message != (msg.HeadCommand{Pan: 30, Jaw: 0.5, Speed: 1}) {
		t.Errorf("head encodes %+v, want HeadCommand pan 30, jaw 0.5 at full speed", pubs)
	}
	pubs = head.Encode(router.Values{"eyes_pan": -12, "eyes_tilt": 8})
	if len(pubs) != 1 || pubs[0].Message != (msg.HeadCommand{EyesPan: -12, EyesTilt: 8, Speed: 1}) {
		t.Errorf("head eyes encode %+v, want HeadCommand eyes -12 / 8", pubs)
	}
	if !router.ValidProperty(target.Head, "eyes_pan") || router.ValidProperty(target.Head, "eyes") {
		t.Error("eyes_pan is not a head property, or a bare eyes is")
	}
	left := table[target.ArmsLeft]
	pubs = left.Encode(router.Values{"joint_2": 45, "immediate": 1, "gripper": 0.25})
	if len(pubs) != 2 {
		t.Fatalf("left arm encodes %+v, want an ArmCommand and a GripperCommand", pubs)
	}
	arm, ok := pubs[0].Message.(msg.ArmCommand)
	if !ok || pubs[0].Topic != msg.ArmCmdTopic(msg.ArmLeft) || len(arm.TargetPositions) != 3 || arm.TargetPositions[2] != 45 ||
		arm.TargetPositions[0] != 0 || !arm.Immediate || arm.SpeedFactor != 1 {
		t.Errorf("arm command %+v on %s", pubs[0].Message, pubs[0].Topic)
	}
	if g, ok := pubs[1].Message.(msg.GripperCommand); !ok || pubs[1].Topic != msg.GripperCmdTopic(msg.ArmLeft) || g.Position != 0.25 {
		t.Errorf("gripper command %+v on %s", pubs[1].Message, pubs[1].Topic)
	}
	tracks := table[target.Tracks]
	pubs = tracks.Encode(tracks.Stop)
	if len(pubs) != 1 || pubs[0].Topic != msg.TopicTracksCmdVel || pubs[0].Message != (msg.Twist{}) {
		t.Errorf("tracks stop encodes %+v, want a zero Twist", pubs)
	}
	balance := table[target.Balance]
	if !balance.Routable {
		t.Error("balance is not routable")
	}
	pubs = balance.Encode(router.Values{"linear": 0.3, "angular": -0.5, "arm": 1})
	if len(pubs) != 2 || pubs[0].Topic != msg.TopicBalanceCmdVel || pubs[0].Message != (msg.Twist{Linear: msg.Vector3{X: 0.3}, Angular: msg.Vector3{Z: -0.5}}) ||
		pubs[1].Topic != msg.TopicBalanceArm || pubs[1].Message != (msg.BalanceArm{Arm: true}) {
		t.Errorf("balance encodes %+v, want a Twist and the arm switch on", pubs)
	}
	pubs = balance.Encode(balance.Stop)
	if len(pubs) != 1 || pubs[0].Topic != msg.TopicBalanceCmdVel || pubs[0].Message != (msg.Twist{}) {
		t.Errorf("balance stop encodes %+v, want a zero Twist and no arm switch (disarming would drop the base)", pubs)
	}
	if got := router.EStopTopics(); strings.Join(got, ",") != msg.TopicTracksEStop+","+msg.TopicBalanceEStop {
		t.Errorf("e-stop topics %v", got)
	}
}

// TestGetTargetsServesTheTable: the route editor's table comes from the
// router over the WebSocket, the same table routes are checked against.
func TestGetTargetsServesTheTable(t *testing.T) {
	l := startLive(t, t.TempDir())
	c := l.dial()
	var got struct {
		Targets []router.Target `json:"targets"`
		Any     string          `json:"any"`
	}
	if err := json.Unmarshal(c.ok(`{"type": "router", "action": "get_targets"}`), &got); err != nil {
		t.Fatal(err)
	}
	want := router.Targets()
	if len(got.Targets) != len(want) || got.Any != target.Any {
		t.Fatalf("get_targets: %d targets, any %q; want %d, %q", len(got.Targets), got.Any, len(want), target.Any)
	}
	for i, tg := range got.Targets {
		if tg.Name != want[i].Name || tg.Routable != want[i].Routable || len(tg.Properties) != len(want[i].Properties) || len(tg.Messages) != len(want[i].Messages) {
			t.Errorf("target %d: %+v, want %+v", i, tg, want[i])
		}
	}
	pan, _ := got.Targets[0].Property("pan")
	if pan.Unit != router.UnitDegrees || pan.Min != -180 || pan.Max != 180 {
		t.Errorf("head pan %+v", pan)
	}
}

// The router's table is package target's, target for target in its
// order, and every command a target lists is registered (a command
// without a handler panics at registration).
func TestRouterTargetsAreTheTargetTable(t *testing.T) {
	var got, want []string
	for _, tg := range router.Targets() {
		got = append(got, tg.Name)
	}
	for _, s := range target.Table() {
		want = append(want, s.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("router.Targets() %v, target.Table() %v", got, want)
	}
	for _, s := range target.Drives() {
		tg := routerTarget(t, s.Name)
		if len(tg.Stop) == 0 {
			t.Errorf("%s is driven by drive and stop but has no stop values", s.Name)
		}
	}
}

func routerTarget(t *testing.T, name string) router.Target {
	t.Helper()
	for _, tg := range router.Targets() {
		if tg.Name == name {
			return tg
		}
	}
	t.Fatalf("no router target %s", name)
	return router.Target{}
}
