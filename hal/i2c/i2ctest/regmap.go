package i2ctest

import (
	"fmt"
	"sync"
)

// RegMap is a fake chip with 256 8-bit registers behind a register pointer,
// as most I²C sensors are laid out (MPU6050, BMP280, PCA9685 with
// auto-increment): the first byte written sets the pointer, further bytes
// are written from there, and reads continue from the pointer, which
// advances after every byte.
//
// RegMap answers only at Addr; any other address does not acknowledge. Set
// Regs before handing the bus to a driver and read it after; Err, when set,
// fails every transaction.
//
// Methods are safe for concurrent use; the fields are not guarded.
type RegMap struct {
	Addr uint16
	Regs [256]byte
	Err  error

	mu  sync.Mutex
	ptr byte
}

// Tx implements i2c.Bus.
func (d *RegMap) Tx(addr uint16, w, r []byte) error {
	if addr != d.Addr {
		return fmt.Errorf("i2ctest: no device acknowledged address 0x%02x", addr)
	}
	if d.Err != nil {
		return d.Err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w) > 0 {
		d.ptr = w[0]
		for _, b := range w[1:] {
			d.Regs[d.ptr] = b
			d.ptr++
		}
	}
	for i := range r {
		r[i] = d.Regs[d.ptr]
		d.ptr++
	}
	return nil
}
