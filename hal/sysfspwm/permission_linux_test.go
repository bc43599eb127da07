package sysfspwm_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/sysfspwm/sysfspwmtest"
)

// nobody is the unprivileged user the permission tests run as when the
// tests run as root (file modes do not stop root).
const nobody = 65534

// unprivileged reports whether the calling test should run its body here.
// As root it runs the test again in a copy of the test binary as user
// nobody, fails if that fails, and returns false.
func unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	dir, err := os.MkdirTemp("", "sysfspwm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sysfspwm.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as uid %d the test did not pass:\n%s", nobody, out)
	}
	return false
}

func TestExportPermissionDenied(t *testing.T) {
	if !unprivileged(t) {
		return
	}
	h, _ := open(t, sysfspwmtest.Options{ExportMode: 0o440}, 0, sysfspwmtest.Pi4())
	_, err := h.PWM(12)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "group gpio") {
		t.Errorf("PWM with export not writable: %v, want a permission error naming the gpio group", err)
	}
}

// udev hands a new channel's files to group gpio a moment after the
// kernel creates them: the channel waits for that.
func TestWaitsForUdev(t *testing.T) {
	if !unprivileged(t) {
		return
	}
	h, k := open(t, sysfspwmtest.Options{WritableAfter: 60 * time.Millisecond}, time.Second, sysfspwmtest.Pi4())
	p, err := h.PWM(13)
	if err != nil {
		t.Fatalf("PWM with files writable 60 ms after export: %v", err)
	}
	if err := p.PWM(0.5, 50); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 1, map[string]string{"duty_cycle": "10000000", "enable": "1"})

	h, _ = open(t, sysfspwmtest.Options{WritableAfter: -1}, 50*time.Millisecond, sysfspwmtest.Pi4())
	_, err = h.PWM(13)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "group gpio") {
		t.Errorf("PWM with files never writable: %v, want a permission error naming the gpio group", err)
	}
}
