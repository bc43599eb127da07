package serial

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// slaveTermios returns the line settings the slave holds; on Linux the
// master's termios ioctls act on the slave.
func slaveTermios(t *testing.T, m *os.File) *unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(m.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("TCGETS: %v", err)
	}
	return tio
}

// slaveSpeed returns the slave's output speed as TCGETS2 reports it.
func slaveSpeed(t *testing.T, m *os.File) uint32 {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(m.Fd()), unix.TCGETS2)
	if err != nil {
		t.Fatalf("TCGETS2: %v", err)
	}
	return tio.Ospeed
}
