package simboard

import (
	"fmt"
	"sort"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/i2c"
)

// Scan implements board.Board. See the package doc for how each bus is
// probed. Probing moves the register pointers of the chips that answer, as
// i2cdetect does on a real bus; drivers set the pointer before every read.
func (b *Board) Scan() []board.Peripheral {
	var out []board.Peripheral
	found := map[uint16]bool{}
	probe := make([]byte, 1)
	for addr := uint16(0x03); addr <= 0x77; addr++ {
		if b.i2c1.Tx(addr, nil, probe) != nil {
			continue
		}
		found[addr] = true
		out = append(out, board.Peripheral{
			Type:        "i2c",
			Address:     i2cAddress(1, addr),
			Description: IdentifyI2C(b.i2c1, addr),
			Responsive:  true,
		})
	}
	for _, e := range b.expected {
		if !found[e.addr] {
			out = append(out, board.Peripheral{Type: "i2c", Address: i2cAddress(1, e.addr), Description: e.desc})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Address < out[j].Address })

	if b.spi00 != nil {
		r := make([]byte, 2)
		ok := b.spi00.Tx([]byte{0x80, 0x00}, r) == nil && r[1] == 0x05
		out = append(out, board.Peripheral{Type: "spi", Address: "0.0", Description: descQMI8658, Responsive: ok})
	}
	names := make([]string, 0, len(b.can))
	for n := range b.can {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, board.Peripheral{Type: "can", Address: n, Description: descCAN, Responsive: true})
	}
	if b.uartDesc != "" {
		out = append(out, board.Peripheral{Type: "uart", Address: UART, Description: b.uartDesc, Responsive: true})
	}
	if b.camera {
		out = append(out, board.Peripheral{Type: "camera", Address: "csi0", Description: descCamera, Responsive: true})
	}
	return out
}

// i2cAddress formats bus and address as the spec's PeripheralInfo does,
// "1:0x68".
func i2cAddress(bus int, addr uint16) string { return fmt.Sprintf("%d:0x%02x", bus, addr) }

// IdentifyI2C names the chip that answers at addr on bus by reading
// registers that only it would hold those values in. Each probe is a
// register-pointer write and a read, harmless to every chip tried. It
// returns "unknown device" when no probe matches.
func IdentifyI2C(bus i2c.Bus, addr uint16) string {
	switch addr {
	case 0x68, 0x69:
		if v, ok := readReg(bus, addr, 0x75, 1); ok {
			switch v[0] {
			case 0x68:
				return descMPU6050
			case 0x70:
				return "MPU6500 IMU"
			case 0x71:
				return "MPU9250 IMU"
			}
		}
	case 0x3C, 0x3D:
		// The SSD1306 cannot be read back over I²C; its address is all
		// there is to go on.
		return descSSD1306
	}
	// PCA9685: PRE_SCALE (0xFE) never reads below 3. 0x70 is its all-call
	// address, not a chip of its own.
	if addr >= 0x40 && addr <= 0x7F && addr != 0x70 {
		if v, ok := readReg(bus, addr, 0xFE, 1); ok && v[0] >= 3 {
			return descPCA9685
		}
	}
	// INA219: the configuration register reads with RST (bit 15) and the
	// unused bit 14 clear, and is non-zero in any useful configuration (zero
	// is power-down). The INA219 has no register at 0xFE, so the PCA9685
	// probe above does not mistake it (the twin reads zero there).
	if addr >= 0x40 && addr <= 0x4F {
		if v, ok := readReg(bus, addr, 0x00, 2); ok && v[0]&0xC0 == 0 && v[0]|v[1] != 0 {
			return descINA219
		}
	}
	return "unknown device"
}

func readReg(bus i2c.Bus, addr uint16, reg byte, n int) ([]byte, bool) {
	r := make([]byte, n)
	if err := bus.Tx(addr, []byte{reg}, r); err != nil {
		return nil, false
	}
	return r, true
}
