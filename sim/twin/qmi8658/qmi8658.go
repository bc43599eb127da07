package qmi8658

import (
	"errors"
	"sync"

	"github.com/saint-os/saint/hal/spi"
)

// Register addresses.
const (
	RegWhoAmI     = 0x00
	RegRevisionID = 0x01
	RegCtrl1      = 0x02
	RegCtrl9      = 0x0A
	RegReset      = 0x60
)

// Identification values.
const (
	WhoAmI     = 0x05
	RevisionID = 0x7C
)

const (
	readBit  = 0x80
	ctrl1AI  = 0x40
	ctrl1Rst = 0x20
	resetCmd = 0xB0 // written to RegReset: soft reset
)

// Device is a QMI8658 twin on one chip select. It implements spi.Conn. The
// zero value is not usable; call New. Methods are safe for concurrent use.
type Device struct {
	mu   sync.Mutex
	regs [128]byte
}

// New returns a chip just powered on.
func New() *Device {
	d := &Device{}
	d.reset()
	return d
}

func (d *Device) reset() {
	d.regs = [128]byte{}
	d.regs[RegWhoAmI] = WhoAmI
	d.regs[RegRevisionID] = RevisionID
	d.regs[RegCtrl1] = ctrl1Rst
}

// Tx implements spi.Conn. r is 0 or len(w) long; its first byte, clocked in
// while the address went out, is 0.
func (d *Device) Tx(w, r []byte) error {
	if len(r) != 0 && len(r) != len(w) {
		return errors.New("qmi8658: read and write lengths differ")
	}
	if len(w) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	addr := w[0] &^ readBit
	read := w[0]&readBit != 0
	if len(r) > 0 {
		r[0] = 0
	}
	for i := 1; i < len(w); i++ {
		if read {
			if len(r) > 0 {
				r[i] = d.regs[addr]
			}
		} else {
			d.write(addr, w[i])
		}
		if d.regs[RegCtrl1]&ctrl1AI != 0 {
			addr = (addr + 1) &^ readBit
		}
	}
	return nil
}

func (d *Device) write(addr, v byte) {
	switch {
	case addr >= RegCtrl1 && addr <= RegCtrl9:
		d.regs[addr] = v
	case addr == RegReset && v == resetCmd:
		d.reset()
	}
}

// Reg returns register addr.
func (d *Device) Reg(addr byte) byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[addr&^readBit]
}

var _ spi.Conn = (*Device)(nil)
