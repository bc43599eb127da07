package sdnotify

import (
	"fmt"
	"sync"
	"syscall"
)

// Notifier sends notifications to systemd from an unconnected, non-blocking
// datagram socket, addressing each one as libsystemd does, so that a
// systemd that re-executed itself (and recreated its socket) still hears
// the next one. Safe for concurrent use.
type Notifier struct {
	addr *syscall.SockaddrUnix

	mu sync.Mutex
	fd int // -1 once closed
}

// New returns a notifier for the AF_UNIX datagram socket at path; a path
// starting with '@' names an abstract socket.
func New(path string) (*Notifier, error) {
	if path == "" || (path[0] != '/' && path[0] != '@') {
		return nil, fmt.Errorf("sdnotify: socket %q: want an absolute path or an abstract name starting with '@'", path)
	}
	// Close-on-exec: a firmware update execs another image in this process,
	// and that image opens its own.
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("sdnotify: socket: %w", err)
	}
	// syscall turns a leading '@' into the NUL of an abstract name.
	return &Notifier{addr: &syscall.SockaddrUnix{Name: path}, fd: fd}, nil
}

func (n *Notifier) send(b []byte) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd < 0 {
		return fmt.Errorf("sdnotify: %w", syscall.EBADF)
	}
	err := syscall.Sendto(n.fd, b, syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, n.addr)
	switch err {
	case nil:
		return nil
	case syscall.EAGAIN:
		return ErrDropped
	}
	return fmt.Errorf("sdnotify: send to %s: %w", n.addr.Name, err)
}

// Close closes the socket. Notifications after it fail.
func (n *Notifier) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd < 0 {
		return nil
	}
	err := syscall.Close(n.fd)
	n.fd = -1
	return err
}
