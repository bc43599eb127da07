package periph

import (
	"fmt"

	pspi "periph.io/x/conn/v3/spi"

	"github.com/saint-os/saint/hal/spi"
)

// SPI is a periph SPI connection seen as a hal/spi connection. It
// implements spi.Conn.
type SPI struct {
	c    pspi.Conn
	name string
}

// NewSPI wraps c; name ("0.0" for /dev/spidev0.0) goes into error messages.
func NewSPI(c pspi.Conn, name string) *SPI { return &SPI{c: c, name: name} }

func (s *SPI) String() string { return "SPI " + s.name }

// Tx implements spi.Conn.
func (s *SPI) Tx(w, r []byte) error {
	if len(r) != 0 && len(r) != len(w) {
		return fmt.Errorf("periph: SPI %s: read buffer of %d bytes, want 0 or %d (the length of the write)", s.name, len(r), len(w))
	}
	if err := s.c.Tx(w, r); err != nil {
		return fmt.Errorf("periph: SPI %s: %w", s.name, err)
	}
	return nil
}

var _ spi.Conn = (*SPI)(nil)
