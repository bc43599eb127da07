package serial

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal and returns its master and the path of
// its slave, the device a Port opens.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here (/dev/ptmx: %v)", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	return m, "/dev/pts/" + strconv.Itoa(n)
}

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
