package socketcan

import (
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	esocketcan "go.einride.tech/can/pkg/socketcan"
	"golang.org/x/sys/unix"

	"github.com/saint-os/saint/hal/can"
)

// vcanPair opens two raw CAN sockets on a virtual CAN interface created in a
// network namespace of its own, so the test touches no interface of the
// machine. It skips, saying why, where the kernel or the process does not
// allow that (no vcan module, no CAP_SYS_ADMIN, no ip command).
func vcanPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ipCmd, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip command to create a vcan interface with; the pipe tests cover the frame handling")
	}
	type result struct {
		a, b net.Conn
		skip string
		err  error
	}
	res := make(chan result, 1)
	go func() {
		// The namespace belongs to this thread only. The goroutine ends
		// without unlocking, so the runtime retires the thread with it; the
		// sockets keep the namespace alive.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			res <- result{skip: fmt.Sprintf("cannot create a network namespace for vcan (unshare: %v); the pipe tests cover the frame handling", err)}
			return
		}
		// exec forks from this locked thread, so ip runs in the namespace.
		for _, args := range [][]string{{"link", "add", "vcan0", "type", "vcan"}, {"link", "set", "vcan0", "up"}} {
			if out, err := exec.Command(ipCmd, args...).CombinedOutput(); err != nil {
				res <- result{skip: fmt.Sprintf("the kernel does not offer vcan here (ip %s: %v: %s); the pipe tests cover the frame handling",
					strings.Join(args, " "), err, strings.TrimSpace(string(out)))}
				return
			}
		}
		a, err := esocketcan.Dial("can", "vcan0")
		if err != nil {
			res <- result{err: err}
			return
		}
		b, err := esocketcan.Dial("can", "vcan0")
		if err != nil {
			_ = a.Close()
			res <- result{err: err}
			return
		}
		res <- result{a: a, b: b}
	}()
	r := <-res
	if r.skip != "" {
		t.Skip(r.skip)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.a, r.b
}

func TestVirtualCANInterface(t *testing.T) {
	ca, cb := vcanPair(t)
	a := New(ca, "vcan0", nil)
	defer a.Close()
	b := New(cb, "vcan0", nil)
	defer b.Close()
	got := make(chan can.Frame, 16)
	stop := b.Receive(func(f can.Frame, _ time.Time) { got <- f })
	defer stop()
	want := []can.Frame{
		frame(0x123, false, 1, 2, 3),
		frame(0x344, true, 0x00, 0x00, 0x0B, 0xB8),
		{ID: 0x7FF, Remote: true, Length: 2},
	}
	for _, f := range want {
		if err := a.Send(f); err != nil {
			t.Fatalf("Send(%+v): %v", f, err)
		}
	}
	for _, w := range want {
		select {
		case f := <-got:
			if f != w {
				t.Errorf("received %+v, want %+v", f, w)
			}
		case <-time.After(guard):
			t.Fatalf("frame %+v did not cross vcan0", w)
		}
	}
}
