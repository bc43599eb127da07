package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/record"
)

// foxgloveNPM are Foxglove's own client libraries the tests check the
// server and the recordings with, at exact versions.
var foxgloveNPM = []string{"@foxglove/ws-protocol@0.8.0", "@mcap/core@2.2.2", "@foxglove/rosmsg2-serialization@3.1.0"}

// wsNPM is the WebSocket package for a Node.js without a WebSocket of its
// own (Debian 12's Node.js 18); newer ones use their built-in one.
const wsNPM = "ws@8.18.3"

// nodeScripts installs Foxglove's libraries with npm into a temporary
// directory beside copies of testdata/foxglove/*.mjs and returns the
// directory and the node command line (with the flag that gives Node.js 20
// its WebSocket). It skips the test when node or npm is missing or the
// registry is unreachable.
func nodeScripts(t *testing.T) (dir string, node []string) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed: skipping the tests with Foxglove's client libraries (install nodejs and npm)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed: skipping the tests with Foxglove's client libraries (install nodejs and npm)")
	}
	pkgs := foxgloveNPM
	node = []string{"node"}
	if out, _ := exec.Command("node", "-e", "process.stdout.write(typeof WebSocket)").Output(); string(out) != "function" {
		if out, _ := exec.Command("node", "--experimental-websocket", "-e", "process.stdout.write(typeof WebSocket)").Output(); string(out) == "function" {
			node = append(node, "--experimental-websocket")
		} else {
			pkgs = append(slices.Clone(pkgs), wsNPM)
		}
	}
	dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", append([]string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact", "--prefix", dir}, pkgs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm install %s failed (registry unreachable?): %v: skipping the tests with Foxglove's client libraries\n%s",
			strings.Join(pkgs, " "), err, out)
	}
	scripts, err := filepath.Glob("testdata/foxglove/*.mjs")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("scripts: %v", err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, node
}

// runNode runs a script and decodes the JSON report it prints.
func runNode(t *testing.T, dir string, node []string, script string, args []string, report any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node[0], append(append(node[1:], script), args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", script, err, out, stderr.String())
	}
	if err := json.Unmarshal(out, report); err != nil {
		t.Fatalf("%s: report %q: %v", script, out, err)
	}
}

// TestFoxgloveClientLibraries checks saint-sim with Foxglove's own
// libraries: FoxgloveClient (@foxglove/ws-protocol) lists the channels of
// the adopted robot, decodes odometry and the head state with their
// schemas, and moves the head through client publish (an out-of-range move
// first, refused with a status); then @mcap/core reads the run's recording
// and decodes every message.
func TestFoxgloveClientLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-sim, installs npm packages")
	}
	dir, node := nodeScripts(t)
	work := t.TempDir()

	// Foxglove's CDR reader decodes what the bus carried from a recording's
	// CDR channels.
	if _, err := exec.LookPath("zstd"); err == nil {
		var cdr struct {
			CDRTopics []string       `json:"cdrTopics"`
			Compared  map[string]int `json:"compared"`
		}
		file, expected := writeROS2Recording(t, work)
		runNode(t, dir, node, "mcap.mjs", []string{file, expected}, &cdr)
		for topic, ps := range busPayloads() {
			if !slices.Contains(cdr.CDRTopics, topic) || cdr.Compared[topic] != len(ps) {
				t.Errorf("%s: CDR topics %v, compared %d messages, want %d", topic, cdr.CDRTopics, cdr.Compared[topic], len(ps))
			}
		}
		t.Logf("@foxglove/rosmsg2-serialization decoded what the bus carried on %v", cdr.CDRTopics)
	}

	bin := filepath.Join(work, "saint-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := filepath.Join(work, "data")
	file := filepath.Join(work, "run.mcap")
	addrFile := filepath.Join(work, "addrs.json")
	logf, err := os.Create(filepath.Join(work, "saint-sim.log"))
	if err != nil {
		t.Fatal(err)
	}
	sim := exec.Command(bin, "--adopt", "--auth", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--foxglove", "127.0.0.1:0",
		"--data", data, "--record", file, "--addr-file", addrFile)
	sim.Stderr = logf
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = sim.Process.Kill()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("saint-sim log:\n%s", b)
		}
	}()
	var addrs map[string]string
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	token, err := os.ReadFile(filepath.Join(data, "server", "api_token"))
	if err != nil {
		t.Fatal(err)
	}

	var live struct {
		Channels     []string       `json:"channels"`
		Decoded      map[string]int `json:"decoded"`
		Statuses     []string       `json:"statuses"`
		HeadFollowed bool           `json:"headFollowed"`
		PanAfter     float64        `json:"panAfter"`
		ServerInfo   struct {
			Capabilities []string `json:"capabilities"`
		} `json:"serverInfo"`
		Params struct {
			Count            int     `json:"count"`
			ServerNameAfter  string  `json:"serverNameAfter"`
			PortBefore       float64 `json:"portBefore"`
			PortAfterRefusal float64 `json:"portAfterRefusal"`
			Refusal          string  `json:"refusal"`
		} `json:"params"`
	}
	runNode(t, dir, node, "client.mjs", []string{"ws://" + addrs["foxglove"] + "/?token=" + strings.TrimSpace(string(token))}, &live)
	for _, topic := range []string{"/saint/tracks/odom", "/saint/head/state", "/saint/balance/state", "/saint/sim/truth/tracks"} {
		if !slices.Contains(live.Channels, topic) {
			t.Errorf("channels %v lack %s", live.Channels, topic)
		}
	}
	// The camera streams only on demand: a frame means the subscription
	// started it.
	if live.Decoded["/saint/tracks/odom"] == 0 || live.Decoded["/saint/head/state"] == 0 || live.Decoded["/saint/head/camera/image_raw"] == 0 || !live.HeadFollowed {
		t.Errorf("FoxgloveClient: %+v", live)
	}
	t.Logf("FoxgloveClient: %d channels, decoded %v, head at %.2f°, statuses %q", len(live.Channels), live.Decoded, live.PanAfter, live.Statuses)
	// Parameters: the set is stored as the web UI's would be, the refused
	// one leaves the port as it was.
	if p := live.Params; p.ServerNameAfter != "Foxglove Rover" || p.PortBefore == 0 || p.PortAfterRefusal != p.PortBefore ||
		!strings.Contains(p.Refusal, "/server.livelink.data_port: want a port 1 to 65535, got 0") {
		t.Errorf("FoxgloveClient parameters: %+v", p)
	}
	if b, err := os.ReadFile(filepath.Join(data, "server", "settings.json")); err != nil || !strings.Contains(string(b), `"server_name": "Foxglove Rover"`) {
		t.Errorf("settings.json after setting /server.system.server_name (%v):\n%s", err, b)
	}
	t.Logf("FoxgloveClient: %d parameters, set the server's name, refused: %q", live.Params.Count, live.Params.Refusal)

	_ = sim.Process.Signal(os.Interrupt)
	if err := sim.Wait(); err != nil {
		t.Fatalf("saint-sim: %v", err)
	}
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("zstd not installed: @mcap/core needs it to decompress the recording's chunks (apt-get install zstd)")
	}
	var rec struct {
		Library     string            `json:"library"`
		Chunks      int               `json:"chunks"`
		Compression []string          `json:"compression"`
		Total       uint64            `json:"total"`
		Counts      map[string]uint64 `json:"counts"`
		Schemas     map[string]struct {
			Name     string `json:"name"`
			Encoding string `json:"encoding"`
		} `json:"schemas"`
		PosesMatched int `json:"posesMatched"`
	}
	runNode(t, dir, node, "mcap.mjs", []string{file}, &rec)
	sum, err := record.Summarize(file)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Total != sum.Messages || !slices.Equal(rec.Compression, []string{"zstd"}) || len(rec.Counts) != len(sum.Topics) {
		t.Errorf("@mcap/core read %d messages on %d topics (compression %v), the recording has %d on %d", rec.Total, len(rec.Counts), rec.Compression, sum.Messages, len(sum.Topics))
	}
	var cdr []string
	for _, tp := range sum.Topics {
		if rec.Counts[tp.Topic] != tp.Messages || rec.Schemas[tp.Topic].Encoding != tp.SchemaEncoding {
			t.Errorf("%s: @mcap/core read %d messages with schema %+v, the recording has %d", tp.Topic, rec.Counts[tp.Topic], rec.Schemas[tp.Topic], tp.Messages)
		}
		// Every topic with a ROS 2 type is stored as one: none fell back
		// to JSON because its first message did not encode.
		if _, ros := record.DefaultEncoding(tp.Topic).(record.ROS2); ros != (tp.SchemaEncoding == "ros2msg") {
			t.Errorf("%s: schema encoding %q, ROS 2 type: %v", tp.Topic, tp.SchemaEncoding, ros)
		}
		if tp.SchemaEncoding == "ros2msg" {
			cdr = append(cdr, tp.Topic)
		}
	}
	for topic, schema := range map[string]string{"/saint/tracks/odom": "nav_msgs/msg/Odometry", "/saint/head/state": "saint_os/msg/HeadState",
		"/saint/tf": "foxglove.FrameTransforms", "/saint/sim/truth/tracks": "saint.sim.truth.tracks"} {
		if rec.Schemas[topic].Name != schema {
			t.Errorf("%s: schema %+v, want %s", topic, rec.Schemas[topic], schema)
		}
	}
	// The frames Foxglove's 3D panel places the robot with come from the
	// odometry the recording holds as CDR.
	if rec.PosesMatched == 0 {
		t.Errorf("no odom → base_link transform to compare with the odometry")
	}
	// The head move published from Foxglove is in the recording: the
	// router's command to the head.
	if rec.Counts["/saint/head/cmd"] == 0 {
		t.Errorf("the recording has no head commands: %v", rec.Counts)
	}
	t.Logf("@mcap/core: %d messages on %d topics in %d zstd chunks; CDR topics %v; %d odometry poses matched /saint/tf", rec.Total, len(rec.Counts), rec.Chunks, cdr, rec.PosesMatched)
}
