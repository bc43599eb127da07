//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/internal/childproc/childproctest"
)

// childGone is how soon after saint-sim is killed its children must be
// gone: a second, as docs/sim.md promises.
const childGone = time.Second

// buildCommands builds saint-sim and the named commands of cmd/ into one
// temporary directory, as make build leaves them, so saint-sim finds its
// children beside itself; it skips the test when one cannot be built
// (its Debian packages are missing: make ros2-deps, make viz-deps).
func buildCommands(t *testing.T, names ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs saint-sim and its children")
	}
	dir := t.TempDir()
	args := []string{"build", "-o", dir + string(filepath.Separator), "github.com/saint-os/saint/cmd/saint-sim"}
	for _, n := range names {
		args = append(args, "github.com/saint-os/saint/cmd/"+n)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Skipf("%s do not build here (make ros2-deps viz-deps install what they need): %v\n%s", strings.Join(names, ", "), err, out)
	}
	return dir
}

// waitAddrs waits for saint-sim's --addr-file.
func waitAddrs(t *testing.T, file string) map[string]string {
	t.Helper()
	var addrs map[string]string
	bustest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	return addrs
}

// TestKilledSimTakesItsBridgeWithIt kills saint-sim --ros2 with SIGKILL
// once the bridge is bridging (it has written its --addr-file, after
// joining the bus and the DDS domain): the bridge is gone within a second
// instead of advertising the robot on DDS with nothing behind it.
func TestKilledSimTakesItsBridgeWithIt(t *testing.T) {
	dir := buildCommands(t, "saint-ros2")
	bridgeAddrs := filepath.Join(dir, "bridge.json")
	addrFile := filepath.Join(dir, "addrs.json")
	domain := 100 + rand.IntN(100) // apart from other tests' bridges
	sim := exec.Command(filepath.Join(dir, "saint-sim"), "--ros2", "--ros2-args", fmt.Sprintf("--domain %d --addr-file %s", domain, bridgeAddrs),
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(dir, "data"), "--addr-file", addrFile)
	sim.Stderr = logFile(t, dir, "saint-sim.log")
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Process.Kill(); _ = sim.Wait() })
	waitAddrs(t, addrFile)
	bridge := childproctest.WaitChild(t, sim.Process.Pid, "saint-ros2", 30*time.Second)
	t.Cleanup(bridge.Kill)
	bustest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		_, err := os.Stat(bridgeAddrs)
		return err
	})

	if err := sim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	childproctest.WaitGone(t, childGone, bridge)
}

// TestKilledSimTakesItsVisualizerWithIt runs saint-sim --viz on an X
// server of xvfb-run's and kills saint-sim with SIGKILL once the
// visualizer is connected to its WebSocket API: the visualizer is gone
// within a second. The X server stays up (it would take the visualizer
// down with it otherwise, and the test would show nothing).
func TestKilledSimTakesItsVisualizerWithIt(t *testing.T) {
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Skip("xvfb-run is not installed (make viz-deps installs it)")
	}
	dir := buildCommands(t, "saint-viz")
	display := filepath.Join(dir, "display")
	x := exec.Command(xvfb, "-a", "-s", "-screen 0 1280x800x24", "sh", "-c", `echo "$DISPLAY $XAUTHORITY" > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 1000`, display)
	x.Stderr = logFile(t, dir, "xvfb-run.log")
	// Its own process group: the cleanup stops xvfb-run, Xvfb and the sleep.
	x.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-x.Process.Pid, syscall.SIGKILL); _ = x.Wait() })
	var env []string
	bustest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		b, err := os.ReadFile(display)
		if err != nil {
			return err
		}
		d, auth, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		env = append(os.Environ(), "DISPLAY="+d, "XAUTHORITY="+auth)
		return nil
	})

	addrFile := filepath.Join(dir, "addrs.json")
	sim := exec.Command(filepath.Join(dir, "saint-sim"), "--viz",
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(dir, "data"), "--addr-file", addrFile)
	sim.Env = env
	sim.Stderr = logFile(t, dir, "saint-sim.log")
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Process.Kill(); _ = sim.Wait() })
	addrs := waitAddrs(t, addrFile)
	viz := childproctest.WaitChild(t, sim.Process.Pid, "saint-viz", 30*time.Second)
	t.Cleanup(viz.Kill)
	_, port, _ := net.SplitHostPort(addrs["ws"])
	bustest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if !connectedTo(viz.PID, port) {
			return fmt.Errorf("saint-viz is not connected to port %s", port)
		}
		return nil
	})

	if err := sim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	childproctest.WaitGone(t, childGone, viz)
}

// TestMissingChildIsNamed: without saint-ros2 beside it or on $PATH,
// saint-sim --ros2 stops at once, naming the missing command and how to
// build it (it used to go run it, whose child outlived it).
func TestMissingChildIsNamed(t *testing.T) {
	dir := buildCommands(t)
	cmd := exec.Command(filepath.Join(dir, "saint-sim"), "--ros2", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("saint-sim --ros2 without saint-ros2 ran:\n%s", out)
	}
	for _, want := range []string{"--ros2: saint-ros2 not found beside", "go build -o bin/ ./cmd/..."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func logFile(t *testing.T, dir, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(f.Name())
			t.Logf("%s:\n%s", name, b)
		}
	})
	return f
}

// connectedTo reports whether process pid has an established TCP
// connection to port on 127.0.0.1: one of its sockets is in
// /proc/net/tcp with that remote port.
func connectedTo(pid int, port string) bool {
	want, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	inodes := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fl := strings.Fields(sc.Text())
		if len(fl) < 10 || fl[3] != "01" { // 01: ESTABLISHED
			continue
		}
		_, rport, ok := strings.Cut(fl[2], ":")
		p, err := strconv.ParseInt(rport, 16, 32)
		if ok && err == nil && int(p) == want && inodes[fl[9]] {
			return true
		}
	}
	return false
}
