package qemuvm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testKernel skips a test on a machine without qemu, Debian's kernel or
// busybox-static (make rehearsal-deps installs them).
func testKernel(t *testing.T) Kernel {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (make rehearsal-deps)")
	}
	k, err := FindKernel()
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat(BusyboxPath); err != nil {
		t.Skip("busybox-static is not installed (make rehearsal-deps)")
	}
	return k
}

// TestBusyboxGuest boots the kernel with a Go-built initramfs and uses every
// channel into it: a command with its output and exit status, a forwarded
// TCP port, a serial port whose other end is a host pseudo-terminal, a
// module loaded with its dependencies, the console.
func TestBusyboxGuest(t *testing.T) {
	k := testKernel(t)
	img, err := BusyboxInitramfs(k, InitramfsOptions{
		Modules: []string{"virtio_net", "vcan"},
		Init:    "mkdir -p /www && echo served-by-guest >/www/index.html && httpd -p 8080 -h /www\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	initrd := filepath.Join(t.TempDir(), "initramfs.cpio")
	if err := img.WriteFile(initrd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	vm, err := Start(ctx, Config{Kernel: k, Initramfs: initrd, MemoryMB: 256, CPUs: 1, Forwards: []int{8080}, SerialPorts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	defer func() {
		if t.Failed() {
			t.Logf("guest console (tail):\n%s", vm.ConsoleTail(3000))
		}
	}()
	start := time.Now()
	if _, err := vm.WaitConsole(ctx, regexp.MustCompile(`qemuvm: init done`), 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("booted in %v", time.Since(start).Round(time.Millisecond))

	out, status, err := vm.Run(ctx, "echo out; echo err >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if out != "out\nerr\n" || status != 3 {
		t.Errorf("Run = %q, status %d; want \"out\\nerr\\n\", 3", out, status)
	}
	out, status, err = vm.Run(ctx, "ip link add vcan0 type vcan && ip link set vcan0 up && cat /sys/class/net/vcan0/type")
	if err != nil || status != 0 || strings.TrimSpace(out) != "280" { // ARPHRD_CAN
		t.Errorf("vcan0: %q, status %d, %v; want its type 280 (ARPHRD_CAN)", out, status, err)
	}

	resp, err := http.Get("http://" + vm.HostAddr(8080) + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "served-by-guest\n" {
		t.Errorf("forwarded port answered %q; want the guest's page", body)
	}

	t.Logf("command and forward checked at %v", time.Since(start).Round(time.Millisecond))
	pty := vm.SerialPTY(1)
	if pty == "" {
		t.Fatal("no pseudo-terminal for ttyS1")
	}
	if out, status, err := vm.Run(ctx, "stty -F /dev/ttyS1 raw -echo && (head -c 6 /dev/ttyS1 >/tmp/serial &) && sleep 0.5 && printf from-guest >/dev/ttyS1"); err != nil || status != 0 {
		t.Fatalf("guest serial: %q, status %d, %v", out, status, err)
	}
	f, err := os.OpenFile(pty, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := exec.Command("stty", "-F", pty, "raw", "-echo").CombinedOutput(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hello!"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _, err := vm.Run(ctx, "cat /tmp/serial")
		if err != nil {
			t.Fatal(err)
		}
		if out == "hello!" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("guest read %q from ttyS1; want hello!", out)
		}
	}

	t.Logf("serial checked at %v", time.Since(start).Round(time.Millisecond))
	if _, _, err := vm.Run(ctx, "poweroff -f"); err == nil {
		t.Log("poweroff answered") // the agent may die before it answers
	}
	if err := vm.Wait(ctx); err != nil && !bytes.Contains([]byte(err.Error()), []byte("exit")) {
		t.Errorf("qemu after poweroff: %v", err)
	}
}
