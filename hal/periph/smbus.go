package periph

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// SMBus transfers of the Linux i2c-dev interface (include/uapi/linux/i2c.h):
// the size codes and the functionality bits an adapter reports for them.
const (
	smbusRead  = 1
	smbusWrite = 0

	smbusQuick         = 0
	smbusByte          = 1
	smbusByteData      = 2
	smbusWordData      = 3
	smbusI2CBlockData  = 8
	smbusBlockMax      = 32
	funcI2C            = 0x00000001
	funcQuick          = 0x00010000
	funcReadByte       = 0x00020000
	funcWriteByte      = 0x00040000
	funcReadByteData   = 0x00080000
	funcWriteByteData  = 0x00100000
	funcReadWordData   = 0x00200000
	funcWriteWordData  = 0x00400000
	funcReadI2CBlock   = 0x04000000
	funcWriteI2CBlock  = 0x08000000
	smbusDataBlockSize = smbusBlockMax + 2
)

// smbusAdapter is the kernel's side of an SMBus-only adapter: select the
// device, run one transfer. data is the kernel's union i2c_smbus_data: a
// byte in data[0], a word in data[0:2] in the machine's byte order, a block
// as a length byte then the bytes.
type smbusAdapter interface {
	setAddr(addr uint16) error
	xfer(readWrite, command uint8, size uint32, data *[smbusDataBlockSize]byte) error
}

// SMBus is an I²C bus whose adapter moves only SMBus transfers (a PC's
// SMBus controller, the kernel's i2c-stub), seen as a hal/i2c bus: each
// transaction a register-based chip makes is carried by the SMBus transfer
// that puts the same bytes on the wire. It implements i2c.Bus.
//
//	written, read         SMBus transfer
//	0, 0                  quick (write)
//	0, 1                  receive byte
//	1, 0                  send byte
//	1, 1                  read byte data
//	1, 2                  read word data (wire order kept: r[0] is the first byte)
//	1, 3–32               read I²C block data
//	2, 0                  write byte data
//	3, 0                  write word data (wire order kept)
//	4–33, 0               write I²C block data
//
// Any other shape (a 16-bit register address followed by a read, a read
// longer than 32 bytes) has no SMBus transfer and is refused with an error
// naming the bus and the shape. Methods are safe for concurrent use.
type SMBus struct {
	name  string
	k     smbusAdapter
	funcs uint64

	mu   sync.Mutex // one transfer at a time; the address is per descriptor
	addr int        // selected device, -1 before the first transfer
}

func newSMBus(k smbusAdapter, name string, funcs uint64) *SMBus {
	return &SMBus{name: name, k: k, funcs: funcs, addr: -1}
}

func (b *SMBus) String() string { return "I²C bus " + b.name + " (SMBus)" }

// Tx implements i2c.Bus.
func (b *SMBus) Tx(addr uint16, w, r []byte) error {
	if addr > 0x7F {
		return fmt.Errorf("periph: I²C bus %s: address %#x, want a 7-bit address (0x00–0x7f)", b.name, addr)
	}
	if err := b.tx(addr, w, r); err != nil {
		return fmt.Errorf("periph: I²C bus %s: device %#02x: %w", b.name, addr, err)
	}
	return nil
}

func (b *SMBus) tx(addr uint16, w, r []byte) error {
	var (
		rw, cmd uint8
		size    uint32
		need    uint64
		data    [smbusDataBlockSize]byte
	)
	switch {
	case len(w) == 0 && len(r) == 0:
		rw, size, need = smbusWrite, smbusQuick, funcQuick
	case len(w) == 0 && len(r) == 1:
		rw, size, need = smbusRead, smbusByte, funcReadByte
	case len(w) == 1 && len(r) == 0:
		rw, cmd, size, need = smbusWrite, w[0], smbusByte, funcWriteByte
	case len(w) == 1 && len(r) == 1:
		rw, cmd, size, need = smbusRead, w[0], smbusByteData, funcReadByteData
	case len(w) == 1 && len(r) == 2:
		rw, cmd, size, need = smbusRead, w[0], smbusWordData, funcReadWordData
	case len(w) == 1 && len(r) <= smbusBlockMax:
		rw, cmd, size, need = smbusRead, w[0], smbusI2CBlockData, funcReadI2CBlock
		data[0] = byte(len(r))
	case len(w) == 2 && len(r) == 0:
		rw, cmd, size, need = smbusWrite, w[0], smbusByteData, funcWriteByteData
		data[0] = w[1]
	case len(w) == 3 && len(r) == 0:
		// The first byte after the command is the word's low byte on the
		// wire, as SMBus sends words.
		rw, cmd, size, need = smbusWrite, w[0], smbusWordData, funcWriteWordData
		binary.NativeEndian.PutUint16(data[:2], uint16(w[1])|uint16(w[2])<<8)
	case len(w) >= 4 && len(w) <= smbusBlockMax+1 && len(r) == 0:
		rw, cmd, size, need = smbusWrite, w[0], smbusI2CBlockData, funcWriteI2CBlock
		data[0] = byte(len(w) - 1)
		copy(data[1:], w[1:])
	default:
		return fmt.Errorf("writing %d bytes then reading %d is not an SMBus transfer, and the adapter offers only SMBus (functionality %#x)", len(w), len(r), b.funcs)
	}
	if b.funcs&need == 0 {
		return fmt.Errorf("the adapter does not offer the SMBus transfer for writing %d bytes then reading %d (functionality %#x, want bit %#x)", len(w), len(r), b.funcs, need)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addr != int(addr) {
		if err := b.k.setAddr(addr); err != nil {
			b.addr = -1
			return err
		}
		b.addr = int(addr)
	}
	if err := b.k.xfer(rw, cmd, size, &data); err != nil {
		return err
	}
	switch size {
	case smbusByte, smbusByteData:
		if rw == smbusRead {
			r[0] = data[0]
		}
	case smbusWordData:
		if rw == smbusRead {
			v := binary.NativeEndian.Uint16(data[:2])
			r[0], r[1] = byte(v), byte(v>>8)
		}
	case smbusI2CBlockData:
		if rw == smbusRead {
			if int(data[0]) != len(r) {
				return fmt.Errorf("SMBus block read of %d bytes returned %d", len(r), data[0])
			}
			copy(r, data[1:1+len(r)])
		}
	}
	return nil
}
