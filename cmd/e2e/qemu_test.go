package e2e

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
)

// qemuTimeout bounds each step of a node emulated instruction by
// instruction: it starts and answers several times slower than a native
// one.
const qemuTimeout = 60 * time.Second

// buildArm64Node builds saint-node as `make firmware` does: static,
// linux/arm64, trimmed paths, at firmwareVersion.
func buildArm64Node(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "saint-node-linux-arm64")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+firmwareVersion, "-o", out, "github.com/saint-os/saint/cmd/saint-node")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the arm64 firmware: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Fatalf("the firmware image is for %v, want EM_AARCH64", f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the firmware image asks for a dynamic loader: it is not static")
		}
	}
	return out
}

// emulator returns how to run an arm64 binary here: directly on arm64,
// else through qemu's user-mode emulator.
func emulator(t *testing.T) []string {
	t.Helper()
	if runtime.GOARCH == "arm64" {
		return nil
	}
	for _, name := range []string{"qemu-aarch64-static", "qemu-aarch64"} {
		if p, err := exec.LookPath(name); err == nil {
			return []string{p}
		}
	}
	t.Skip("qemu-aarch64(-static) is not installed (make test installs qemu-user-static as root): the arm64 firmware was not run")
	return nil
}

// TestArm64FirmwareRuns runs the firmware image the robot's Pis get — the
// static linux/arm64 saint-node of `make firmware` — under qemu as a
// simulated head node against a real saint-server: it boots, announces
// itself, is adopted, reaches ACTIVE, takes a head move and reports the new
// position.
func TestArm64FirmwareRuns(t *testing.T) {
	skipShort(t)
	run := emulator(t)
	root := t.TempDir()
	image := buildArm64Node(t, root)
	// The server publishes the same image and only accepts arm64 uploads,
	// as on the robot; at the node's own version no update is offered.
	ctl(t, "firmware", "publish", "--image", image, "--version", firmwareVersion, "--check-arch", "arm64",
		"--configs", configsDir, "--out", filepath.Join(serverDataDir(root), "firmware"))
	srv := newServer(t, root, "--firmware-arch", "arm64")
	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")

	const id = "qemu-head"
	args := append(run, image, "--server", srv.natsURL(), "--hal", "sim", "--trust-first-server", "--sim-hw", "head",
		"--id", id, "--state-dir", filepath.Join(root, id))
	t.Logf("running %v", args)
	node := startProc(t, root, id, args[0], args[1:]...)

	bustest.CheckFor(t, qemuTimeout, 100*time.Millisecond, func() error {
		if err := node.exited(); err != nil {
			return err
		}
		un, err := c.unadopted()
		if err != nil {
			return err
		}
		st, ok := un[id]
		if !ok {
			return fmt.Errorf("%s not in list_unadopted", id)
		}
		if st.FirmwareVersion != firmwareVersion {
			return fmt.Errorf("%s runs firmware %q, want %q", id, st.FirmwareVersion, firmwareVersion)
		}
		return nil
	})

	start := time.Now()
	var ar adoptResponse
	c.mustGet("adopt_node", map[string]any{"node_id": id, "role": "head"}, &ar)
	if !ar.Success {
		t.Fatalf("adopt_node: %+v", ar)
	}
	bustest.CheckFor(t, qemuTimeout, 100*time.Millisecond, func() error { return c.checkActive(id, "head", start) })

	// The head's state, as a browser sees it.
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	ws, _, err := d.Dial("ws://"+srv.wsAddr+"/saint", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteJSON(map[string]any{"type": "subscribe", "topics": []string{"head"}, "rate_hz": 0}); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteJSON(map[string]any{"id": "move-1", "type": "command", "target": "head", "action": "move",
		"params": map[string]any{"pan": 30, "tilt": -15, "roll": 0, "speed": 1}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(qemuTimeout)
	var last json.RawMessage
	for {
		_ = ws.SetReadDeadline(deadline)
		var m struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Node    string          `json:"node"`
			Status  string          `json:"status"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := ws.ReadJSON(&m); err != nil {
			t.Fatalf("no head state at pan 30°, tilt -15° (last %s): %v", last, err)
		}
		if m.ID == "move-1" && m.Status != "ok" {
			t.Fatalf("head move refused: %s", m.Message)
		}
		if m.Type != "state" || m.Node != "head" {
			continue
		}
		last = m.Data
		var hs struct{ Pan, Tilt, Roll float64 }
		if err := json.Unmarshal(m.Data, &hs); err != nil {
			t.Fatalf("head state %s: %v", m.Data, err)
		}
		if math.Abs(hs.Pan-30) < 0.5 && math.Abs(hs.Tilt+15) < 0.5 && math.Abs(hs.Roll) < 0.5 {
			break
		}
	}
	if err := node.exited(); err != nil {
		t.Fatal(err)
	}
}
