package periph

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/saint-os/saint/hal/device/ina219"
)

// stubChip models the kernel's i2c-stub (drivers/i2c/i2c-stub.c) at one
// address: 256 16-bit registers, byte transfers on their low byte, a word
// transfer on the whole register with the low byte first on the wire, I²C
// block transfers on consecutive registers' low bytes, and a pointer that
// byte writes set and byte reads advance.
type stubChip struct {
	addr    uint16
	words   [256]uint16
	pointer uint8
	sel     uint16
	selects int
	quick   int
}

func (s *stubChip) setAddr(addr uint16) error {
	s.sel = addr
	s.selects++
	return nil
}

func (s *stubChip) xfer(rw, cmd uint8, size uint32, data *[smbusDataBlockSize]byte) error {
	if s.sel != s.addr {
		return errors.New("no such device or address")
	}
	switch size {
	case smbusQuick:
		s.quick++
	case smbusByte:
		if rw == smbusWrite {
			s.pointer = cmd
		} else {
			data[0] = byte(s.words[s.pointer])
			s.pointer++
		}
	case smbusByteData:
		if rw == smbusWrite {
			s.words[cmd] = s.words[cmd]&0xFF00 | uint16(data[0])
		} else {
			data[0] = byte(s.words[cmd])
		}
		s.pointer = cmd + 1
	case smbusWordData:
		if rw == smbusWrite {
			s.words[cmd] = binary.NativeEndian.Uint16(data[:2])
		} else {
			binary.NativeEndian.PutUint16(data[:2], s.words[cmd])
		}
	case smbusI2CBlockData:
		n := int(data[0])
		for i := 0; i < n; i++ {
			r := uint8(int(cmd) + i)
			if rw == smbusWrite {
				s.words[r] = s.words[r]&0xFF00 | uint16(data[1+i])
			} else {
				data[1+i] = byte(s.words[r])
			}
		}
	default:
		return errors.New("operation not supported")
	}
	return nil
}

// stubFuncs is what i2c-stub reports: SMBus quick, byte, byte data, word
// data, block data and I²C block transfers, no plain I²C.
const stubFuncs = funcQuick | funcReadByte | funcWriteByte | funcReadByteData | funcWriteByteData |
	funcReadWordData | funcWriteWordData | 0x03000000 | funcReadI2CBlock | funcWriteI2CBlock

func TestSMBusCarriesRegisterTransactions(t *testing.T) {
	chip := &stubChip{addr: 0x40}
	b := newSMBus(chip, "0", stubFuncs)

	// A 16-bit register written MSB first (an INA219's configuration):
	// the chip sees 0x39 then 0x9F on the wire, SMBus's low byte then
	// high byte of the word.
	if err := b.Tx(0x40, []byte{0x00, 0x39, 0x9F}, nil); err != nil {
		t.Fatal(err)
	}
	if chip.words[0] != 0x9F39 {
		t.Errorf("word register 0 = %#04x, want 0x9f39 (0x39 first on the wire)", chip.words[0])
	}
	r := make([]byte, 2)
	if err := b.Tx(0x40, []byte{0x00}, r); err != nil {
		t.Fatal(err)
	}
	if r[0] != 0x39 || r[1] != 0x9F {
		t.Errorf("word read % x, want 39 9f in wire order", r)
	}

	// Byte data, send byte then receive byte.
	if err := b.Tx(0x40, []byte{0x10, 0xAB}, nil); err != nil {
		t.Fatal(err)
	}
	one := make([]byte, 1)
	if err := b.Tx(0x40, []byte{0x10}, one); err != nil || one[0] != 0xAB {
		t.Errorf("byte data read %#x, %v, want 0xab", one[0], err)
	}
	if err := b.Tx(0x40, []byte{0x10}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Tx(0x40, nil, one); err != nil || one[0] != 0xAB {
		t.Errorf("receive byte after pointing at 0x10 = %#x, %v, want 0xab", one[0], err)
	}

	// I²C block write and read.
	if err := b.Tx(0x40, []byte{0x20, 1, 2, 3, 4, 5}, nil); err != nil {
		t.Fatal(err)
	}
	five := make([]byte, 5)
	if err := b.Tx(0x40, []byte{0x20}, five); err != nil || string(five) != "\x01\x02\x03\x04\x05" {
		t.Errorf("block read % x, %v, want 01…05", five, err)
	}

	// A quick write probes the address.
	if err := b.Tx(0x40, nil, nil); err != nil || chip.quick != 1 {
		t.Errorf("quick write: %v, %d quick transfers, want 1", err, chip.quick)
	}
	// The address is selected once, not per transfer.
	if chip.selects != 1 {
		t.Errorf("address selected %d times, want once", chip.selects)
	}
}

func TestSMBusRefusesWhatItCannotCarry(t *testing.T) {
	chip := &stubChip{addr: 0x50}
	b := newSMBus(chip, "3", stubFuncs)
	for _, tc := range []struct {
		w    []byte
		r    int
		want string
	}{
		{[]byte{0x00, 0x10}, 4, "writing 2 bytes then reading 4 is not an SMBus transfer"}, // a 16-bit EEPROM address
		{[]byte{0x00}, 33, "reading 33"},
		{make([]byte, 34), 0, "writing 34"},
	} {
		err := b.Tx(0x50, tc.w, make([]byte, tc.r))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bus 3") {
			t.Errorf("Tx(%d written, %d read) = %v, want an error naming bus 3 and %q", len(tc.w), tc.r, err, tc.want)
		}
	}
	if err := b.Tx(0x80, nil, nil); err == nil || !strings.Contains(err.Error(), "7-bit") {
		t.Errorf("Tx(0x80) = %v, want a 7-bit address error", err)
	}
	// An adapter without word transfers refuses a word read by name.
	byteOnly := newSMBus(chip, "3", funcReadByteData|funcWriteByteData)
	if err := byteOnly.Tx(0x50, []byte{0x00}, make([]byte, 2)); err == nil || !strings.Contains(err.Error(), "does not offer") {
		t.Errorf("word read on a byte-only adapter = %v, want an error saying the adapter does not offer it", err)
	}
	// A device that is not there: the kernel's error, with the address.
	if err := b.Tx(0x51, []byte{0}, make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "0x51") || !strings.Contains(err.Error(), "no such device") {
		t.Errorf("Tx to an absent device = %v, want the kernel's error naming 0x51", err)
	}
	// The refused transactions never reached the adapter: only 0x51 was
	// selected.
	if chip.selects != 1 || chip.sel != 0x51 {
		t.Errorf("%d address selections, last %#x, want one, 0x51", chip.selects, chip.sel)
	}
}

// TestINA219OverSMBus runs the INA219 driver on an SMBus-only adapter with
// the chip's registers preset as SMBus words: it writes its configuration
// and calibration and reads the measurements in the chip's MSB-first order.
func TestINA219OverSMBus(t *testing.T) {
	chip := &stubChip{addr: ina219.DefaultAddr}
	wire := func(v uint16) uint16 { return v>>8 | v<<8 } // MSB first on the wire
	chip.words[0x01] = wire(5000)                        // shunt 50.00 mV
	chip.words[0x02] = wire(3000<<3 | 2)                 // bus 12.000 V, CNVR
	chip.words[0x04] = wire(5119)                        // current
	chip.words[0x03] = wire(3071)                        // power
	d, err := ina219.New(newSMBus(chip, "0", stubFuncs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := wire(chip.words[0x05]); got != d.Calibration() {
		t.Errorf("calibration register %#04x, want %#04x", got, d.Calibration())
	}
	r, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-9
	if r.BusVoltage < 12-tol || r.BusVoltage > 12+tol || !r.Ready {
		t.Errorf("bus %v V ready %v, want 12 V ready", r.BusVoltage, r.Ready)
	}
	if r.ShuntVoltage < 0.05-tol || r.ShuntVoltage > 0.05+tol {
		t.Errorf("shunt %v V, want 0.05", r.ShuntVoltage)
	}
	if want := 5119 * d.CurrentLSB(); r.Current < want-tol || r.Current > want+tol {
		t.Errorf("current %v A, want %v", r.Current, want)
	}
}
