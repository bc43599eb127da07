package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/server/ws/wsclient"
	"github.com/saint-os/saint/server/ws/wsclient/wsclienttest"
)

// TestMakeRun is what `make run` promises: saint-sim starts, the web port
// answers HTTP, and list_unadopted over the WebSocket shows the simulated
// nodes with their GPIO status.
func TestMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-sim")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "saint-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	addrs := proctest.Start(t, bin, "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(dir, "data"))
	resp, err := http.Get("http://" + addrs["http"] + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<html") {
		t.Fatalf("GET /: %d %.80s", resp.StatusCode, body)
	}
	c := wsclienttest.Dial(t, "ws://"+addrs["ws"]+"/saint", "")
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var r struct {
			Nodes []struct {
				NodeID      string `json:"node_id"`
				Pins        []any  `json:"pins"`
				Peripherals []any  `json:"peripherals"`
			} `json:"nodes"`
		}
		if err := c.Call("management", "", "list_unadopted", nil, &r); err != nil {
			return err
		}
		if len(r.Nodes) != len(stack.Robot()) {
			return fmt.Errorf("%d unadopted nodes, want %d", len(r.Nodes), len(stack.Robot()))
		}
		for _, n := range r.Nodes {
			if len(n.Pins) != 28 {
				return fmt.Errorf("%s reports %d pins", n.NodeID, len(n.Pins))
			}
		}
		return nil
	})
}

// TestScenarioFlag: saint-sim --scenario exits 0 when every metric holds,
// non-zero when one does not, and writes the report and plots to --out.
func TestScenarioFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-sim")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "saint-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	good := "../../fixtures/scenarios/head_move_settling.yaml"
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// The same scenario asking for the impossible: no settling time at all.
	bad := filepath.Join(dir, "impossible.yaml")
	impossible := strings.Replace(string(data), "band: 1.5, max: 1.5}", "band: 1.5, max: 0.001}", 1)
	if impossible == string(data) {
		t.Fatal("the head scenario no longer has the settling metric this test tightens")
	}
	if err := os.WriteFile(bad, []byte(impossible), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		pass bool
	}{{good, true}, {bad, false}} {
		out := filepath.Join(dir, "out-"+filepath.Base(tc.file))
		cmd := exec.Command(bin, "--scenario", tc.file, "--out", out)
		output, err := cmd.CombinedOutput()
		if passed := err == nil; passed != tc.pass {
			t.Errorf("%s: exit error %v, want pass=%v\n%s", tc.file, err, tc.pass, output)
		}
		var rep struct {
			Pass    bool `json:"pass"`
			Metrics []struct {
				Name  string  `json:"name"`
				Value float64 `json:"value"`
				Pass  bool    `json:"pass"`
			} `json:"metrics"`
		}
		b, err := os.ReadFile(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Pass != tc.pass || len(rep.Metrics) == 0 {
			t.Errorf("%s: report pass=%v with %d metrics", tc.file, rep.Pass, len(rep.Metrics))
		}
		if png, err := os.ReadFile(filepath.Join(out, "head_pan_tilt.png")); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
			t.Errorf("%s: no PNG plot (%v)", tc.file, err)
		}
		// The run is recorded beside the report, closed, with the head's
		// state over the whole scenario.
		sum, err := record.Summarize(filepath.Join(out, "run.mcap"))
		if err != nil || !sum.Complete {
			t.Fatalf("%s: run.mcap: %+v %v", tc.file, sum, err)
		}
		head := 0
		for _, tp := range sum.Topics {
			if tp.Topic == "/saint/head/state" {
				head = int(tp.Messages)
			}
		}
		if head == 0 || sum.Metadata["scenario"] == "" {
			t.Errorf("%s: run.mcap has %d head states, metadata %v", tc.file, head, sum.Metadata)
		}
	}
}

// TestRecordReplay records a short run of the adopted robot with --record,
// stops it with an interrupt (the file is then complete) and plays the file
// back with --replay: Foxglove and the WebSocket API's head topic show the
// recorded states.
func TestRecordReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-sim")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "saint-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "run.mcap")
	cmd := exec.Command(bin, "--adopt", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(dir, "data"), "--record", file)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		st, err := os.Stat(file)
		if err != nil || st.Size() < 100_000 {
			return fmt.Errorf("recording: %v", err)
		}
		return nil
	})
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("saint-sim: %v", err)
	}
	sum, err := record.Summarize(file)
	if err != nil || !sum.Complete || sum.Messages == 0 {
		t.Fatalf("recording: %+v %v", sum, err)
	}
	// The Foxglove layout shows what the robot publishes.
	checkLayout(t, file)

	addrs := proctest.Start(t, bin, "--replay", file, "--speed", "1", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--foxglove", "127.0.0.1:0",
		"--data", filepath.Join(dir, "replay"))

	// Foxglove sees the replayed head state.
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	headState, _ := reg.Message("saint_os/HeadState")
	fg, _, err := (&websocket.Dialer{Subprotocols: []string{"foxglove.websocket.v1"}}).Dial("ws://"+addrs["foxglove"]+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fg.Close()
	_ = fg.SetReadDeadline(time.Now().Add(10 * time.Second))
	subscribed := false
	for got := false; !got; {
		typ, b, err := fg.ReadMessage()
		if err != nil {
			t.Fatalf("Foxglove: no replayed head state: %v", err)
		}
		if typ == websocket.BinaryMessage {
			// The replayed head state goes out as CDR, as it was recorded.
			if subscribed && len(b) > 13 && b[0] == 1 {
				if _, _, err := reg.Decode(headState, b[13:]); err != nil {
					t.Fatalf("Foxglove: replayed head state: %v", err)
				}
				got = true
			}
			continue
		}
		var adv struct {
			Op       string `json:"op"`
			Channels []struct {
				ID    int    `json:"id"`
				Topic string `json:"topic"`
			} `json:"channels"`
		}
		_ = json.Unmarshal(b, &adv)
		for _, ch := range adv.Channels {
			if adv.Op == "advertise" && ch.Topic == "/saint/head/state" {
				_ = fg.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": ch.ID}}})
				subscribed = true
			}
		}
	}

	c := wsclienttest.Dial(t, "ws://"+addrs["ws"]+"/saint", "")
	if err := c.Subscribe([]string{"head"}, 0); err != nil {
		t.Fatal(err)
	}
	c.Next("head", 10*time.Second)
}

// TestReplayInputs records a head move sent over the WebSocket API, then
// replays only the recording's inputs into a fresh simulation: its head
// turns to the recorded pan as it did in the recorded run.
func TestReplayInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-sim")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "saint-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "run.mcap")
	addrFile := filepath.Join(dir, "addrs.json")
	cmd := exec.Command(bin, "--adopt", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(dir, "data"),
		"--record", file, "--addr-file", addrFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addrs map[string]string
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	recorded := wsclienttest.Dial(t, "ws://"+addrs["ws"]+"/saint", "")
	// Move the head until it has turned, and a second longer, so the
	// recording holds commands from after the head came up.
	if err := recorded.Subscribe([]string{"head"}, 0); err != nil {
		t.Fatal(err)
	}
	var turned time.Time
	for next, end := time.Now(), time.Now().Add(30*time.Second); turned.IsZero() || time.Since(turned) < time.Second; {
		if time.Now().After(next) {
			_ = recorded.Command("head", "move", map[string]any{"pan": 30})
			next = time.Now().Add(100 * time.Millisecond)
		}
		if time.Now().After(end) {
			t.Fatal("recorded run: the head did not turn")
		}
		if headPan(t, recorded.Next("head", 30*time.Second)) > 29 && turned.IsZero() {
			turned = time.Now()
		}
	}
	_ = recorded.Close()
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("saint-sim: %v", err)
	}

	addrs = proctest.Start(t, bin, "--adopt", "--replay-inputs", file, "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(dir, "replay"))
	replayed := wsclienttest.Dial(t, "ws://"+addrs["ws"]+"/saint", "")
	if err := replayed.Subscribe([]string{"head"}, 0); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); ; {
		if pan := headPan(t, replayed.Next("head", time.Until(end))); pan > 29 && pan < 31 {
			return
		}
	}
}

// headPan is the pan of a head state update.
func headPan(t *testing.T, u wsclient.Update) float64 {
	t.Helper()
	var st struct {
		Pan float64 `json:"pan"`
	}
	if err := json.Unmarshal(u.Data, &st); err != nil {
		t.Fatalf("head state %s: %v", u.Data, err)
	}
	return st.Pan
}
