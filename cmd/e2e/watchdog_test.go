package e2e

import (
	"errors"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// notifySocket is the receiving end of systemd's notification socket, as
// systemd holds it for a Type=notify unit.
type notifySocket struct {
	t *testing.T
	c *net.UnixConn
}

func newNotifySocket(t *testing.T, path string) *notifySocket {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &notifySocket{t: t, c: c}
}

// next returns the next notification within wait, "" if none came.
func (s *notifySocket) next(wait time.Duration) string {
	s.t.Helper()
	if err := s.c.SetReadDeadline(time.Now().Add(wait)); err != nil {
		s.t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := s.c.Read(buf)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ""
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return string(buf[:n])
}

// expect waits for notification want, skipping others (STATUS and the like).
func (s *notifySocket) expect(want string, wait time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if got := s.next(time.Until(deadline)); got == want {
			return
		}
	}
	s.t.Fatalf("no %s within %v", want, wait)
}

// drain reads what is already queued.
func (s *notifySocket) drain() {
	for s.next(time.Millisecond) != "" {
	}
}

// Real processes under systemd's notification protocol, with its
// environment (NOTIFY_SOCKET, WATCHDOG_USEC): saint-server and saint-node
// say READY=1 and then ping the watchdog; a node whose loop is stopped
// (SIGSTOP) stops pinging, and pings again once it runs (SIGCONT). What
// systemd then does (the kill, ExecStopPost, the restart) is its own, with
// the units in deploy/systemd.
func TestWatchdogPingsComeFromTheRunningLoop(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	const watchdog = 400 * time.Millisecond // pings every 100 ms
	t.Setenv("WATCHDOG_USEC", "400000")

	serverSock := newNotifySocket(t, filepath.Join(root, "server-notify"))
	t.Setenv("NOTIFY_SOCKET", filepath.Join(root, "server-notify"))
	s := newServer(t, root)
	serverSock.expect("READY=1", 20*time.Second)
	serverSock.expect("WATCHDOG=1", 20*time.Second)

	nodeSock := newNotifySocket(t, filepath.Join(root, "node-notify"))
	t.Setenv("NOTIFY_SOCKET", filepath.Join(root, "node-notify"))
	n := newNode(t, root, "sim-watchdog", "tracks", s)
	nodeSock.expect("READY=1", 30*time.Second)
	nodeSock.expect("WATCHDOG=1", 10*time.Second)

	if err := n.cur.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// A ping sent as the signal arrived may still be queued; after that,
	// nothing for many watchdog times.
	nodeSock.drain()
	if got := nodeSock.next(5 * watchdog); got != "" {
		t.Fatalf("the node is stopped but systemd got %q", got)
	}
	if err := n.cur.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	nodeSock.expect("WATCHDOG=1", 10*time.Second)
	// The server was never stopped: it kept pinging throughout.
	serverSock.drain()
	serverSock.expect("WATCHDOG=1", 10*time.Second)
}
