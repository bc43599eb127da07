package simboard

import (
	"fmt"
	"sort"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/device/i2cid"
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
			Description: i2cid.Identify(b.i2c1, addr),
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
		out = append(out, board.Peripheral{Type: "can", Address: n, Description: b.canDesc, Responsive: true})
	}
	if b.uartDesc != "" {
		out = append(out, board.Peripheral{Type: "uart", Address: UART, Description: b.uartDesc, Responsive: true})
	}
	if b.camera {
		out = append(out, board.Peripheral{Type: "camera", Address: "csi0", Description: descCamera, Responsive: true})
	}
	return out
}

// i2cAddress formats bus and address as msg.PeripheralInfo carries them,
// "1:0x68".
func i2cAddress(bus int, addr uint16) string { return fmt.Sprintf("%d:0x%02x", bus, addr) }
