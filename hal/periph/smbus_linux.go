//go:build linux

package periph

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctl requests of i2c-dev (include/uapi/linux/i2c-dev.h).
const (
	ioctlI2CSlave = 0x0703
	ioctlI2CFuncs = 0x0705
	ioctlI2CSMBus = 0x0720
)

// smbusIoctlData is struct i2c_smbus_ioctl_data; Go lays it out as C does
// on 64-bit and 32-bit Linux.
type smbusIoctlData struct {
	readWrite uint8
	command   uint8
	size      uint32
	data      *[smbusDataBlockSize]byte
}

// devSMBus is /dev/i2c-N driven with the I2C_SMBUS ioctl.
type devSMBus struct {
	f   *os.File
	buf *[smbusDataBlockSize]byte // on the heap, where the kernel may write it
}

func (d *devSMBus) ioctl(req uintptr, arg uintptr) error {
	rc, err := d.f.SyscallConn()
	if err != nil {
		return err
	}
	var errno unix.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, req, arg)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

func (d *devSMBus) setAddr(addr uint16) error {
	if err := d.ioctl(ioctlI2CSlave, uintptr(addr)); err != nil {
		return fmt.Errorf("I2C_SLAVE: %w", err)
	}
	return nil
}

func (d *devSMBus) xfer(readWrite, command uint8, size uint32, data *[smbusDataBlockSize]byte) error {
	*d.buf = *data
	// On the heap, as buf is: a goroutine's stack can move while the
	// kernel holds the address.
	arg := &smbusIoctlData{readWrite: readWrite, command: command, size: size, data: d.buf}
	err := d.ioctl(ioctlI2CSMBus, uintptr(unsafe.Pointer(arg)))
	runtime.KeepAlive(arg)
	if err != nil {
		return fmt.Errorf("I2C_SMBUS: %w", err)
	}
	*data = *d.buf
	return nil
}

// openSMBus opens /dev/i2c-<bus> as an SMBus when its adapter moves only
// SMBus transfers. It returns nil, nil when the adapter does plain I²C
// (periph's I2C_RDWR path serves it then).
func openSMBus(bus int, name string) (*SMBus, func() error, error) {
	path := fmt.Sprintf("/dev/i2c-%d", bus)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	d := &devSMBus{f: f, buf: new([smbusDataBlockSize]byte)}
	funcs := new(uint) // unsigned long
	if err := d.ioctl(ioctlI2CFuncs, uintptr(unsafe.Pointer(funcs))); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%s: I2C_FUNCS: %w", path, err)
	}
	if *funcs&funcI2C != 0 {
		_ = f.Close()
		return nil, nil, nil
	}
	return newSMBus(d, name, uint64(*funcs)), f.Close, nil
}
