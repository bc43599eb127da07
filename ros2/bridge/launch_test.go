package bridge

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// launchHelperEnv makes the test binary play saint-ros2 for
// TestLaunchRestartsACrashedBridge: it counts its runs in the folder the
// variable names, and its first two runs name a participant and die by a
// signal, as saint-ros2 did of SIGSEGV inside Cyclone DDS's type lookup
// (SIGKILL here: the Go runtime turns a SIGSEGV it is sent into exit
// status 2, where a fault in C code kills the process with the signal).
const launchHelperEnv = "SAINT_LAUNCH_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(launchHelperEnv); dir != "" {
		launchHelper(dir)
		return
	}
	os.Exit(m.Run())
}

func launchHelper(dir string) {
	runs, _ := os.ReadDir(dir)
	n := len(runs) + 1
	_ = os.WriteFile(filepath.Join(dir, strconv.Itoa(n)), nil, 0o644)
	if os.Getenv("SAINT_LAUNCH_HELPER_EXIT") == "1" {
		os.Exit(1)
	}
	if n <= 2 {
		os.Stderr.WriteString("level=WARN msg=\"refused a remote type object\" participant=1f2e3d4c:5b6a7988:a0b1c2d3:1c1\n")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	// The third run stays up until interrupted, as saint-ros2 does.
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	<-ch
	os.Exit(0)
}

// syncBuffer is a log destination safe for the supervising goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLaunchRestartsACrashedBridge(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(launchHelperEnv, dir)
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Launch(ctx, LaunchOptions{Bin: os.Args[0], Log: slog.New(slog.NewTextHandler(&logs, nil)),
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Stderr: &syncBuffer{}})
	}()
	t.Cleanup(cancel) // stops the supervisor should the wait below fail
	bustest.CheckFor(t, 20*time.Second, 10*time.Millisecond, func() error {
		if runs, _ := os.ReadDir(dir); len(runs) < 3 {
			return fmt.Errorf("the bridge ran %d times, want a third run after two crashes; log:\n%s", len(runs), logs.String())
		}
		return nil
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Launch: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Launch did not return after its context ended")
	}
	// Two crashes, each logged with the signal and the participant the
	// child named last; the interrupted third run is not a crash.
	var crashes []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "ended unexpectedly") {
			crashes = append(crashes, l)
		}
	}
	if len(crashes) != 2 {
		t.Fatalf("%d unexpected ends logged, want 2:\n%s", len(crashes), logs.String())
	}
	for _, l := range crashes {
		if !strings.Contains(l, `exit="signal: killed"`) || !strings.Contains(l, "participant=1f2e3d4c:5b6a7988:a0b1c2d3:1c1") {
			t.Errorf("a crash logged without its signal or participant: %s", l)
		}
	}
	if runs, _ := os.ReadDir(dir); len(runs) != 3 {
		t.Errorf("%d runs, want 3 (no restart after the context ended)", len(runs))
	}
}

// Exit status 1 is saint-ros2 giving up by its own decision (its bus gone
// for good, bad flags): not restarted.
func TestLaunchDoesNotRestartAChosenStop(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(launchHelperEnv, dir)
	t.Setenv("SAINT_LAUNCH_HELPER_EXIT", "1")
	err := Launch(context.Background(), LaunchOptions{Bin: os.Args[0], MinBackoff: time.Millisecond, Stderr: &syncBuffer{},
		Log: slog.New(slog.NewTextHandler(&syncBuffer{}, nil))})
	if err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("Launch of a bridge that exits 1: %v, want that error", err)
	}
	if runs, _ := os.ReadDir(dir); len(runs) != 1 {
		t.Errorf("%d runs, want 1", len(runs))
	}
}

func TestLaunchOfAMissingBinaryFails(t *testing.T) {
	err := Launch(context.Background(), LaunchOptions{Bin: filepath.Join(t.TempDir(), "saint-ros2")})
	if err == nil {
		t.Fatal("Launch of a binary that does not exist: no error")
	}
}
