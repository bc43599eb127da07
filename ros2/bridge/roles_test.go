package bridge_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/bridge/ddstest"
)

var update = flag.Bool("update", false, "rewrite testdata/reference_dds_topics.golden from the bridge")

// referenceGolden holds the DDS topics of the reference robot's bridge,
// one a line: every role's, the root's and the robot-wide ones.
var referenceGolden = filepath.Join("testdata", "reference_dds_topics.golden")

// ddsTopics starts a bridge of robot (nil: none given) on a fake DDS and
// returns the DDS topics it made a writer or reader for.
func ddsTopics(t *testing.T, robot *bringup.Robot) []string {
	t.Helper()
	dds := ddstest.New()
	o := bridge.Options{Bus: mem.New(), Exec: executor.New(nil), DDS: dds}
	if robot != nil {
		o.MotorNodes = bridge.MotorNodesOf(robot)
	}
	br, err := bridge.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	br.Stop()
	return dds.Topics()
}

// The reference robot's bridge — without a robot type, or with either of
// the reference robot's types — carries every role's topics and
// services, exactly the recorded list.
func TestReferenceRobotBridgeIsUnchanged(t *testing.T) {
	got := strings.Join(ddsTopics(t, nil), "\n") + "\n"
	if *update {
		if err := os.WriteFile(referenceGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(referenceGolden)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, got string) {
		t.Helper()
		if got == string(want) {
			return
		}
		g, w := lineSet(got), lineSet(string(want))
		for n := range w {
			if !g[n] {
				t.Errorf("%s: %s is not bridged", what, n)
			}
		}
		for n := range g {
			if !w[n] {
				t.Errorf("%s: %s is bridged, not in %s", what, n, referenceGolden)
			}
		}
	}
	check("no robot type", got)
	for _, rt := range []string{"saint-T-0L10A2G3H0W", "saint_can-T-0L10A2G3H0W"} {
		robot, err := bringup.Resolve(fixtures.Config(), rt)
		if err != nil {
			t.Fatal(err)
		}
		check(rt, strings.Join(ddsTopics(t, robot), "\n")+"\n")
	}
}

func lineSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out[l] = true
	}
	return out
}
