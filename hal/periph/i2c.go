package periph

import (
	"fmt"

	pi2c "periph.io/x/conn/v3/i2c"

	"github.com/saint-os/saint/hal/i2c"
)

// I2C is a periph I²C bus seen as a hal/i2c bus. It implements i2c.Bus.
type I2C struct {
	b    pi2c.Bus
	name string
}

// NewI2C wraps b; name ("1" for /dev/i2c-1) goes into error messages.
func NewI2C(b pi2c.Bus, name string) *I2C { return &I2C{b: b, name: name} }

func (b *I2C) String() string { return "I²C bus " + b.name }

// Tx implements i2c.Bus. Addresses above 0x7F are refused: the HAL speaks
// 7-bit addresses only, and periph would take them as 10-bit.
func (b *I2C) Tx(addr uint16, w, r []byte) error {
	if addr > 0x7F {
		return fmt.Errorf("periph: I²C bus %s: address %#x, want a 7-bit address (0x00–0x7f)", b.name, addr)
	}
	if err := b.b.Tx(addr, w, r); err != nil {
		return fmt.Errorf("periph: I²C bus %s: device %#02x: %w", b.name, addr, err)
	}
	return nil
}

var _ i2c.Bus = (*I2C)(nil)
