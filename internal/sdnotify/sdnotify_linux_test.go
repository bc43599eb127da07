package sdnotify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
)

// systemdSocket is the receiving end systemd would hold: a real AF_UNIX
// datagram socket.
func systemdSocket(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// receive returns the next datagram within wait, or "" if none came.
func receive(t *testing.T, c *net.UnixConn, wait time.Duration) string {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(wait)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, maxDatagramBytes)
	n, err := c.Read(buf)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

// queued returns the datagrams already waiting on c, without waiting for
// more (non-blocking reads of the socket itself).
func queued(t *testing.T, c *net.UnixConn) []string {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	buf := make([]byte, maxDatagramBytes)
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if rerr == syscall.EAGAIN {
			return got
		}
		if rerr != nil {
			t.Fatal(rerr)
		}
		got = append(got, string(buf[:n]))
	}
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// The executor's loop sends READY=1 first and then WATCHDOG=1 once per
// period of its own clock: on a virtual clock, exactly one per simulated
// period and none in between.
func TestPetPingsOnTheExecutorsClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock := systemdSocket(t, path)
	n, err := FromEnv(env(map[string]string{"NOTIFY_SOCKET": path}))
	if err != nil || n == nil {
		t.Fatalf("FromEnv: %v, %v", n, err)
	}
	defer n.Close()
	ex := executor.New(&executor.Options{Clock: clock.NewVirtual(time.Time{})})
	const watchdog, period = 2 * time.Second, 500 * time.Millisecond
	Pet(ex, n, watchdog, nil)

	ctx := context.Background()
	if err := ex.RunFor(ctx, period-time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// READY, then at once a ping that also sets the unit's watchdog time
	// again (after an exec that extended it).
	if got := queued(t, sock); len(got) != 2 || got[0] != "READY=1" || got[1] != "WATCHDOG=1\nWATCHDOG_USEC=2000000" {
		t.Fatalf("before the first period: got %q, want READY=1 and the first ping", got)
	}
	for i := 1; i <= 20; i++ {
		if err := ex.RunFor(ctx, period); err != nil {
			t.Fatal(err)
		}
		if got := queued(t, sock); len(got) != 1 || got[0] != "WATCHDOG=1" {
			t.Fatalf("period %d: got %q, want one WATCHDOG=1", i, got)
		}
	}
}

// A callback that stalls the loop stops the pings until it returns: the
// watchdog sees the loop, not just a live process.
func TestStalledLoopStopsPings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock := systemdSocket(t, path)
	n, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ex := executor.New(nil)
	const period = 10 * time.Millisecond
	Pet(ex, n, 4*period, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	if got := receive(t, sock, 10*time.Second); got != "READY=1" {
		t.Fatalf("first notification %q, want READY=1", got)
	}
	if got := receive(t, sock, 10*time.Second); got != "WATCHDOG=1\nWATCHDOG_USEC=40000" {
		t.Fatalf("second notification %q, want the first ping with the watchdog time", got)
	}
	for i := 0; i < 3; i++ {
		if got := receive(t, sock, 10*time.Second); got != "WATCHDOG=1" {
			t.Fatalf("ping %d: %q, want WATCHDOG=1", i, got)
		}
	}

	stalled, release := make(chan struct{}), make(chan struct{})
	ex.Post(func() {
		close(stalled)
		<-release
	})
	<-stalled
	// Every ping sent before the stall is queued by now (a send completes
	// on the loop before the loop runs anything else); none may follow
	// while the loop is stuck, over many periods.
	queued(t, sock)
	if got := receive(t, sock, 30*period); got != "" {
		t.Fatalf("the loop is stalled but systemd got %q", got)
	}
	close(release)
	if got := receive(t, sock, 10*time.Second); got != "WATCHDOG=1" {
		t.Fatalf("after the stall: %q, want WATCHDOG=1 again", got)
	}
}

// $NOTIFY_SOCKET may name an abstract socket ('@' for the leading NUL), as
// systemd's own socket for user services and containers often is.
func TestAbstractSocket(t *testing.T) {
	name := fmt.Sprintf("@saint-sdnotify-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	sock := systemdSocket(t, name)
	n, err := FromEnv(env(map[string]string{"NOTIFY_SOCKET": name}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Ready(); err != nil {
		t.Fatal(err)
	}
	if err := n.Notify("STATUS=adopted as head\nWATCHDOG=1"); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, sock); len(got) != 2 || got[0] != "READY=1" || got[1] != "STATUS=adopted as head\nWATCHDOG=1" {
		t.Fatalf("got %q", got)
	}
}

// A socket nobody reads fills up; a notification then fails at once with
// ErrDropped rather than blocking the control loop that sends it.
func TestFullSocketDropsInsteadOfBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	systemdSocket(t, path)
	n, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for i := 0; ; i++ {
		err := n.Watchdog()
		if errors.Is(err, ErrDropped) {
			break
		}
		if err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
		if i > 100000 {
			t.Fatal("the socket never filled")
		}
	}
}

func TestNoSocketNoNotifier(t *testing.T) {
	n, err := FromEnv(env(nil))
	if n != nil || err != nil {
		t.Fatalf("without NOTIFY_SOCKET: %v, %v; want neither", n, err)
	}
	if _, err := New("relative/notify"); err == nil {
		t.Error("a relative socket path was accepted")
	}
	n, err = New(filepath.Join(t.TempDir(), "nobody-listens"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Ready(); err == nil {
		t.Error("READY=1 to a socket nobody bound reported success")
	}
	n.Close()
	if err := n.Ready(); err == nil {
		t.Error("a closed notifier reported success")
	}
}

func TestWatchdogTime(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		want    time.Duration
		on, bad bool
	}{
		{env: nil},
		{env: map[string]string{"WATCHDOG_USEC": "2000000"}, want: 2 * time.Second, on: true},
		{env: map[string]string{"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "42"}, want: 2 * time.Second, on: true},
		{env: map[string]string{"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "43"}},
		{env: map[string]string{"WATCHDOG_USEC": "2s"}, bad: true},
		{env: map[string]string{"WATCHDOG_USEC": "0"}, bad: true},
		{env: map[string]string{"WATCHDOG_USEC": "1", "WATCHDOG_PID": "me"}, bad: true},
	} {
		got, on, err := WatchdogTime(env(tc.env), 42)
		if (err != nil) != tc.bad || got != tc.want || on != tc.on {
			t.Errorf("%v: got %v %v %v, want %v %v error %v", tc.env, got, on, err, tc.want, tc.on, tc.bad)
		}
	}
	if p := PingPeriod(2 * time.Second); p != 500*time.Millisecond {
		t.Errorf("PingPeriod(2s) = %v, want 500ms", p)
	}
}

// Service reads the unit's settings from the environment: READY=1 and
// pings at a quarter of WatchdogSec, STOPPING=1 at the end.
func TestService(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock := systemdSocket(t, path)
	ex := executor.New(&executor.Options{Clock: clock.NewVirtual(time.Time{})})
	stop, err := Service(ex, env(map[string]string{"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "7"}), 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), 1100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	stop()
	want := []string{"READY=1", "WATCHDOG=1\nWATCHDOG_USEC=2000000", "WATCHDOG=1", "WATCHDOG=1", "STOPPING=1"}
	if got := queued(t, sock); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := Service(ex, env(map[string]string{"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "soon"}), 7, nil); err == nil {
		t.Error("a malformed WATCHDOG_USEC was accepted")
	}
}

// SetWatchdogTime is systemd's WATCHDOG_USEC=, in microseconds.
func TestSetWatchdogTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock := systemdSocket(t, path)
	n, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.SetWatchdogTime(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, sock); len(got) != 1 || got[0] != "WATCHDOG_USEC=30000000" {
		t.Fatalf("got %q", got)
	}
	var none *Notifier
	stop, err := none.Start(executor.NewVirtual(), env(nil), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop()
}
