package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/viz/layout"
)

// vizPackages are the Debian packages saint-viz compiles against (ebiten
// needs cgo, X11 and GL headers) and runs under (xvfb-run); the Makefile's
// viz-deps lists the same.
var vizPackages = []string{"libgl1-mesa-dev", "libxcursor-dev", "libxi-dev", "libxinerama-dev", "libxrandr-dev",
	"libxxf86vm-dev", "libasound2-dev", "pkg-config", "xvfb", "xauth"}

// vizDepsMissing says what of the visualizer's build and run dependencies
// is missing, "" when nothing is.
func vizDepsMissing() string {
	var missing []string
	for _, tool := range []string{"xvfb-run", "xauth", "pkg-config", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		if out, err := exec.Command("pkg-config", "--exists", "--print-errors", "gl", "x11", "xcursor", "xi", "xinerama", "xrandr", "xxf86vm", "alsa").CombinedOutput(); err != nil {
			missing = append(missing, strings.TrimSpace(string(out)))
		}
	}
	return strings.Join(missing, ", ")
}

// needVizDeps installs the visualizer's packages when they are missing
// and the test runs as root, and skips the test when they cannot be.
func needVizDeps(t *testing.T) {
	t.Helper()
	missing := vizDepsMissing()
	if missing == "" {
		return
	}
	if os.Geteuid() != 0 {
		t.Skipf("the visualizer needs %s (not root, so not installing): apt-get install %s", missing, strings.Join(vizPackages, " "))
	}
	t.Logf("installing the visualizer's packages (missing: %s)", missing)
	install := exec.Command("sh", "-c", "apt-get update -qq && apt-get install -y -qq --no-install-recommends "+strings.Join(vizPackages, " "))
	install.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("the visualizer needs %s and installing it failed: %v\n%s", missing, err, out)
	}
	if missing := vizDepsMissing(); missing != "" {
		t.Skipf("still missing after apt-get: %s", missing)
	}
}

// truthWatch follows the simulator's ground truth and the nodes' states
// over the WebSocket API.
type truthWatch struct {
	mu     sync.Mutex
	tracks msg.SimTracks
	seen   bool
	states map[string]string
}

func watchTruth(t *testing.T, wsURL string) *truthWatch {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.WriteJSON(map[string]any{"type": "subscribe", "topics": []string{"sim", "nodes"}, "rate_hz": 0}); err != nil {
		t.Fatal(err)
	}
	w := &truthWatch{states: map[string]string{}}
	go func() {
		for {
			var m struct {
				Type string `json:"type"`
				Node string `json:"node"`
				Data struct {
					Tracks *msg.SimTracks `json:"tracks"`
					NodeID string         `json:"node_id"`
					State  string         `json:"state"`
				} `json:"data"`
			}
			if conn.ReadJSON(&m) != nil {
				return
			}
			w.mu.Lock()
			switch {
			case m.Type != "state":
			case m.Node == "sim" && m.Data.Tracks != nil:
				w.tracks, w.seen = *m.Data.Tracks, true
			case m.Node == "nodes":
				w.states[m.Data.NodeID] = m.Data.State
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *truthWatch) pose() (msg.SimTracks, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tracks, w.seen
}

func (w *truthWatch) state(node string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.states[node]
}

// TestVisualizerShowsTheRobotWhereTheSimulatorSaysItIs runs saint-sim with
// every node adopted and saint-viz under xvfb-run: saint-viz drives the
// tracks forward from its --script (the same key handling as the
// keyboard, through the WebSocket API), then writes a screenshot. The
// robot must have moved, and the screenshot must show the ground truth
// marker's colour at the pixel the layout package maps the simulator's
// pose to, and not at the pose it started from.
func TestVisualizerShowsTheRobotWhereTheSimulatorSaysItIs(t *testing.T) {
	skipShort(t)
	needVizDeps(t)
	dir := t.TempDir()
	for _, cmd := range []string{"saint-sim", "saint-viz"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "github.com/saint-os/saint/cmd/"+cmd)
		build.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", cmd, err, out)
		}
	}
	addrFile := filepath.Join(dir, "addrs.json")
	sim := startProc(t, dir, "saint-sim", filepath.Join(dir, "saint-sim"), "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0",
		"--adopt", "--data", filepath.Join(dir, "data"), "--addr-file", addrFile)
	var addrs map[string]string
	bustest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if err := sim.exited(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	wsURL := "ws://" + addrs["ws"] + "/saint"
	watch := watchTruth(t, wsURL)
	bustest.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if _, ok := watch.pose(); !ok {
			return fmt.Errorf("no ground truth on the sim topic yet")
		}
		if st := watch.state("sim-tracks"); st != "ACTIVE" {
			return fmt.Errorf("sim-tracks is %q, want ACTIVE", st)
		}
		return nil
	})
	start, _ := watch.pose()

	shot := filepath.Join(dir, "viz.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	viz := exec.CommandContext(ctx, "xvfb-run", "-a", "-s", "-screen 0 1280x800x24",
		filepath.Join(dir, "saint-viz"), "--server", wsURL, "--width", "1280", "--height", "800",
		"--script", "w:2s", "--screenshot", shot, "--after", "4s")
	// xvfb-run starts Xvfb beside saint-viz: a timeout ends the group.
	viz.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	viz.Cancel = func() error { return syscall.Kill(-viz.Process.Pid, syscall.SIGKILL) }
	if out, err := viz.CombinedOutput(); err != nil {
		t.Fatalf("saint-viz: %v\n%s", err, out)
	}
	// The script let go of the keys two seconds before the screenshot, so
	// the robot stands where the screenshot shows it.
	end, _ := watch.pose()
	moved := math.Hypot(end.X-start.X, end.Y-start.Y)
	if moved < 0.2 {
		t.Fatalf("the robot moved %.3f m from (%.3f, %.3f) while saint-viz held W for 2 s, want at least 0.2 m", moved, start.X, start.Y)
	}
	var drawn struct {
		Truth struct{ X, Y float64 }
	}
	if b, err := os.ReadFile(shot + ".json"); err != nil || json.Unmarshal(b, &drawn) != nil {
		t.Fatalf("saint-viz wrote no screenshot record: %v", err)
	}
	if d := math.Hypot(drawn.Truth.X-end.X, drawn.Truth.Y-end.Y); d > 0.05 {
		t.Errorf("saint-viz drew the robot at (%.3f, %.3f), the simulator has it at (%.3f, %.3f) after the screenshot", drawn.Truth.X, drawn.Truth.Y, end.X, end.Y)
	}

	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	arena := layout.Compute(b.Dx(), b.Dy()).NewArena(layout.DefaultHalfExtent)
	if !arena.Visible(end.X, end.Y) {
		t.Fatalf("the robot at (%.3f, %.3f) is outside the arena view", end.X, end.Y)
	}
	px, py := arena.ToPixel(end.X, end.Y)
	if n := countNear(img, px, py, 3, layout.Truth); n < 20 {
		t.Errorf("the screenshot has %d ground-truth-coloured pixels within 3 px of (%.0f, %.0f), where the simulator's pose (%.3f, %.3f) maps; want the marker there",
			n, px, py, end.X, end.Y)
	}
	sx, sy := arena.ToPixel(start.X, start.Y)
	if math.Hypot(px-sx, py-sy) > 3*layout.TruthMarkerRadius(arena.Scale()) {
		if n := countNear(img, sx, sy, 3, layout.Truth); n > 0 {
			t.Errorf("%d ground-truth-coloured pixels remain at the start (%.0f, %.0f) the robot left", n, sx, sy)
		}
	}
	if t.Failed() {
		keep := filepath.Join(os.TempDir(), "saint-viz-failed.png")
		if data, err := os.ReadFile(shot); err == nil && os.WriteFile(keep, data, 0o644) == nil {
			t.Logf("screenshot kept at %s", keep)
		}
	}
}

// countNear counts the pixels of colour c within r pixels of (x, y).
func countNear(img image.Image, x, y float64, r int, c color.RGBA) int {
	n := 0
	cx, cy := int(math.Round(x)), int(math.Round(y))
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			r8, g8, b8, _ := img.At(cx+dx, cy+dy).RGBA()
			if uint8(r8>>8) == c.R && uint8(g8>>8) == c.G && uint8(b8>>8) == c.B {
				n++
			}
		}
	}
	return n
}

// command sends a WebSocket API command and decodes its data into out.
func (c *api) command(target, action string, params, out any) error {
	c.seq++
	id := fmt.Sprintf("e2e-%d", c.seq)
	raw, err := json.Marshal(map[string]any{"id": id, "type": "command", "target": target, "action": action, "params": params})
	if err != nil {
		return err
	}
	r, err := c.roundTrip(raw, json.RawMessage(strconv.Quote(id)))
	if err != nil {
		return err
	}
	if r.Status != "ok" {
		return fmt.Errorf("%s %s: %s", target, action, r.Message)
	}
	return json.Unmarshal(r.Data, out)
}

// TestVisualizerDrawsTheHumanoid runs saint-sim with the humanoid robot
// type, its five limb nodes adopted, plays arms_forward (the arms reach
// forward and stay), and takes a screenshot of saint-viz under xvfb-run:
// the humanoid's view shows the left forearm in the ground truth's colour
// where the kinematics put it at the simulator's joint angles, in both
// views, the reported one over it, and nothing of it where it hung before;
// every limb is drawn as reported too.
func TestVisualizerDrawsTheHumanoid(t *testing.T) {
	skipShort(t)
	needVizDeps(t)
	dir := t.TempDir()
	for _, cmd := range []string{"saint-sim", "saint-viz"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "github.com/saint-os/saint/cmd/"+cmd)
		build.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", cmd, err, out)
		}
	}
	addrFile := filepath.Join(dir, "addrs.json")
	sim := startProc(t, dir, "saint-sim", filepath.Join(dir, "saint-sim"), "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0",
		"--robot-type", "pi_plus-S-12L8A0G2H0W", "--adopt", "--data", filepath.Join(dir, "data"), "--addr-file", addrFile)
	var addrs map[string]string
	bustest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if err := sim.exited(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	wsURL := "ws://" + addrs["ws"] + "/saint"
	c := newAPI(t, wsURL)
	// Once the root middleware has found the limbs' motors, the action
	// plays; it answers when played, and KEEP_MODE holds the pose.
	bustest.CheckFor(t, 60*time.Second, 250*time.Millisecond, func() error {
		var played struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
		}
		if err := c.command("motors", "play_action", map[string]any{"name": "arms_forward", "client": "viz-test"}, &played); err != nil {
			return err
		}
		if !played.Success {
			return fmt.Errorf("play_action arms_forward: %s", played.Message)
		}
		return nil
	})

	shot := filepath.Join(dir, "viz-humanoid.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	viz := exec.CommandContext(ctx, "xvfb-run", "-a", "-s", "-screen 0 1280x800x24",
		filepath.Join(dir, "saint-viz"), "--server", wsURL, "--width", "1280", "--height", "800",
		"--screenshot", shot, "--after", "3s")
	viz.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	viz.Cancel = func() error { return syscall.Kill(-viz.Process.Pid, syscall.SIGKILL) }
	if out, err := viz.CombinedOutput(); err != nil {
		t.Fatalf("saint-viz: %v\n%s", err, out)
	}
	var drawn struct {
		Limbs, LimbTruth map[string]struct{ Points [][3]float64 }
	}
	if b, err := os.ReadFile(shot + ".json"); err != nil || json.Unmarshal(b, &drawn) != nil {
		t.Fatalf("saint-viz wrote no screenshot record: %v", err)
	}
	for _, limb := range kinematics.HumanoidLimbs() {
		if len(drawn.Limbs[limb].Points) == 0 || len(drawn.LimbTruth[limb].Points) == 0 {
			t.Errorf("%s: drawn as reported %v, as the truth %v; want both", limb, drawn.Limbs[limb].Points, drawn.LimbTruth[limb].Points)
		}
	}
	// The truth drawn is where the physics holds the arm: its joints by
	// the kinematics at the simulator's angles now (the pose is held).
	var q []float64
	watch := watchLimb(t, wsURL, kinematics.ArmLeft)
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var ok bool
		if q, ok = watch(); !ok {
			return fmt.Errorf("no ground truth of the left arm yet")
		}
		return nil
	})
	arm, _ := kinematics.HumanoidLimb(kinematics.ArmLeft)
	pts := arm.Chain(q)
	hand := [3]float64(pts[4])
	if got := drawn.LimbTruth[kinematics.ArmLeft].Points; len(got) != 5 || math.Hypot(math.Hypot(got[4][0]-hand[0], got[4][1]-hand[1]), got[4][2]-hand[2]) > 0.01 {
		t.Fatalf("saint-viz drew the left hand at %v, the physics has it at %v", got, hand)
	}
	if hand[0] < 0.2 {
		t.Fatalf("the left hand is at %v after arms_forward: not forward", hand)
	}

	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	front, side := layout.Compute(b.Dx(), b.Dy()).WithHumanoid().HumanoidFigures()
	midpoint := func(a, b mgl64.Vec3) [3]float64 { return [3]float64(a.Add(b).Mul(0.5)) }
	forearm := midpoint(pts[3], pts[4])
	hung := arm.Chain(nil)
	hanging := midpoint(hung[3], hung[4])
	for _, fig := range []layout.Figure{front, side} {
		x, y := fig.ToPixel(forearm)
		if n := countNear(img, x, y, 2, layout.Truth); n < 5 {
			t.Errorf("view side=%v: %d ground-truth-coloured pixels within 2 px of (%.0f, %.0f), the left forearm's middle %v; want it drawn there",
				fig.Side, n, x, y, forearm)
		}
		// What the node reports, drawn thin over the truth: the server
		// placed the same forearm there.
		if n := countNear(img, x, y, 3, layout.Reported); n < 2 {
			t.Errorf("view side=%v: %d reported-coloured pixels within 3 px of (%.0f, %.0f), the left forearm's middle; want the reported arm there too",
				fig.Side, n, x, y)
		}
		hx, hy := fig.ToPixel(hanging)
		if math.Hypot(hx-x, hy-y) > 10 {
			if n := countNear(img, hx, hy, 2, layout.Truth); n > 0 {
				t.Errorf("view side=%v: %d ground-truth-coloured pixels at (%.0f, %.0f), where the forearm hung before the action", fig.Side, n, hx, hy)
			}
		}
	}
	if t.Failed() {
		keep := filepath.Join(os.TempDir(), "saint-viz-humanoid-failed.png")
		if data, err := os.ReadFile(shot); err == nil && os.WriteFile(keep, data, 0o644) == nil {
			t.Logf("screenshot kept at %s", keep)
		}
	}
}

// watchLimb follows the simulator's ground truth of a humanoid limb over
// the WebSocket API; the function returns its latest joint angles.
func watchLimb(t *testing.T, wsURL, instance string) func() ([]float64, bool) {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.WriteJSON(map[string]any{"type": "subscribe", "topics": []string{"sim"}, "rate_hz": 0}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var latest []float64
	go func() {
		for {
			var m struct {
				Type string                     `json:"type"`
				Node string                     `json:"node"`
				Data map[string]json.RawMessage `json:"data"`
			}
			if conn.ReadJSON(&m) != nil {
				return
			}
			raw, ok := m.Data["limb_"+instance]
			if m.Type != "state" || m.Node != "sim" || !ok {
				continue
			}
			var js msg.JointStates
			if json.Unmarshal(raw, &js) == nil {
				mu.Lock()
				latest = js.Position
				mu.Unlock()
			}
		}
	}()
	return func() ([]float64, bool) {
		mu.Lock()
		defer mu.Unlock()
		return latest, latest != nil
	}
}
