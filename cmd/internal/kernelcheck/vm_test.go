package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/serial"
	"github.com/saint-os/saint/internal/qemuvm"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// guestChannels are the sticks the host's receiver twins send to the
// guest's serial ports: every channel a different width, so a channel
// decoded in the wrong place shows.
var guestChannels = []uint16{1000, 1060, 1120, 1180, 1240, 1300, 1360, 1420, 1480, 1540, 1600, 1660, 1720, 1780, 1840, 1900}

// guestChecks are the checks the guest must report, all passing.
var guestChecks = []string{"can-vesc", "can-mit-arm", "v4l2-vivid", "serial-sbus", "serial-crsf", "i2c-ina219"}

// initFailure matches what init prints when a module does not load or
// vcan0 cannot be made.
var initFailure = regexp.MustCompile(`(qemuvm|kernelcheck): (insmod \S+ failed|no vcan0)`)

// guestInit loads the kernel's simulators: modules whose parameters
// matter are loaded here (the rest by the initramfs), then vcan0 is made.
// vivid gets one capture node; i2c-stub one chip, at the INA219's address.
func guestInit(k qemuvm.Kernel) (files map[string]string, script string, err error) {
	files = map[string]string{}
	var b strings.Builder
	for _, m := range []struct{ name, params string }{
		{"vivid", "n_devs=1 node_types=0x1"},
		{"i2c-stub", "chip_addr=0x40"},
	} {
		paths, err := k.ModuleFiles(m.name)
		if err != nil {
			return nil, "", err
		}
		for i, p := range paths {
			files[p] = p
			params := ""
			if i == len(paths)-1 {
				params = " " + m.params
			}
			fmt.Fprintf(&b, "insmod %s%s || echo 'kernelcheck: insmod %s failed'\n", p, params, filepath.Base(p))
		}
	}
	b.WriteString("ip link add vcan0 type vcan && ip link set vcan0 up || echo 'kernelcheck: no vcan0'\n")
	return files, b.String(), nil
}

// buildGuest builds kernelcheck as the guest runs it: static, for the
// host's architecture (the guest's).
func buildGuest(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "kernelcheck")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the guest program: %v\n%s", err, b)
	}
	return out
}

// TestRealKernel boots Debian's kernel with a small initramfs and runs
// kernelcheck in it: SocketCAN on vcan0, V4L2 on vivid, SBUS and CRSF on
// two serial ports fed from this side by the receiver twins, the INA219 on
// i2c-stub. It skips when qemu, the kernel or busybox-static is missing
// (make rehearsal-deps installs them).
func TestRealKernel(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the guest is qemu-system-x86_64 with Debian's amd64 kernel; this machine is %s", runtime.GOARCH)
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (make rehearsal-deps)")
	}
	k, err := qemuvm.FindKernel()
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat(qemuvm.BusyboxPath); err != nil {
		t.Skip("busybox-static is not installed (make rehearsal-deps)")
	}
	dir := t.TempDir()
	phase := time.Now()
	lap := func(what string) {
		t.Logf("%s: %v", what, time.Since(phase).Round(time.Millisecond))
		phase = time.Now()
	}

	guest := buildGuest(t, dir)
	lap("guest program built")
	files, script, err := guestInit(k)
	if err != nil {
		t.Fatal(err)
	}
	files["bin/kernelcheck"] = guest
	img, err := qemuvm.BusyboxInitramfs(k, qemuvm.InitramfsOptions{
		Modules: []string{"vcan", "can-raw", "i2c-dev"},
		Files:   files,
		Init:    script,
	})
	if err != nil {
		t.Fatal(err)
	}
	initrd := filepath.Join(dir, "initramfs.cpio")
	if err := img.WriteFile(initrd); err != nil {
		t.Fatal(err)
	}
	lap("initramfs written")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// One CPU: the checks are about interfaces, not throughput, and the
	// machine is shared.
	vm, err := qemuvm.Start(ctx, qemuvm.Config{Kernel: k, Initramfs: initrd, MemoryMB: 512, CPUs: 1, SerialPorts: 2, Append: "quiet"})
	if err != nil {
		t.Fatal(err)
	}
	// Power off first: a receiver blocked writing to a port the guest no
	// longer reads is released when qemu's end of the pseudo-terminal
	// closes.
	var stopReceivers []func()
	defer func() {
		if t.Failed() {
			t.Logf("guest console (tail):\n%s", vm.ConsoleTail(4000))
		}
		vm.Close()
		for _, stop := range stopReceivers {
			stop()
		}
	}()
	for i, proto := range []rc.Protocol{rc.SBUS, rc.CRSF} {
		stop, err := startReceiver(vm.SerialPTY(i+1), proto, guestChannels)
		if err != nil {
			t.Fatal(err)
		}
		stopReceivers = append(stopReceivers, stop)
	}

	if _, err := vm.WaitConsole(ctx, regexp.MustCompile(`qemuvm: init done`), 0); err != nil {
		t.Fatal(err)
	}
	lap("guest booted, simulators loaded")
	if m := initFailure.FindString(vm.ConsoleTail(64 << 10)); m != "" {
		t.Errorf("guest init: %s", m)
	}

	out, status, err := vm.Run(ctx, fmt.Sprintf("/bin/kernelcheck -timeout 40s -can vcan0 -video /dev/video0 -sbus /dev/ttyS1 -crsf /dev/ttyS2 -rc-channels %s -i2c-adapter 'SMBus stub driver'",
		FormatChannels(guestChannels)))
	if err != nil {
		t.Fatal(err)
	}
	lap("checks run")
	results := map[string]Result{}
	var sum *Summary
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if r, ok, err := ParseLine(sc.Text()); err != nil {
			t.Error(err)
		} else if ok {
			results[r.Name] = r
			t.Logf("%-12s %-5v %8.1f ms  %s", r.Name, r.OK, r.Millis, r.Detail)
		}
		if s, ok := ParseEnd(sc.Text()); ok {
			sum = &s
		}
	}
	for _, name := range guestChecks {
		r, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: no result from the guest", name)
		case !r.OK:
			t.Errorf("%s failed: %s", name, r.Detail)
		}
	}
	if sum == nil || sum.Failed != 0 || sum.Passed != len(guestChecks) || status != 0 {
		t.Errorf("guest summary %+v, exit status %d; want %d passed, status 0; output:\n%s", sum, status, len(guestChecks), out)
	}

	// The guest's checks can fail there too: SBUS looked for on the port
	// that carries CRSF finds no SBUS frame, and says so.
	out, status, err = vm.Run(ctx, fmt.Sprintf("/bin/kernelcheck -timeout 3s -sbus /dev/ttyS2 -rc-channels %s", FormatChannels(guestChannels)))
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := ParseLine(strings.SplitN(out, "\n", 2)[0])
	if err != nil || !ok || r.Name != "serial-sbus" || r.OK || !strings.Contains(r.Detail, "0 sbus frames") || status != 1 {
		t.Errorf("SBUS checked on the CRSF port: %q, exit status %d; want serial-sbus failing with no SBUS frame found, status 1", out, status)
	}
}

// startReceiver runs an RC receiver twin (sim/twin/rctx) writing proto's
// frames with channels on the pseudo-terminal pty, as a receiver's UART
// would, on an executor of its own: a write blocks while the guest does
// not read its port, and must not hold up the other receiver.
func startReceiver(pty string, proto rc.Protocol, channels []uint16) (stop func(), err error) {
	// A pseudo-terminal keeps no line settings: the inverter is the
	// wiring's, and there is none between two emulated UARTs.
	port, err := serial.Open(pty, &serial.Options{HardwareInverter: true})
	if err != nil {
		return nil, err
	}
	ex := executor.New(nil)
	tx, err := rctx.NewSerial(ex, port, proto, nil)
	if err != nil {
		port.Close()
		return nil, err
	}
	for ch, us := range channels {
		if err := tx.Set(ch+1, us); err != nil {
			tx.Close()
			port.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ex.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		tx.Close()
		port.Close()
	}, nil
}
