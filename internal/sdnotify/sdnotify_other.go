//go:build !linux

package sdnotify

// Notifier is systemd's notification socket; systemd runs only on Linux.
type Notifier struct{}

// New returns ErrUnsupported: systemd runs only on Linux.
func New(path string) (*Notifier, error) { return nil, ErrUnsupported }

func (n *Notifier) send([]byte) error { return ErrUnsupported }

// Close does nothing.
func (n *Notifier) Close() error { return nil }
