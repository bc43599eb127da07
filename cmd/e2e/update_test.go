package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/bus/bustest"
)

// buildNodeVersion builds saint-node for this machine, stamped with
// version, into dir. It is built like TestMain's commands (same cgo
// setting) so that only the link is new; make firmware builds the static
// arm64 image a Pi runs.
func buildNodeVersion(t *testing.T, dir, version string) string {
	t.Helper()
	out := filepath.Join(dir, "saint-node-"+version)
	buildWith(t, out, "-ldflags", "-X main.version="+version, "github.com/saint-os/saint/cmd/saint-node")
	return out
}

func buildWith(t *testing.T, out string, args ...string) {
	t.Helper()
	buildWithEnv(t, out, nil, args...)
}

// buildWithEnv is buildWith with extra environment (GOARCH=...).
func buildWithEnv(t *testing.T, out string, env []string, args ...string) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCmd, append([]string{"build", "-o", out}, args...)...)
	// Node images are static, as make firmware builds them; the upload
	// endpoint refuses anything else.
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", out, err, b)
	}
}

// publishAndRestart publishes image as version into the server's firmware
// tree and restarts the server so it offers it.
func (s *server) publishAndRestart(image, version string) {
	s.t.Helper()
	ctl(s.t, "firmware", "publish", "--image", image, "--version", version, "--configs", configsDir,
		"--out", filepath.Join(s.data, "firmware"), "--changelog", "release "+version)
	s.restart()
}

// pidExe is the binary process pid runs now (it changes on exec).
func pidExe(t *testing.T, pid int) string {
	t.Helper()
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func fileSum(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

type updateResult struct {
	Nodes []struct {
		NodeID  string `json:"node_id"`
		Success bool   `json:"success"`
		Message string `json:"message"`
	} `json:"nodes"`
}

// triggerUpdate asks the server to make node id check for firmware now
// (with all, every online node, which in these tests is id alone),
// retrying while the node reconnects after a server restart.
func (c *api) triggerUpdate(id string, all bool) {
	c.t.Helper()
	params := map[string]any{"node_id": id}
	if all {
		params = map[string]any{}
	}
	bustest.CheckFor(c.t, 10*time.Second, 100*time.Millisecond, func() error {
		var res updateResult
		if err := c.get("trigger_update", params, &res); err != nil {
			return err
		}
		if len(res.Nodes) != 1 || res.Nodes[0].NodeID != id || !res.Nodes[0].Success {
			return fmt.Errorf("trigger_update %s: %+v", id, res)
		}
		return nil
	})
}

// checkRunning returns nil once get_node_info shows node id UNADOPTED
// running version, from a status published at or after since.
func (c *api) checkRunning(id, version string, since time.Time) (*nodeStatus, error) {
	ni, err := c.info(id)
	if err != nil {
		return nil, err
	}
	if ni.State != "UNADOPTED" || ni.Status == nil || ni.Status.FirmwareVersion != version || !stampedSince(ni.Status, since) {
		return nil, fmt.Errorf("get_node_info %s: state %s status %+v; want UNADOPTED running %s since %s", id, ni.State, ni.Status, version, since.Format(time.StampMilli))
	}
	return ni.Status, nil
}

// TestFirmwareSelfUpdate is the firmware update of the Firmware Update
// System across real processes: a node running 1.0.0 updates itself to
// 2.0.0 by exec (same process, new binary), refuses a 3.0.0 whose bytes do
// not match their checksum, and rolls back from a 4.0.0 that exits at
// start to 2.0.0.
func TestFirmwareSelfUpdate(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	v1 := buildNodeVersion(t, root, "1.0.0")
	v2 := buildNodeVersion(t, root, "2.0.0")
	v3 := buildNodeVersion(t, root, "3.0.0")
	v4 := filepath.Join(root, "brokenimage")
	buildWith(t, v4, "./testdata/brokenimage")

	// The server offers 1.0.0, what the node runs, so the node starts
	// without updating.
	ctl(t, "firmware", "publish", "--image", v1, "--version", "1.0.0", "--configs", configsDir,
		"--out", filepath.Join(serverDataDir(root), "firmware"))
	srv := newServer(t, root)
	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")
	n := &node{id: "updater", stateDir: filepath.Join(root, "updater")}
	// v1 is the flashed binary, the launcher every (re)start runs.
	n.proc = startProc(t, root, n.id, v1, "--server", srv.natsURL(), "--hal", "sim", "--trust-first-server", "--sim-hw", "bare",
		"--id", n.id, "--state-dir", n.stateDir, "--healthy-after", "1s", "--trial-timeout", "20s",
		"--allow-unsigned-firmware")
	start := time.Now()
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		_, err := c.checkRunning(n.id, "1.0.0", start)
		return err
	})
	pid := n.cur.cmd.Process.Pid
	current := filepath.Join(n.stateDir, "firmware", "current.img")
	trial := filepath.Join(n.stateDir, "firmware", "trial.yaml")

	// 1. 2.0.0 is uploaded to the running server (POST /api/firmware, as
	// saintctl firmware upload sends it); trigger_update makes the node
	// download it, verify it, exec it in the same process and report 2.0.0.
	if out := ctl(t, "firmware", "upload", v2, "--version", "2.0.0", "--changelog", "release 2.0.0",
		"--server", "http://"+srv.httpAddr); !strings.Contains(out, "2.0.0") {
		t.Errorf("saintctl firmware upload printed %q, want the uploaded version", out)
	}
	updateAt := time.Now()
	c.triggerUpdate(n.id, false)
	bustest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		if err := n.exited(); err != nil {
			return err
		}
		_, err := c.checkRunning(n.id, "2.0.0", updateAt)
		return err
	})
	if got := pidExe(t, pid); got != current {
		t.Errorf("process %d runs %s, want the installed image %s", pid, got, current)
	}
	if fileSum(t, current) != fileSum(t, v2) {
		t.Error("current.img is not the published 2.0.0 image")
	}
	// Healthy for --healthy-after: the trial closes and 2.0.0 stays.
	bustest.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		if _, err := os.Stat(trial); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("trial record %s still there (%v)", trial, err)
		}
		return nil
	})

	// 2. 3.0.0 is published, then its bytes on the server are damaged (same
	// size): the node downloads, finds the sha256 wrong, refuses the image
	// and keeps running 2.0.0 without an exec.
	//
	// First the upload endpoint: the server (built for arm64 nodes) refuses
	// this machine's binary naming the image field, and an upload whose
	// sha256 does not match what arrived naming the sha256 field.
	foreign, foreignArch := filepath.Join(root, "foreign"), "arm64"
	if runtime.GOARCH == "arm64" {
		foreignArch = "amd64"
	}
	buildWithEnv(t, foreign, []string{"GOARCH=" + foreignArch}, "./testdata/brokenimage")
	out := ctlFails(t, "firmware", "upload", foreign, "--version", "3.0.0", "--server", "http://"+srv.httpAddr)
	if !strings.Contains(out, "field image") || !strings.Contains(out, "GOARCH="+runtime.GOARCH) {
		t.Errorf("uploading a binary for %s: %q, want a refusal naming the image and the nodes' architecture", foreignArch, out)
	}
	code, body := postRaw(t, "http://"+srv.httpAddr+"/api/firmware?version=3.0.0&sha256="+strings.Repeat("ab", 32), v3)
	if code != 400 || !strings.Contains(body, `"field":"sha256"`) {
		t.Errorf("upload with a wrong sha256: %d %s, want 400 naming sha256", code, body)
	}
	srv.publishAndRestart(v3, "3.0.0")
	served := filepath.Join(srv.data, "firmware", "current", "saint_node.img")
	img, err := os.ReadFile(served)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), img...)
	for i := len(damaged) / 2; i < len(damaged)/2+64; i++ {
		damaged[i] ^= 0xFF
	}
	if err := os.WriteFile(served, damaged, 0o755); err != nil {
		t.Fatal(err)
	}
	refuseAt := time.Now()
	c.triggerUpdate(n.id, false)
	bustest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		if _, err := c.checkRunning(n.id, "2.0.0", refuseAt); err != nil {
			return err
		}
		if msg := statusMessage(t, c, n.id); !strings.Contains(msg, "3.0.0 refused") {
			return fmt.Errorf("status message %q does not say 3.0.0 was refused", msg)
		}
		return nil
	})
	if !strings.Contains(statusMessage(t, c, n.id), "sha256") {
		t.Errorf("refusal message %q does not name the checksum", statusMessage(t, c, n.id))
	}
	if got := pidExe(t, pid); got != current || fileSum(t, current) != fileSum(t, v2) {
		t.Errorf("after refusing 3.0.0 the node runs %s (sha256 %s), want 2.0.0 at %s", got, fileSum(t, got), current)
	}

	// 3. 4.0.0 exits as soon as it starts. The node execs it and the
	// process ends; the service manager (here the test, as saint-node.service
	// does) runs the rollback hook and starts the flashed binary again,
	// which runs 2.0.0 and has recorded 4.0.0 as rejected. This time every
	// node is asked to update (trigger_update without node_id).
	srv.publishAndRestart(v4, "4.0.0")
	rollbackAt := time.Now()
	c.triggerUpdate(n.id, true)
	bustest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		if n.exited() == nil {
			return errors.New("4.0.0 has not run yet")
		}
		return nil
	})
	if code := exitCode(n.cur); code != 3 {
		t.Errorf("the node process running 4.0.0 exited with %d, want the broken image's 3", code)
	}
	hook, err := exec.Command(v1, "--rollback-check", "--state-dir", n.stateDir).CombinedOutput()
	if err != nil || !strings.Contains(string(hook), "rolled back a firmware image that failed its trial") {
		t.Errorf("rollback hook: %v\n%s", err, hook)
	}
	n.start()
	bustest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		_, err := c.checkRunning(n.id, "2.0.0", rollbackAt)
		return err
	})
	if code := exitCode(n.cur); code != -1 {
		t.Errorf("the restarted node exited with %d", code)
	}
	if !strings.Contains(statusMessage(t, c, n.id), "rolled back") {
		t.Errorf("status message %q does not say 4.0.0 was rolled back", statusMessage(t, c, n.id))
	}
	if fileSum(t, current) != fileSum(t, v2) {
		t.Error("after the rollback current.img is not 2.0.0")
	}
	if got := pidExe(t, n.cur.cmd.Process.Pid); got != current {
		t.Errorf("after the rollback the node runs %s, want %s", got, current)
	}
	var rejected []struct {
		Version  string `yaml:"version"`
		Checksum string `yaml:"checksum_sha256"`
	}
	data, err := os.ReadFile(filepath.Join(n.stateDir, "firmware", "rejected.yaml"))
	if err == nil {
		err = yaml.Unmarshal(data, &rejected)
	}
	if err != nil || len(rejected) != 1 || rejected[0].Version != "4.0.0" || rejected[0].Checksum != fileSum(t, v4) {
		t.Errorf("rejected.yaml: %+v (%v), want 4.0.0 with its sha256", rejected, err)
	}
	// The rejected image is not tried again: the node stays up on 2.0.0.
	again := time.Now()
	c.triggerUpdate(n.id, true)
	bustest.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		_, err := c.checkRunning(n.id, "2.0.0", again)
		return err
	})
	if err := n.exited(); err != nil {
		t.Errorf("the node tried the rejected image again: %v", err)
	}
	if !bytes.Contains(data, []byte("did not come up healthy")) {
		t.Errorf("rejected.yaml gives no reason: %s", data)
	}
}

// statusMessage is the message of the node's last status.
func statusMessage(t *testing.T, c *api, id string) string {
	t.Helper()
	var raw struct {
		Status struct {
			Message string `json:"message"`
		} `json:"status"`
	}
	if err := c.get("get_node_info", map[string]any{"node_id": id}, &raw); err != nil {
		t.Fatal(err)
	}
	return raw.Status.Message
}

// exitCode is -1 while the run is going on.
func exitCode(r *run) int {
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// ctlFails runs saintctl expecting it to fail and returns its standard
// error.
func ctlFails(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin.ctl, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("saintctl %s succeeded; want a refusal", strings.Join(args, " "))
	}
	return stderr.String()
}

// postRaw posts the file at path as the raw body of url.
func postRaw(t *testing.T, url, path string) (int, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, err := http.Post(url, "application/octet-stream", f)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
